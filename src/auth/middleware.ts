// Who is calling: every /api route but the login, setup and "me" routes
// needs an operator, from the session cookie (browsers) or a Bearer token
// (scripts: NOMOS_API_TOKEN, or a token from POST /api/tokens). Sets
// c.var.operator and c.var.actor ("operator:<username>"), the actor every
// decision is audited under. Invariant: nothing reaches a protected handler
// without one, and a bad token is a 401, never a fallthrough.
import { timingSafeEqual } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import { HttpError } from "../http/http-error.js";
import { operatorLoginResolve } from "./logins.js";

export const SESSION_COOKIE = "nomos_session";

export interface AuthVariables {
  operator: { id: string | null; username: string };
  actor: string;
  authVia: "cookie" | "bearer";
}

export type AuthEnv = { Variables: AuthVariables };

const API_TOKEN_USER = "api-token";

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function bearerToken(c: Context): string | undefined {
  const header = c.req.header("authorization");
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw new HttpError("unauthorized", "the Authorization header must read 'Bearer <token>'");
  return m[1];
}

export async function identify(c: Context, deps: { db: Kysely<Database>; apiToken?: string }): Promise<AuthVariables | undefined> {
  const bearer = bearerToken(c);
  if (bearer !== undefined) {
    if (deps.apiToken && sameSecret(bearer, deps.apiToken)) {
      return { operator: { id: null, username: API_TOKEN_USER }, actor: `operator:${API_TOKEN_USER}`, authVia: "bearer" };
    }
    const op = await operatorLoginResolve(deps.db, { token: bearer });
    if (!op) throw new HttpError("unauthorized", "the bearer token is unknown or expired");
    return { operator: op, actor: `operator:${op.username}`, authVia: "bearer" };
  }
  const cookie = getCookie(c, SESSION_COOKIE);
  if (!cookie) return undefined;
  const op = await operatorLoginResolve(deps.db, { token: cookie });
  if (!op) return undefined;
  return { operator: op, actor: `operator:${op.username}`, authVia: "cookie" };
}

export function requireOperator(deps: { db: Kysely<Database>; apiToken?: string }): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const who = await identify(c, deps);
    if (!who) throw new HttpError("unauthorized", "log in first (POST /api/login) or send Authorization: Bearer <token>");
    c.set("operator", who.operator);
    c.set("actor", who.actor);
    c.set("authVia", who.authVia);
    await next();
  };
}

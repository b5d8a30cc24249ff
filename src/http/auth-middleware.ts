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
import { operatorLoginResolve } from "../auth/logins.js";
import { API_TOKEN_USERNAME } from "../auth/operators.js";
import { throttleBlockedFor, throttleFailureRecord } from "../auth/throttle.js";
import type { Database, OperatorRole } from "../db/schema.js";
import { HttpError } from "./http-error.js";
import { clientAddress, type PublicOrigin, publicOriginFrom } from "./public-origin.js";

export const SESSION_COOKIE = "nomos_session";

export interface AuthVariables {
  operator: { id: string | null; username: string; role: OperatorRole };
  actor: string;
  authVia: "cookie" | "bearer";
}

export type AuthEnv = { Variables: AuthVariables };

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

export interface IdentifyDeps {
  db: Kysely<Database>;
  apiToken?: string;
  publicOrigin?: PublicOrigin;
}

const DEFAULT_ORIGIN = publicOriginFrom({ host: "127.0.0.1", port: 8080 });

export async function identify(c: Context, deps: IdentifyDeps): Promise<AuthVariables | undefined> {
  const bearer = bearerToken(c);
  if (bearer !== undefined) {
    // Wrong tokens are throttled per source (src/auth/throttle.ts): checked
    // before the token, counted after a miss. A token is 256 random bits, so
    // this only keeps a guesser from using us as a free oracle.
    const key = `bearer:${clientAddress(c, deps.publicOrigin ?? DEFAULT_ORIGIN)}`;
    const { retryAfterS } = await throttleBlockedFor(deps.db, { key });
    if (retryAfterS > 0) {
      c.header("Retry-After", String(retryAfterS));
      throw new HttpError("too_many_requests", `too many wrong bearer tokens from this address; try again in ${retryAfterS} s`);
    }
    // NOMOS_API_TOKEN is the deployer's own: whoever set the environment is an admin.
    if (deps.apiToken && sameSecret(bearer, deps.apiToken)) {
      return {
        operator: { id: null, username: API_TOKEN_USERNAME, role: "admin" },
        actor: `operator:${API_TOKEN_USERNAME}`,
        authVia: "bearer",
      };
    }
    const op = await operatorLoginResolve(deps.db, { token: bearer });
    if (!op) {
      await throttleFailureRecord(deps.db, { key });
      throw new HttpError("unauthorized", "the bearer token is unknown or expired");
    }
    return { operator: op, actor: `operator:${op.username}`, authVia: "bearer" };
  }
  const cookie = getCookie(c, SESSION_COOKIE);
  if (!cookie) return undefined;
  const op = await operatorLoginResolve(deps.db, { token: cookie });
  if (!op) return undefined;
  return { operator: op, actor: `operator:${op.username}`, authVia: "cookie" };
}

export function requireOperator(deps: IdentifyDeps): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const who = await identify(c, deps);
    if (!who) throw new HttpError("unauthorized", "log in first (POST /api/login) or send Authorization: Bearer <token>");
    c.set("operator", who.operator);
    c.set("actor", who.actor);
    c.set("authVia", who.authVia);
    await next();
  };
}

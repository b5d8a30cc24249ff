// The role check of the HTTP layer. Invariant: every /api route that needs
// more than a login says so with requireRole (tests/roles.test.ts walks
// app.routes and fails on a route it has no expectation for), and a refusal
// is a 403 naming the role needed and the role held. The roles and their
// order are auth/roles.ts's.
import type { MiddlewareHandler } from "hono";
import { roleAtLeast } from "../auth/roles.js";
import type { OperatorRole } from "../db/schema.js";
import type { AuthEnv } from "./auth-middleware.js";
import { HttpError } from "./http-error.js";

export function roleRefusal(held: OperatorRole, needed: OperatorRole, what: string): HttpError {
  return new HttpError("forbidden", `${what} needs the ${needed} role; you are ${/^[aeiou]/.test(held) ? "an" : "a"} ${held}`);
}

/** Refuses the request with 403 unless the operator holds `needed` (or more). */
export function requireRole(needed: OperatorRole, what = "this"): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const held = c.get("operator").role;
    if (!roleAtLeast(held, needed)) throw roleRefusal(held, needed, what);
    await next();
  };
}

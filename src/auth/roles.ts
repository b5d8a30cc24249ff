// Operator roles, ordered: viewer < operator < admin.
//   viewer   reads sessions, approvals, executions and event streams
//   operator also chats, creates sessions, decides non-destructive approvals
//            and plans, cancels executions, presses Stop
//   admin    also confirms destructive steps (by button or by typed words),
//            manages operators and settings
// Invariant: every /api route that needs more than a login says so with
// requireRole (tests/roles.test.ts walks app.routes and fails on a route it
// has no expectation for), and a refusal is a 403 naming the role needed and
// the role held.
import type { MiddlewareHandler } from "hono";
import type { OperatorRole } from "../db/schema.js";
import { HttpError } from "../http/http-error.js";
import type { AuthEnv } from "./middleware.js";

export const ROLES: readonly OperatorRole[] = ["viewer", "operator", "admin"];

export const roleAtLeast = (held: OperatorRole, needed: OperatorRole) => ROLES.indexOf(held) >= ROLES.indexOf(needed);

export const isRole = (v: string): v is OperatorRole => (ROLES as readonly string[]).includes(v);

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

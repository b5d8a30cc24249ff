// Operator roles, ordered: viewer < operator < admin.
//   viewer   reads sessions, approvals, executions and event streams
//   operator also chats, creates sessions, decides non-destructive approvals
//            and plans, cancels executions, presses Stop
//   admin    also confirms destructive steps (by button or by typed words),
//            manages operators and settings
// The HTTP side (requireRole, the 403 naming the role needed and the role
// held) is http/require-role.ts.
import type { OperatorRole } from "../db/schema.js";

export const ROLES: readonly OperatorRole[] = ["viewer", "operator", "admin"];

export const roleAtLeast = (held: OperatorRole, needed: OperatorRole) => ROLES.indexOf(held) >= ROLES.indexOf(needed);

export const isRole = (v: string): v is OperatorRole => (ROLES as readonly string[]).includes(v);

// Operator management, an admin's (auth/roles.ts):
//   GET    /api/operators      every operator: id, username, role, createdAt, lastLoginAt
//   POST   /api/operators      {username, password, role}: 201; 409 when the username is taken;
//                              the password judged like the first-operator form's
//   PATCH  /api/operators/:id  {role}: effective on the operator's next request
//   DELETE /api/operators/:id  204; their logins end at once, their sessions stay
// The invariants (never zero admins, nobody removes themself) are
// auth/operator-accounts.ts's; here a refusal becomes 409 (404 when the
// operator is gone). The API token counts as an admin and is nobody's login,
// so it may remove any operator but the last admin.
import { Hono } from "hono";
import { z } from "zod";
import { OperatorChangeRefused, operatorRemove, operatorRoleSet, operatorsList } from "../../auth/operator-accounts.js";
import { API_TOKEN_USERNAME, OperatorExistsError, operatorCreate, USERNAME_PATTERN } from "../../auth/operators.js";
import { PASSWORD_MAX, passwordProblem } from "../../auth/password-strength.js";
import { ROLES } from "../../auth/roles.js";
import type { OperatorRole } from "../../db/schema.js";
import type { ApiDeps } from "../api-deps.js";
import type { AuthEnv } from "../auth-middleware.js";
import { HttpError } from "../http-error.js";
import { requireRole } from "../require-role.js";
import { validate } from "../validate.js";
import { idParam } from "./ids.js";

const role = z.enum(ROLES as [OperatorRole, ...OperatorRole[]], { error: "must be viewer, operator or admin" });

const newOperator = z.object({
  username: z
    .string()
    .regex(USERNAME_PATTERN, "must be 1-64 letters, digits or . _ @ -")
    .refine((u) => u !== API_TOKEN_USERNAME, `"${API_TOKEN_USERNAME}" is reserved for NOMOS_API_TOKEN's caller`),
  password: z.string().min(8, "must be at least 8 characters").max(PASSWORD_MAX),
  role,
});

const roleChange = z.object({ role });

const refused = (err: unknown): unknown =>
  err instanceof OperatorChangeRefused
    ? new HttpError(err.reason === "not_found" ? "not_found" : "conflict", err.message, undefined, { cause: err })
    : err;

export function operatorRoutes(deps: ApiDeps) {
  return new Hono<AuthEnv>()
    .get("/api/operators", requireRole("admin", "managing operators"), async (c) => c.json({ operators: await operatorsList(deps.db) }))
    .post("/api/operators", requireRole("admin", "managing operators"), validate("json", newOperator), async (c) => {
      const { username, password, role: wanted } = c.req.valid("json");
      const problem = passwordProblem(password, { username });
      if (problem) throw new HttpError("bad_request", `body.password: ${problem}`, "body.password");
      try {
        const created = await operatorCreate(deps.db, { username, password, role: wanted, actor: c.get("actor") });
        deps.log.info({ username, role: created?.role, by: c.get("actor") }, "operator created");
        const view = (created ? await operatorsList(deps.db, { id: created.id }) : [])[0];
        return c.json({ operator: view }, 201);
      } catch (err) {
        if (err instanceof OperatorExistsError) {
          // The page shows it as "Username alice is already taken".
          throw new HttpError("conflict", `body.username: ${username} is already taken`, "body.username", { cause: err });
        }
        throw err;
      }
    })
    .patch(
      "/api/operators/:id",
      requireRole("admin", "managing operators"),
      validate("param", idParam),
      validate("json", roleChange),
      async (c) => {
        const { id } = c.req.valid("param");
        const operator = await operatorRoleSet(deps.db, { id, role: c.req.valid("json").role, actor: c.get("actor") }).catch((err) => {
          throw refused(err);
        });
        deps.log.info({ username: operator.username, role: operator.role, by: c.get("actor") }, "operator role changed");
        return c.json({ operator });
      },
    )
    .delete("/api/operators/:id", requireRole("admin", "managing operators"), validate("param", idParam), async (c) => {
      const { id } = c.req.valid("param");
      const removed = await operatorRemove(deps.db, { id, byOperatorId: c.get("operator").id, actor: c.get("actor") }).catch((err) => {
        throw refused(err);
      });
      deps.log.info({ username: removed.username, by: c.get("actor") }, "operator removed");
      return c.body(null, 204);
    });
}

// Executions: one with its result (executions/execution-json.ts, the one
// view), and cancelling one from its card (the lifecycle's executionCancel,
// as the operator).
import { Hono } from "hono";
import { TERMINAL_EXECUTION_STATUSES } from "../../db/schema.js";
import { withActor } from "../../db/with-actor.js";
import { executionToJson } from "../../executions/execution-json.js";
import { executionCancel, executionGet } from "../../executions/lifecycle.js";
import type { ApiDeps } from "../api-deps.js";
import type { AuthEnv } from "../auth-middleware.js";
import { HttpError, notFound } from "../http-error.js";
import { requireRole } from "../require-role.js";
import { validate } from "../validate.js";
import { idParam } from "./ids.js";

export function executionRoutes(deps: ApiDeps) {
  const view = async (executionId: string) => {
    const row = await executionGet(deps.db, { executionId });
    if (!row) throw notFound("execution", executionId);
    return executionToJson(row);
  };
  return new Hono<AuthEnv>()
    .get("/api/executions/:id", validate("param", idParam), async (c) => c.json(await view(c.req.valid("param").id)))
    .post("/api/executions/:id/cancel", requireRole("operator", "cancelling an execution"), validate("param", idParam), async (c) => {
      const { id } = c.req.valid("param");
      const execution = await view(id);
      if (TERMINAL_EXECUTION_STATUSES.includes(execution.status)) {
        throw new HttpError("conflict", `execution ${id} is already ${execution.status}; it cannot be cancelled`);
      }
      const actor = c.get("actor");
      await withActor(deps.db, actor, (tx) => executionCancel(tx, { executionId: id, reason: `cancelled by ${actor}` }));
      return c.json(await view(id));
    });
}

// Executions: one with its result, and cancelling one from its card.
import { Hono } from "hono";
import type { AuthEnv } from "../../auth/middleware.js";
import { requireRole } from "../../auth/roles.js";
import { TERMINAL_EXECUTION_STATUSES } from "../../db/schema.js";
import type { ApiDeps } from "../api-deps.js";
import { HttpError, notFound } from "../http-error.js";
import { executionGet } from "../read/execution-read.js";
import { validate } from "../validate.js";
import { idParam } from "./ids.js";
import { viaPort } from "./port-errors.js";

export function executionRoutes(deps: ApiDeps) {
  return new Hono<AuthEnv>()
    .get("/api/executions/:id", validate("param", idParam), async (c) => {
      const { id } = c.req.valid("param");
      const execution = await executionGet(deps.db, { executionId: id });
      if (!execution) throw notFound("execution", id);
      return c.json(execution);
    })
    .post("/api/executions/:id/cancel", requireRole("operator", "cancelling an execution"), validate("param", idParam), async (c) => {
      const { id } = c.req.valid("param");
      const execution = await executionGet(deps.db, { executionId: id });
      if (!execution) throw notFound("execution", id);
      if (TERMINAL_EXECUTION_STATUSES.includes(execution.status)) {
        throw new HttpError("conflict", `execution ${id} is already ${execution.status}; it cannot be cancelled`);
      }
      const actor = c.get("actor");
      await viaPort(() => deps.executions.cancel({ executionId: id, actor, reason: `cancelled by ${actor}` }));
      return c.json(await executionGet(deps.db, { executionId: id }));
    });
}

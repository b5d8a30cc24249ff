// Approvals: list (by session, by status) and decide with the buttons.
// The route checks what it can answer precisely (unknown id 404, already
// decided 409, wrong typed confirmation 400 naming body.confirmation) before
// approvalDecide decides; its own checks (DomainErrors) still guard races.
import { Hono } from "hono";
import { z } from "zod";
import { approvalView, approvalViews } from "../../approvals/approval-view.js";
import { approvalDecide } from "../../approvals/decide.js";
import { roleAtLeast } from "../../auth/roles.js";
import { type ApiDeps, agentOf } from "../api-deps.js";
import type { AuthEnv } from "../auth-middleware.js";
import { HttpError, notFound } from "../http-error.js";
import { requireRole, roleRefusal } from "../require-role.js";
import { validate } from "../validate.js";
import { idParam, uuidParam } from "./ids.js";

const listQuery = z.object({
  session: uuidParam.optional(),
  status: z.enum(["pending", "approved", "rejected", "expired"]).optional(),
});

const decideBody = z.object({
  decision: z.enum(["approve", "reject"]),
  confirmation: z.string().max(500).optional(),
  /** false: "Approve this step" (no window is opened or extended). */
  continue: z.boolean().optional(),
});

export function approvalRoutes(deps: ApiDeps) {
  return new Hono<AuthEnv>()
    .get("/api/approvals", validate("query", listQuery), async (c) => {
      const { session, status } = c.req.valid("query");
      return c.json({ approvals: await approvalViews(deps.db, { sessionId: session, status }) });
    })
    .post(
      "/api/approvals/:id",
      requireRole("operator", "deciding an approval"),
      validate("param", idParam),
      validate("json", decideBody),
      async (c) => {
        const { id } = c.req.valid("param");
        const { decision, confirmation, continue: andContinue } = c.req.valid("json");
        const approval = await approvalView(deps.db, { approvalId: id });
        if (!approval) throw notFound("approval", id);
        if (approval.status !== "pending") {
          throw new HttpError("conflict", `approval ${id} is already ${approval.status}; a decision is made once`);
        }
        // Confirming a destructive step is an admin's; anyone who may decide may refuse one.
        const role = c.get("operator").role;
        if (decision === "approve" && approval.confirmationPhrase && !roleAtLeast(role, "admin")) {
          throw roleRefusal(role, "admin", "confirming a destructive step");
        }
        if (decision === "approve" && approval.confirmationPhrase && confirmation?.trim() !== approval.confirmationPhrase) {
          throw new HttpError(
            "bad_request",
            `body.confirmation: this step is destructive; type "${approval.confirmationPhrase}" to approve it`,
            "body.confirmation",
          );
        }
        const actor = c.get("actor");
        await approvalDecide(agentOf(deps).approvals, {
          approvalId: id,
          decision,
          ...(confirmation !== undefined ? { confirmation: confirmation.trim() } : {}),
          ...(andContinue !== undefined ? { continue: andContinue } : {}),
          actor,
          via: "button",
          // An operator's plan approval leaves its destructive steps to ask an admin.
          mayConfirmDestructive: roleAtLeast(role, "admin"),
        });
        deps.log.info({ approvalId: id, decision, actor }, "approval decided");
        return c.json(await approvalView(deps.db, { approvalId: id }));
      },
    );
}

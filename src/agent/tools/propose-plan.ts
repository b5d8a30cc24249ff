// The propose_plan tool: records a plan and asks the operator to approve it.
// Invariants: the plan, its plan_proposed event and its approval commit in
// one transaction, and plan_proposed (naming the approval) precedes
// approval_requested on the stream; the plan's checklist (plans/plan-steps.ts,
// every step pending) is created with it.
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { approvalCreate } from "../../approvals/approval-create.js";
import { withActor } from "../../db/with-actor.js";
import { sessionEventsAppend } from "../../events/session-events.js";
import { planStepsCreate } from "../../plans/plan-steps.js";
import { command, targetName, toolDefine } from "./tool.js";

export const proposePlan = toolDefine({
  name: "propose_plan",
  description:
    "Record a plan (goal and steps) and ask the operator to approve it. Approval opens an assent window over the " +
    "targets the steps name; destructive steps with an exact command are pre-authorized by it. End your turn after " +
    "proposing.",
  inputSchema: z
    .object({
      goal: z.string().min(1).max(2000).describe("What will be true when the plan is done"),
      steps: z
        .array(
          z
            .object({
              title: z.string().min(1).max(500),
              target: targetName.optional(),
              command: command.optional(),
              destructive: z.boolean().optional().describe("true if the step loses data or availability"),
              without_snapshot: z
                .boolean()
                .optional()
                .describe(
                  "true if this step may change its guest even when the guest cannot be snapshotted first (its storage cannot " +
                    "snapshot); the plan card tells the operator. Leave it out and such a step asks the operator instead.",
                ),
            })
            .strict(),
        )
        .min(1, "a plan needs at least one step")
        .max(100),
    })
    .strict(),
  async run(deps, ctx, input) {
    const { planId, approvalId } = await withActor(deps.db, `agent:${ctx.sessionId}`, async (tx) => {
      const plan = await tx
        .insertInto("plans")
        .values({ session_id: ctx.sessionId, goal: input.goal, steps: input.steps })
        .returning("id")
        .executeTakeFirstOrThrow();
      await planStepsCreate(tx, { planId: plan.id, sessionId: ctx.sessionId, count: input.steps.length });
      // plan_proposed names its approval and precedes approval_requested on the stream.
      const approvalId = randomUUID();
      await sessionEventsAppend(tx, [
        {
          sessionId: ctx.sessionId,
          turnId: ctx.turnId,
          type: "plan_proposed",
          data: { planId: plan.id, approvalId, goal: input.goal, steps: input.steps },
        },
      ]);
      const approval = await approvalCreate(tx, {
        id: approvalId,
        sessionId: ctx.sessionId,
        turnId: ctx.turnId,
        kind: "plan",
        planId: plan.id,
        expiresInMinutes: deps.approvalMinutes,
      });
      return { planId: plan.id, approvalId: approval.id };
    });
    return {
      content: `plan ${planId} proposed; it awaits the operator's approval (approval ${approvalId}). You will be re-invoked when it is decided. Summarize the plan in a sentence or two and end your turn.`,
      isError: false,
      readOnly: false,
    };
  },
});

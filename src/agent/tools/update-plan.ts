// The update_plan tool: marks progress on the session's approved plan, step
// by step (running, done, failed, skipped, with a note), so the operator
// sees a live checklist. Invariants: the statuses change only through
// plans/plan-steps.ts (all of one call or none, plan_updated announced in
// the same transaction); with no approved, unfinished plan, or a step the
// plan does not have, nothing changes and the error says why.
import { z } from "zod";
import { assentWindowCurrent } from "../../assent/window.js";
import { withActor } from "../../db/with-actor.js";
import { PlanStepError, planActiveId, planStepsSet } from "../../plans/plan-steps.js";
import { toolDefine, toolFail } from "./tool.js";

export const updatePlan = toolDefine({
  name: "update_plan",
  description:
    "Mark steps of the approved plan (numbered from 1) running, done (verified), failed or skipped. The operator watches this checklist.",
  inputSchema: z
    .object({
      steps: z
        .array(
          z
            .object({
              step: z.number().int().min(1, "steps are numbered from 1").max(1000),
              status: z.enum(["running", "done", "failed", "skipped"]),
              note: z.string().min(1).max(2000).optional(),
            })
            .strict(),
        )
        .min(1, "name at least one step")
        .max(100),
    })
    .strict(),
  async run(deps, ctx, input) {
    const actor = `agent:${ctx.sessionId}`;
    try {
      const checklist = await withActor(deps.db, actor, async (tx) => {
        const window = await assentWindowCurrent(tx, { sessionId: ctx.sessionId });
        const planId =
          (await planActiveId(tx, { sessionId: ctx.sessionId, windowPlanId: window.planId })) ??
          (await planActiveId(tx, { sessionId: ctx.sessionId }));
        if (!planId) return undefined;
        return planStepsSet(tx, { planId, sessionId: ctx.sessionId, turnId: ctx.turnId, changes: input.steps });
      });
      if (!checklist) return toolFail("update_plan: this session has no approved, unfinished plan; nothing was changed");
      const done = checklist.steps.filter((s) => s.status === "done" || s.status === "skipped").length;
      const lines = checklist.steps.map((s) => `${s.step}. [${s.status}] ${s.title}`);
      return {
        content: `Checklist of plan ${checklist.planId} (${done} of ${checklist.steps.length} steps done or skipped):\n${lines.join("\n")}`,
        isError: false,
        readOnly: true,
      };
    } catch (err) {
      if (err instanceof PlanStepError) return toolFail(`update_plan: ${err.message}; nothing was changed`);
      throw err;
    }
  },
});

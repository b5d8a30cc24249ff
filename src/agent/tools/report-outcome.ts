// The report_outcome tool: ends the approved plan as verified or blocked.
// Invariant: it closes the assent window with that reason and records the
// outcome through assent/plan-outcome.ts (one transaction); with no plan and
// no open window it records nothing and says so.
import { z } from "zod";
import { planReportOutcome } from "../../assent/plan-outcome.js";
import { withActor } from "../../db/with-actor.js";
import { toolDefine, toolFail } from "./tool.js";

export const reportOutcome = toolDefine({
  name: "report_outcome",
  description:
    "End the approved plan: report its goal verified (with the evidence) or yourself blocked (with what you need). " +
    "This closes the assent window and notifies the operator; further changes need a new approval.",
  inputSchema: z
    .object({
      outcome: z
        .enum(["verified", "blocked"])
        .describe("verified: the goal is shown working; blocked: you cannot go on without the operator"),
      summary: z.string().min(1).max(4000).describe("What you did and how you verified it, or why you are blocked"),
      needs: z.string().min(1).max(4000).optional().describe("When blocked: exactly what you need from the operator"),
    })
    .strict(),
  async run(deps, ctx, input) {
    const reported = await withActor(deps.db, `agent:${ctx.sessionId}`, (tx) =>
      planReportOutcome(tx, {
        sessionId: ctx.sessionId,
        turnId: ctx.turnId,
        actor: `agent:${ctx.sessionId}`,
        outcome: input.outcome,
        summary: input.summary,
        needs: input.needs,
      }),
    );
    if (!reported.planId && !reported.windowClosed) {
      return toolFail("report_outcome: this session has no approved, unfinished plan and no open assent window; nothing was recorded");
    }
    const what = reported.planId ? `plan ${reported.planId} ("${reported.goal}")` : "the work of the assent window";
    return {
      content:
        `Recorded: ${what} ${input.outcome === "verified" ? "is verified" : "is blocked"}. The assent window is closed and the operator is told; ` +
        "any further change needs their approval. Tell the operator the outcome in a few lines and end your turn.",
      isError: false,
      readOnly: false,
    };
  },
});

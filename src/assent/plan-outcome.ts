// The plan finishes the window: the agent's report_outcome tool records how
// the session's plan ended (verified, or blocked and what it needs), closes
// the assent window with that reason, and announces plan_finished on the
// session's event stream, all in one transaction. plan_finished carries the
// plan's tokens and estimated cost (usage/model-calls.ts), for the result card.
//
// Invariants:
// - A plan is finished once: the UPDATE is conditional on finished_at IS
//   NULL (and status approved); a second report records nothing more.
// - The window closes whatever opened it: autonomy does not linger after
//   "done" or "blocked". The model can only close a window, never open one.
// - The plan reported on is the one the open window was opened for, else
//   the session's latest approved plan that is not finished.
import type { Kysely } from "kysely";
import { sql } from "kysely";
import type { Database, PlanOutcome } from "../db/schema.js";
import { sessionEventsAppend } from "../events/session-events.js";
import { modelCallsSum } from "../usage/model-calls.js";
import { planLatestUnfinished } from "./plan-resume.js";
import { assentWindowClose, assentWindowCurrent } from "./window.js";

export interface PlanOutcomeReported {
  planId: string | null;
  goal: string | null;
  windowClosed: boolean;
}

export async function planReportOutcome(
  tx: Kysely<Database>,
  p: { sessionId: string; turnId?: string | null; actor: string; outcome: PlanOutcome; summary: string; needs?: string | undefined },
): Promise<PlanOutcomeReported> {
  const window = await assentWindowCurrent(tx, { sessionId: p.sessionId });
  const candidate = window.planId ?? (await planLatestUnfinished(tx, { sessionId: p.sessionId, lock: true }))?.id;
  const plan = candidate
    ? await tx
        .updateTable("plans")
        .set({ outcome: p.outcome, outcome_summary: p.summary, outcome_needs: p.needs ?? null, finished_at: sql<Date>`now()` })
        .where("id", "=", candidate)
        .where("status", "=", "approved")
        .where("finished_at", "is", null)
        .returning(["id", "goal"])
        .executeTakeFirst()
    : undefined;
  const windowClosed = await assentWindowClose(tx, {
    sessionId: p.sessionId,
    actor: p.actor,
    reason: p.outcome === "verified" ? "plan_verified" : "plan_blocked",
  });
  if (plan || windowClosed) {
    const usage = plan ? await modelCallsSum(tx, { planId: plan.id }) : null;
    await sessionEventsAppend(tx, [
      {
        sessionId: p.sessionId,
        turnId: p.turnId ?? null,
        type: "plan_finished",
        data: {
          planId: plan?.id ?? null,
          goal: plan?.goal ?? null,
          outcome: p.outcome,
          summary: p.summary,
          needs: p.needs ?? null,
          windowClosed,
          usage,
        },
      },
    ]);
  }
  return { planId: plan?.id ?? null, goal: plan?.goal ?? null, windowClosed };
}

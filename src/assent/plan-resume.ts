// Forward words resume a plan: "continue", "go ahead", "proceed", "do it"
// (any forward assent of the vocabulary) while nothing is pending, the
// session has an approved plan that is not finished, and no window is open,
// re-open the window with that plan's scope and pre-authorizations.
//
// Invariants:
// - Only the operator's own words reach here (Turns.chat), in the
//   operator's withActor transaction; with nothing to resume it opens
//   nothing and says nothing.
// - An open window is left as it is (forward words do not extend it).
// - The plan is read under its row lock, so a report_outcome finishing it
//   at the same moment either comes first (nothing resumes) or after.
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import { type AssentWindowState, assentWindowCurrent, assentWindowOpenOrExtend, planScope } from "./window.js";

export interface PlanResumed {
  planId: string;
  goal: string;
  window: AssentWindowState;
}

/** The session's latest approved plan that has not reported its outcome. */
export async function planLatestUnfinished(db: Kysely<Database>, p: { sessionId: string; lock?: boolean }) {
  let q = db
    .selectFrom("plans")
    .select(["id", "goal", "steps"])
    .where("session_id", "=", p.sessionId)
    .where("status", "=", "approved")
    .where("finished_at", "is", null)
    .orderBy("decided_at", "desc")
    .limit(1);
  if (p.lock) q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function planResume(
  tx: Kysely<Database>,
  p: { sessionId: string; actor: string; minutes: number },
): Promise<PlanResumed | undefined> {
  if ((await assentWindowCurrent(tx, { sessionId: p.sessionId })).open) return undefined;
  const plan = await planLatestUnfinished(tx, { sessionId: p.sessionId, lock: true });
  if (!plan) return undefined;
  const scope = planScope(plan.steps);
  const window = await assentWindowOpenOrExtend(tx, {
    sessionId: p.sessionId,
    actor: p.actor,
    minutes: p.minutes,
    planId: plan.id,
    addTargets: scope.targets,
    addPreauthorized: scope.preauthorized,
  });
  return { planId: plan.id, goal: plan.goal, window };
}

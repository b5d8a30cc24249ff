// A plan's live checklist: one plan_steps row per step of plans.steps, and
// the only module that writes plan_steps. Every status change is one
// conditional UPDATE, and every change appends plan_updated (the whole
// checklist, so the page needs no other state) in the same transaction.
//
//   pending --> running --> done | failed | skipped
//      \___________________^       |
//                                  +--> running | done | skipped (a failed step retried or given up)
//
// Invariants:
// - done and skipped are final: a change away from them is refused, naming
//   the status found; setting a step to the status it has only updates its
//   note. A refused change rolls back every change of the same call.
// - Steps are numbered from 1, as the agent and the page count them; a
//   number outside the plan is refused naming the plan's range.
// - Only an approved plan that has not reported its outcome changes: the
//   checklist of a finished plan is its record.
import { type Kysely, sql } from "kysely";
import type { Database, PlanStepStatus } from "../db/schema.js";
import { DomainError } from "../errors/domain-error.js";
import type { PlanChecklistView } from "../events/contract.js";
import { sessionEventsAppend } from "../events/session-events.js";
import { modelCallsSum } from "../usage/model-calls.js";

/** From which statuses each status may be reached (besides itself, which only updates the note). */
const FROM: Record<Exclude<PlanStepStatus, "pending">, PlanStepStatus[]> = {
  running: ["pending", "failed"],
  done: ["pending", "running", "failed"],
  failed: ["pending", "running"],
  skipped: ["pending", "running", "failed"],
};

export type PlanStepChange = { step: number; status: Exclude<PlanStepStatus, "pending">; note?: string | undefined };

/** The agent named a step or a change the checklist cannot take. */
export class PlanStepError extends DomainError {
  override name = "PlanStepError";
  constructor(message: string) {
    super("conflict", message, { field: "steps" });
  }
}

/** Creates a new plan's checklist, every step pending (propose_plan's transaction). */
export async function planStepsCreate(tx: Kysely<Database>, p: { planId: string; sessionId: string; count: number }): Promise<void> {
  if (p.count === 0) return;
  await tx
    .insertInto("plan_steps")
    .values(Array.from({ length: p.count }, (_, i) => ({ plan_id: p.planId, session_id: p.sessionId, position: i + 1 })))
    .execute();
}

/** The checklist as the API, the stream and the export show it: titles from the plan, statuses from plan_steps. */
export async function planChecklist(db: Kysely<Database>, p: { planId: string }): Promise<PlanChecklistView | undefined> {
  const plan = await db
    .selectFrom("plans")
    .select(["id", "goal", "steps", "status", "outcome", "outcome_summary", "outcome_needs", "finished_at"])
    .where("id", "=", p.planId)
    .executeTakeFirst();
  if (!plan) return undefined;
  const rows = await db
    .selectFrom("plan_steps")
    .select(["position", "status", "note", "started_at", "finished_at"])
    .where("plan_id", "=", p.planId)
    .orderBy("position")
    .execute();
  const byPosition = new Map(rows.map((r) => [r.position, r]));
  const steps = (plan.steps as { title?: string; target?: string; command?: string }[]).map((s, i) => {
    const r = byPosition.get(i + 1);
    return {
      step: i + 1,
      title: String(s.title ?? `step ${i + 1}`),
      target: s.target ?? null,
      command: s.command ?? null,
      status: r?.status ?? ("pending" as PlanStepStatus),
      note: r?.note ?? null,
      startedAt: r?.started_at?.toISOString() ?? null,
      finishedAt: r?.finished_at?.toISOString() ?? null,
    };
  });
  return {
    planId: plan.id,
    goal: plan.goal,
    status: plan.status,
    steps,
    outcome: plan.outcome,
    summary: plan.outcome_summary,
    needs: plan.outcome_needs,
    finishedAt: plan.finished_at?.toISOString() ?? null,
    usage: await modelCallsSum(db, { planId: plan.id }),
  };
}

/** The plan whose checklist a session's work changes: the approved plan that has not finished, newest first. */
export async function planActiveId(db: Kysely<Database>, p: { sessionId: string; windowPlanId?: string | null }): Promise<string | null> {
  let q = db
    .selectFrom("plans")
    .select("id")
    .where("session_id", "=", p.sessionId)
    .where("status", "=", "approved")
    .where("finished_at", "is", null);
  if (p.windowPlanId) q = q.where("id", "=", p.windowPlanId);
  const row = await q.orderBy("decided_at", "desc").limit(1).executeTakeFirst();
  return row?.id ?? null;
}

/** The session's latest approved plan, finished or not: the checklist the page pins. */
export async function planLatestApprovedId(db: Kysely<Database>, p: { sessionId: string }): Promise<string | null> {
  const row = await db
    .selectFrom("plans")
    .select("id")
    .where("session_id", "=", p.sessionId)
    .where("status", "=", "approved")
    .orderBy("decided_at", "desc")
    .orderBy("created_at", "desc")
    .limit(1)
    .executeTakeFirst();
  return row?.id ?? null;
}

/**
 * Applies the agent's changes to the plan's checklist, all or none, and
 * announces the new checklist. Throws PlanStepError for a step outside the
 * plan or a change the state machine refuses.
 */
export async function planStepsSet(
  tx: Kysely<Database>,
  p: { planId: string; sessionId: string; turnId: string | null; changes: PlanStepChange[] },
): Promise<PlanChecklistView> {
  const count = await tx
    .selectFrom("plan_steps")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("plan_id", "=", p.planId)
    .executeTakeFirstOrThrow();
  const n = Number(count.n);
  for (const c of p.changes) {
    if (!Number.isInteger(c.step) || c.step < 1 || c.step > n) {
      throw new PlanStepError(`step ${c.step} is not a step of plan ${p.planId}: its steps are numbered 1 to ${n}`);
    }
  }
  for (const c of p.changes) {
    const updated = await tx
      .updateTable("plan_steps")
      .set({
        status: c.status,
        ...(c.note !== undefined ? { note: c.note } : {}),
        updated_at: sql`now()`,
        started_at: c.status === "skipped" ? sql`started_at` : sql`coalesce(started_at, now())`,
        finished_at: c.status === "running" ? null : sql`now()`,
      })
      .where("plan_id", "=", p.planId)
      .where("position", "=", c.step)
      .where((eb) => eb.or([eb("status", "in", FROM[c.status]), eb("status", "=", c.status)]))
      .where((eb) =>
        eb.exists(
          eb.selectFrom("plans").select("id").where("id", "=", p.planId).where("status", "=", "approved").where("finished_at", "is", null),
        ),
      )
      .returning("id")
      .executeTakeFirst();
    if (!updated) await refuse(tx, p.planId, c);
  }
  return announce(tx, p);
}

/**
 * run / request_execution naming a step: the step becomes running if it is
 * pending (or failed: the agent is retrying it); any other status stays.
 * Returns the new checklist when it changed.
 */
export async function planStepMarkRunning(
  tx: Kysely<Database>,
  p: { planId: string; sessionId: string; turnId: string | null; step: number },
): Promise<PlanChecklistView | undefined> {
  const updated = await tx
    .updateTable("plan_steps")
    .set({ status: "running", updated_at: sql`now()`, started_at: sql`coalesce(started_at, now())`, finished_at: null })
    .where("plan_id", "=", p.planId)
    .where("position", "=", p.step)
    .where("status", "in", FROM.running)
    .returning("id")
    .executeTakeFirst();
  return updated ? announce(tx, p) : undefined;
}

/** How many steps a plan has (for a step number named by run / request_execution). */
export async function planStepCount(db: Kysely<Database>, p: { planId: string }): Promise<number> {
  const row = await db
    .selectFrom("plan_steps")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("plan_id", "=", p.planId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function announce(tx: Kysely<Database>, p: { planId: string; sessionId: string; turnId: string | null }): Promise<PlanChecklistView> {
  const checklist = await planChecklist(tx, { planId: p.planId });
  if (!checklist) throw new PlanStepError(`plan ${p.planId} does not exist`);
  await sessionEventsAppend(tx, [{ sessionId: p.sessionId, turnId: p.turnId, type: "plan_updated", data: checklist }]);
  return checklist;
}

async function refuse(tx: Kysely<Database>, planId: string, c: PlanStepChange): Promise<never> {
  const plan = await tx.selectFrom("plans").select(["status", "finished_at"]).where("id", "=", planId).executeTakeFirst();
  if (plan && (plan.status !== "approved" || plan.finished_at)) {
    throw new PlanStepError(`plan ${planId} is ${plan.finished_at ? "finished" : plan.status}: its checklist no longer changes`);
  }
  const row = await tx
    .selectFrom("plan_steps")
    .select("status")
    .where("plan_id", "=", planId)
    .where("position", "=", c.step)
    .executeTakeFirst();
  throw new PlanStepError(
    `step ${c.step} is ${row?.status ?? "missing"}; it cannot become ${c.status} (done and skipped steps are final; ` +
      `a step becomes ${c.status} from ${FROM[c.status].join(" or ")})`,
  );
}

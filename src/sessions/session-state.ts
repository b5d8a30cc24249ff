// A session's state, derived in one place for the session list, the
// session view and the operator-wide stream (GET /api/events):
//
//   working         a turn of the session runs or is queued
//   needs_approval  an approval of the session is pending
//   failed          its last turn failed, after its last plan's outcome (if any)
//   finished        its last plan's outcome is verified
//   blocked         its last plan's outcome is blocked
//   idle            anything else
//
// checked in that order. Invariant: nothing is stored; the state is read
// from turns, approvals and plans each time, by one query (sessionStates)
// and one rule (sessionStateOf), so it cannot drift from what it describes.
import { type Kysely, sql } from "kysely";
import type { Database, PlanOutcome, TurnStatus } from "../db/schema.js";
import type { SessionState } from "../events/contract.js";

export type { SessionState };

export interface SessionStateFacts {
  turnActive: boolean;
  pendingApprovals: number;
  lastPlanOutcome: PlanOutcome | null;
  lastPlanFinishedAt: Date | null;
  lastTurnStatus: TurnStatus | null;
  lastTurnFinishedAt: Date | null;
}

/** The rule. */
export function sessionStateOf(f: SessionStateFacts): SessionState {
  if (f.turnActive) return "working";
  if (f.pendingApprovals > 0) return "needs_approval";
  const failedLast =
    f.lastTurnStatus === "failed" &&
    (!f.lastPlanFinishedAt || (f.lastTurnFinishedAt !== null && f.lastTurnFinishedAt > f.lastPlanFinishedAt));
  if (failedLast) return "failed";
  if (f.lastPlanOutcome === "verified") return "finished";
  if (f.lastPlanOutcome === "blocked") return "blocked";
  return "idle";
}

export interface SessionStateRow {
  sessionId: string;
  title: string;
  state: SessionState;
  pendingApprovals: number;
  /** The session's newest event, or its creation. */
  updatedAt: Date;
}

/** The states of the given sessions (all of them, newest first, when ids is absent; at most 500). */
export async function sessionStates(db: Kysely<Database>, p: { sessionIds?: string[] } = {}): Promise<SessionStateRow[]> {
  if (p.sessionIds && p.sessionIds.length === 0) return [];
  const ids = p.sessionIds ? sql`WHERE s.id = ANY(${p.sessionIds}::uuid[])` : sql``;
  const { rows } = await sql<{
    id: string;
    title: string;
    created_at: Date;
    turn_active: boolean;
    pending: string;
    plan_outcome: PlanOutcome | null;
    plan_finished_at: Date | null;
    turn_status: TurnStatus | null;
    turn_finished_at: Date | null;
    updated_at: Date | null;
  }>`
    SELECT s.id, s.title, s.created_at,
           EXISTS (SELECT 1 FROM turns t WHERE t.session_id = s.id AND t.status IN ('running', 'queued')) AS turn_active,
           (SELECT count(*) FROM approvals a WHERE a.session_id = s.id AND a.status = 'pending') AS pending,
           lp.outcome AS plan_outcome, lp.finished_at AS plan_finished_at,
           lt.status AS turn_status, lt.finished_at AS turn_finished_at,
           (SELECT max(e.created_at) FROM session_events e WHERE e.session_id = s.id) AS updated_at
      FROM sessions s
      LEFT JOIN LATERAL (
        SELECT p.outcome, p.finished_at FROM plans p WHERE p.session_id = s.id ORDER BY p.created_at DESC, p.id DESC LIMIT 1
      ) lp ON true
      LEFT JOIN LATERAL (
        -- The last turn that ran to an end (cancelled ones never ran).
        SELECT t.status, t.finished_at FROM turns t
         WHERE t.session_id = s.id AND t.status IN ('completed', 'failed', 'aborted', 'interrupted')
         ORDER BY t.finished_at DESC NULLS LAST, t.id DESC LIMIT 1
      ) lt ON true
      ${ids}
     ORDER BY s.created_at DESC, s.id DESC
     LIMIT 500`.execute(db);
  return rows.map((r) => ({
    sessionId: r.id,
    title: r.title,
    pendingApprovals: Number(r.pending),
    updatedAt: r.updated_at ?? r.created_at,
    state: sessionStateOf({
      turnActive: r.turn_active,
      pendingApprovals: Number(r.pending),
      lastPlanOutcome: r.plan_outcome,
      lastPlanFinishedAt: r.plan_finished_at,
      lastTurnStatus: r.turn_status,
      lastTurnFinishedAt: r.turn_finished_at,
    }),
  }));
}

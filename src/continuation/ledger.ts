// The continuation ledger (nomos_plan_executions): the only module that
// claims finished executions for a continuation turn or marks them
// delivered. Invariants:
// - A row is claimed once: the claim is a conditional UPDATE on
//   continued_at IS NULL, so of any number of processes racing for it,
//   exactly one gets it back from RETURNING.
// - A claim needs an open assent window, checked and counted (the loop
//   guard) under the window's row lock in the same transaction, so a window
//   at its limit, closed or revoked never yields a continuation.
// - A claim whose turn never started (its process died) is taken over by one
//   other process after its lease; a delivered claim never is.
import { sql, type Kysely } from "kysely";
import type { Database } from "../db/schema.js";

export type ClaimOutcome =
  | { kind: "claimed"; executionIds: string[]; windowId: string; continuations: number }
  | { kind: "nothing" }
  | { kind: "window_closed" }
  | { kind: "limit_reached"; windowId: string; limit: number };

export interface ClaimParams {
  sessionId: string;
  owner: string;
  leaseSeconds: number;
  /** At most this many continuation turns per window (NOMOS_MAX_CONTINUATIONS). */
  maxContinuations: number;
  /** Count this claim against the loop guard even when no execution is claimed (approval continuations). */
  countEmpty?: boolean;
}

/**
 * Claims every finished, not yet continued execution of a session in one
 * statement (so results finishing close together ride one turn), provided
 * the session's window is open and under its continuation limit. Run inside
 * a transaction (withActor); the window row stays locked until it commits.
 */
export async function planExecutionsClaimForSession(tx: Kysely<Database>, p: ClaimParams): Promise<ClaimOutcome> {
  const window = await sql<{ id: string; continuations: number }>`
    SELECT id, continuations FROM assent_windows
     WHERE session_id = ${p.sessionId} AND closed_at IS NULL AND expires_at > now()
       FOR UPDATE`
    .execute(tx)
    .then((r) => r.rows[0]);
  if (!window) return { kind: "window_closed" };

  if (window.continuations >= p.maxContinuations) {
    // The loop guard. Results stay un-continued (the operator's next message
    // carries them); the window closes so nothing runs on its own any more.
    const [waiting] = await claimable(tx, p.sessionId);
    if (!waiting && !p.countEmpty) return { kind: "nothing" };
    await tx
      .updateTable("assent_windows")
      .set({ closed_at: sql<Date>`now()`, close_reason: "continuation_limit" })
      .where("id", "=", window.id)
      .where("closed_at", "is", null)
      .execute();
    return { kind: "limit_reached", windowId: window.id, limit: p.maxContinuations };
  }

  const claimed = await claimFinished(tx, p);
  if (claimed.length === 0 && !p.countEmpty) return { kind: "nothing" };

  await tx
    .updateTable("assent_windows")
    .set((eb) => ({ continuations: eb("continuations", "+", 1) }))
    .where("id", "=", window.id)
    .execute();
  return { kind: "claimed", executionIds: claimed, windowId: window.id, continuations: window.continuations + 1 };
}

/**
 * Claims a session's finished, un-continued results for the operator's own
 * turn, window or not: results that finished while no window was open ride
 * the operator's next message, never dropped and never twice.
 */
export function planExecutionsClaimForOperatorTurn(
  tx: Kysely<Database>,
  p: { sessionId: string; owner: string; leaseSeconds: number },
): Promise<string[]> {
  return claimFinished(tx, p);
}

/** The claim itself: one conditional UPDATE over the session's finished, un-continued rows. */
function claimFinished(tx: Kysely<Database>, p: { sessionId: string; owner: string; leaseSeconds: number }) {
  return sql<{ execution_id: string }>`
    UPDATE nomos_plan_executions npe
       SET continued_at = now(),
           claimed_by = ${p.owner},
           claim_expires_at = now() + make_interval(secs => ${p.leaseSeconds})
      FROM executions e
     WHERE e.id = npe.execution_id
       AND npe.session_id = ${p.sessionId}
       AND npe.continued_at IS NULL
       AND execution_is_terminal(e.status)
    RETURNING npe.execution_id`
    .execute(tx)
    .then((r) => r.rows.map((row) => row.execution_id));
}

/** Finished executions of a session that no continuation has claimed yet. */
function claimable(db: Kysely<Database>, sessionId: string) {
  return sql<{ execution_id: string }>`
    SELECT npe.execution_id FROM nomos_plan_executions npe JOIN executions e ON e.id = npe.execution_id
     WHERE npe.session_id = ${sessionId} AND npe.continued_at IS NULL AND execution_is_terminal(e.status)
     LIMIT 1`
    .execute(db)
    .then((r) => r.rows);
}

/** Records which turn carried the results; claims already delivered are left alone. */
export async function planExecutionsMarkDelivered(
  db: Kysely<Database>,
  p: { executionIds: string[]; turnId: string },
): Promise<number> {
  if (p.executionIds.length === 0) return 0;
  const result = await db
    .updateTable("nomos_plan_executions")
    .set({ delivered_turn_id: p.turnId })
    .where("execution_id", "in", p.executionIds)
    .where("delivered_turn_id", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Sessions with finished results nobody has continued yet, and an open
 * window. The sweep's query: it enters through the partial index on
 * created_at WHERE continued_at IS NULL, so its cost follows the number of
 * un-continued rows, not the size of the history.
 */
export async function planExecutionsPendingSessions(db: Kysely<Database>, p: { limit: number }): Promise<string[]> {
  const rows = await sql<{ session_id: string }>`
    SELECT DISTINCT pending.session_id
      FROM (SELECT npe.session_id
              FROM nomos_plan_executions npe
              JOIN executions e ON e.id = npe.execution_id
             WHERE npe.continued_at IS NULL
               AND execution_is_terminal(e.status)
             ORDER BY npe.created_at
             LIMIT ${p.limit}) pending
     WHERE EXISTS (SELECT 1 FROM assent_windows w
                    WHERE w.session_id = pending.session_id
                      AND w.closed_at IS NULL AND w.expires_at > now())`.execute(db);
  return rows.rows.map((r) => r.session_id);
}

/**
 * Takes over claims whose continuation turn never started and whose lease
 * lapsed (the claimant crashed between claim and dispatch). One conditional
 * UPDATE: of several sweeping processes, one takes each claim.
 */
export async function planExecutionsReclaimExpired(
  db: Kysely<Database>,
  p: { owner: string; leaseSeconds: number },
): Promise<{ sessionId: string; executionIds: string[] }[]> {
  const rows = await sql<{ session_id: string; execution_id: string }>`
    UPDATE nomos_plan_executions
       SET claimed_by = ${p.owner},
           claim_expires_at = now() + make_interval(secs => ${p.leaseSeconds})
     WHERE continued_at IS NOT NULL
       AND delivered_turn_id IS NULL
       AND claimed_by <> 'inline'
       AND claim_expires_at < now()
    RETURNING session_id, execution_id`.execute(db);
  const bySession = new Map<string, string[]>();
  for (const r of rows.rows) bySession.set(r.session_id, [...(bySession.get(r.session_id) ?? []), r.execution_id]);
  return [...bySession].map(([sessionId, executionIds]) => ({ sessionId, executionIds }));
}

// The continuation ledger (nomos_plan_executions): the only module that
// claims finished executions for a continuation turn, and, with
// turns/continuation-queue.ts (which marks them delivered in the statement
// that queues their turn), the only one that marks them delivered; the
// lifecycle inserts a row with each execution of a session. It also counts
// each claim against the assent window and closes the window at the loop
// guard's limit, under the row lock of its claim (assent/window.ts owns the
// rest). Invariants:
// - A row is claimed once: the claim is a conditional UPDATE on
//   continued_at IS NULL, so of any number of processes racing for it,
//   exactly one gets it back from RETURNING.
// - A claim needs an open assent window, checked and counted (the loop
//   guard) under the window's row lock in the same transaction, so a window
//   at its limit, closed or revoked never yields a continuation.
// - A claim whose turn never started (its process died) is taken over by one
//   other process after its lease; a delivered claim never is.
// - The hot path (planExecutionsClaimAndQueue) claims and queues the
//   continuation turn in one statement, so its claims are delivered the
//   moment they are made and never need the lease.
import { CompiledQuery, type Kysely, sql } from "kysely";
import type { Db } from "../db/connect.js";
import type { Database, ExecutionStatus } from "../db/schema.js";
import { storableDeep } from "../db/storable.js";
import { withActor } from "../db/with-actor.js";
import { messageViewSql } from "../sessions/message-view.js";

/** What a note needs to know of a claimed execution. */
export interface ClaimedExecution {
  id: string;
  status: ExecutionStatus;
  exit_code: number | null;
  signal: string | null;
  target: string;
  command: string;
  stdout: string;
  stderr: string;
  error: string | null;
  stdout_dropped_bytes: string;
  stderr_dropped_bytes: string;
  finished_at: string | null;
}

export type ClaimOutcome =
  | { kind: "claimed"; executions: ClaimedExecution[]; windowId: string; continuations: number }
  | { kind: "nothing" }
  | { kind: "window_closed" }
  | { kind: "limit_reached"; windowId: string; limit: number };

export interface ClaimParams {
  sessionId: string;
  owner: string;
  actor: string;
  leaseSeconds: number;
  /** At most this many continuation turns per window (NOMOS_MAX_CONTINUATIONS). */
  maxContinuations: number;
  /** Count this claim against the loop guard even when no execution is claimed (approval continuations). */
  countEmpty?: boolean;
}

/**
 * Claims every finished, not yet continued execution of a session (so
 * results finishing close together ride one turn), provided the session's
 * window is open and under its continuation limit, and counts the turn
 * against the window — in ONE statement (its own transaction, the actor set
 * inside it), one round trip, because this is the hot path between a NOTIFY
 * and the agent hearing about it.
 *
 * Concurrency: the window row is locked FOR UPDATE, so claimers of one
 * session queue; the one that waited re-checks continued_at IS NULL on the
 * newest row versions (READ COMMITTED's re-check) and claims nothing twice.
 */
export async function planExecutionsClaimForSession(db: Db, p: ClaimParams): Promise<ClaimOutcome> {
  const rows = await db.sql<{ window_id: string | null; before: number | null; claimed: ClaimedExecution[] }[]>`
      WITH win AS (
        SELECT id, continuations FROM assent_windows
         WHERE session_id = ${p.sessionId} AND closed_at IS NULL AND expires_at > now()
           -- the audit actor, set before any row changes: the audit
           -- triggers are AFTER ROW triggers, fired when the statement ends
           AND set_config('nomos.actor', ${p.actor}, true) IS NOT NULL
           FOR UPDATE
      ), claimed AS (
        UPDATE nomos_plan_executions npe
           SET continued_at = now(),
               claimed_by = ${p.owner},
               claim_expires_at = now() + make_interval(secs => ${p.leaseSeconds})
          FROM executions e, win
         WHERE e.id = npe.execution_id
           AND npe.session_id = ${p.sessionId}
           AND npe.continued_at IS NULL
           AND execution_is_terminal(e.status)
           AND win.continuations < ${p.maxContinuations}
        RETURNING e.id, e.status, e.exit_code, e.signal, e.target, e.command, e.stdout, e.stderr,
                  e.error, e.stdout_dropped_bytes::text, e.stderr_dropped_bytes::text, e.finished_at
      ), bump AS (
        UPDATE assent_windows w SET continuations = w.continuations + 1
          FROM win
         WHERE w.id = win.id
           AND win.continuations < ${p.maxContinuations}
           AND (${p.countEmpty ?? false}::boolean OR EXISTS (SELECT 1 FROM claimed))
        RETURNING w.continuations
      )
      SELECT (SELECT id FROM win) AS window_id,
             (SELECT continuations FROM win) AS before,
             coalesce((SELECT json_agg(c ORDER BY c.finished_at) FROM claimed c), '[]'::json) AS claimed`;
  const result = rows[0];
  if (!result?.window_id) return { kind: "window_closed" };
  const before = result.before ?? 0;
  if (before >= p.maxContinuations) return closeAtLimit(db, p, result.window_id);
  if (result.claimed.length === 0 && !p.countEmpty) return { kind: "nothing" };
  return { kind: "claimed", executions: result.claimed, windowId: result.window_id, continuations: before + 1 };
}

export type ClaimAndQueueOutcome =
  | { kind: "queued"; turnId: string; executionIds: string[]; reason: "executions" | "approval" }
  | { kind: "nothing" }
  | { kind: "window_closed" }
  | { kind: "limit_reached"; windowId: string; limit: number };

export interface ClaimAndQueueParams extends Omit<ClaimParams, "countEmpty"> {
  /**
   * Notes to deliver besides the results (the operator's decisions): with
   * any, the turn is queued even when no result is claimed, and even with no
   * window open (then it claims nothing and counts nothing).
   */
  extraNotes: string[];
}

/**
 * The event loop's hot path in ONE statement (one round trip after the
 * NOTIFY): lock the session's open window, check the loop guard, claim every
 * finished un-continued result, count the turn against the window, and
 * queue the continuation turn that carries them — the turn row, its
 * system_note (the notes built in SQL by execution_note(), migration 100,
 * after the extra notes), its `message` event, and the delivery mark, set by the claim itself (the turn's id is drawn
 * first), so every claimed row is written once. The audit actor is set by
 * the first CTE; the audit triggers fire at the statement's end.
 *
 * Same rules as planExecutionsClaimForSession + turnQueueContinuation:
 * exactly once (the conditional UPDATE under the window's row lock), no
 * window no claim, the loop guard (limit_reached is then handled as
 * there), coalescing (one turn for everything finished). A claim here is
 * delivered in the same commit, so it never lapses.
 *
 * No NOTIFY here: a transaction that notifies commits under PostgreSQL's
 * database-wide notify lock, behind every other notifying commit and its
 * WAL flush; the caller wakes the session's event streams after the
 * commit (events/session-wakes.ts; the dispatcher does). The commit itself
 * is asynchronous (synchronous_commit off, for this transaction only): if
 * the server crashes before the WAL writer flushes it (at most a few
 * hundred ms), the whole claim is gone with it — rows un-continued, no turn,
 * no note — and the sweep claims them again after the restart; anything
 * that acts on the queued turn commits synchronously first (claiming the
 * turn), which flushes the claim's WAL before it. So exactly-once holds.
 */
export async function planExecutionsClaimAndQueue(db: Db, p: ClaimAndQueueParams): Promise<ClaimAndQueueOutcome> {
  const q = claimAndQueueQuery(db, p);
  const extraNotes = q.parameters[5];
  const { rows } = await db.kysely.executeQuery(CompiledQuery.raw(q.text, q.parameters) as CompiledQuery<ClaimAndQueueRow>);
  const row = rows[0];
  if (!row) throw new Error(`claiming and queueing a continuation for session ${p.sessionId} returned no row`);
  switch (row.outcome) {
    case "executions":
    case "approval":
      if (!row.turn_id) throw new Error(`the continuation of session ${p.sessionId} was decided but no turn was queued`);
      return { kind: "queued", turnId: row.turn_id, executionIds: row.execution_ids, reason: row.outcome };
    case "limit_reached": {
      const closed = await closeAtLimit(db, { ...p, countEmpty: extraNotes.length > 0 }, row.window_id!);
      return closed.kind === "limit_reached" ? closed : { kind: "nothing" };
    }
    case "window_closed":
      return { kind: "window_closed" };
    default:
      return { kind: "nothing" };
  }
}

type ClaimAndQueueRow = { outcome: string; window_id: string | null; turn_id: string | null; execution_ids: string[] };

/**
 * The statement of planExecutionsClaimAndQueue and its parameters, unsent
 * (its caller, and scripts/bench-claim-path.ts, which EXPLAINs it). Run as
 * every Kysely query outside a transaction is (db/connect.ts: on the pool,
 * a prepared statement; `?prepare=false` still wins), but the text never
 * changes, so it is compiled once per process, and the hot path between
 * the NOTIFY and the claim's bytes builds, compiles and reserves nothing (that was 0.06–0.13 ms of the 0.15–0.25 ms there, issue 20
 * round 4). The parameters are positional: $1 actor, $2 session, $3 owner,
 * $4 lease seconds, $5 continuation limit, $6 the extra notes (trimmed,
 * blank ones dropped, made storable).
 */
export function claimAndQueueQuery(
  db: Db,
  p: ClaimAndQueueParams,
): { text: string; parameters: [string, string, string, number, number, string[]] } {
  claimAndQueueText ??= claimAndQueueStatement().compile(db.kysely).sql;
  const extra = storableDeep(p.extraNotes.map((n) => n.trim()).filter((n) => n !== ""));
  return { text: claimAndQueueText, parameters: [p.actor, p.sessionId, p.owner, p.leaseSeconds, p.maxContinuations, extra] };
}

let claimAndQueueText: string | undefined;

/** The statement with positional parameters (claimAndQueueQuery lists them); its only interpolation is the message view, which has no parameters. */
function claimAndQueueStatement() {
  return sql`
    WITH actor AS (
      SELECT set_config('nomos.actor', $1, true) AS actor,
             set_config('synchronous_commit', 'off', true) AS commit_mode
    ), win AS (
      SELECT w.id, w.continuations FROM assent_windows w, actor
       WHERE w.session_id = $2 AND w.closed_at IS NULL AND w.expires_at > now()
         FOR UPDATE OF w
    ), tid AS (
      SELECT gen_random_uuid() AS id
    ), claimed AS (
      UPDATE nomos_plan_executions npe
         SET continued_at = now(),
             claimed_by = $3,
             claim_expires_at = now() + make_interval(secs => $4),
             delivered_turn_id = tid.id
        FROM executions e, win, tid
       WHERE e.id = npe.execution_id
         AND npe.session_id = $2
         AND npe.continued_at IS NULL
         AND execution_is_terminal(e.status)
         AND win.continuations < $5
      RETURNING e.id, e.finished_at,
                btrim(execution_note(e.id, e.status, e.exit_code, e.signal, e.target, e.command, e.error,
                                     e.stdout, e.stderr, e.stdout_dropped_bytes, e.stderr_dropped_bytes),
                      js_whitespace()) AS note
    ), decide AS (
      SELECT CASE
               WHEN NOT EXISTS (SELECT 1 FROM win)
                 THEN CASE WHEN cardinality($6::text[]) > 0 THEN 'approval' ELSE 'window_closed' END
               WHEN (SELECT continuations FROM win) >= $5 THEN 'limit_reached'
               WHEN EXISTS (SELECT 1 FROM claimed) THEN 'executions'
               WHEN cardinality($6::text[]) > 0 THEN 'approval'
               ELSE 'nothing'
             END AS outcome
    ), bump AS (
      UPDATE assent_windows w SET continuations = w.continuations + 1
        FROM win, decide
       WHERE w.id = win.id AND decide.outcome IN ('executions', 'approval')
      RETURNING w.continuations
    ), notes AS (
      SELECT $6::text[] || coalesce(array_agg(c.note ORDER BY c.finished_at, c.id) FILTER (WHERE c.note <> ''), '{}') AS notes,
             coalesce(array_agg(c.id::text ORDER BY c.finished_at, c.id), '{}') AS ids
        FROM claimed c
    ), turn AS (
      INSERT INTO turns (id, session_id, kind, input)
      SELECT tid.id, $2::uuid, 'continuation',
             jsonb_build_object('notes', to_jsonb(notes.notes), 'executionIds', to_jsonb(notes.ids), 'reason', decide.outcome)
        FROM tid, notes, decide
       WHERE decide.outcome IN ('executions', 'approval')
      RETURNING id, session_id
    ), note AS (
      INSERT INTO messages (session_id, turn_id, kind, content)
      SELECT turn.session_id, turn.id, 'system_note',
             jsonb_build_array(jsonb_build_object('type', 'text', 'text', array_to_string(notes.notes, E'\n')))
        FROM turn, notes
      RETURNING id, session_id, turn_id, kind, content, created_at
    ), event AS (
      INSERT INTO session_events (session_id, turn_id, type, data)
      SELECT note.session_id, note.turn_id, 'message', jsonb_build_object('message', ${messageViewSql("note")})
        FROM note
      RETURNING session_id
    )
    SELECT decide.outcome,
           (SELECT id FROM win) AS window_id,
           (SELECT id FROM turn) AS turn_id,
           notes.ids AS execution_ids,
           (SELECT count(*) FROM event) AS events,
           (SELECT count(*) FROM bump) AS counted,
           (SELECT actor FROM actor) AS actor
      FROM decide, notes`;
}

/**
 * The loop guard tripped. Results stay un-continued (the operator's next
 * message carries them); if any are waiting, the window closes so nothing
 * runs on its own any more and the operator is told why.
 */
async function closeAtLimit(db: Db, p: ClaimParams, windowId: string): Promise<ClaimOutcome> {
  return withActor(db.kysely, p.actor, async (tx) => {
    const [waiting] = await claimable(tx, p.sessionId);
    if (!waiting && !p.countEmpty) return { kind: "nothing" } as const;
    await tx
      .updateTable("assent_windows")
      .set({ closed_at: sql<Date>`now()`, close_reason: "continuation_limit" })
      .where("id", "=", windowId)
      .where("closed_at", "is", null)
      .execute();
    return { kind: "limit_reached", windowId, limit: p.maxContinuations } as const;
  });
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
export async function planExecutionsMarkDelivered(db: Kysely<Database>, p: { executionIds: string[]; turnId: string }): Promise<number> {
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
  // The inner scan is the partial index alone (un-continued rows only: the
  // pending and the still-running); each is then checked by primary key, so
  // the plan does not change shape as history grows.
  const rows = await sql<{ session_id: string }>`
    SELECT DISTINCT pending.session_id
      FROM (SELECT npe.execution_id, npe.session_id
              FROM nomos_plan_executions npe
             WHERE npe.continued_at IS NULL
             ORDER BY npe.created_at
             LIMIT ${p.limit * 10}) pending
      JOIN LATERAL (SELECT 1 FROM executions e
                     WHERE e.id = pending.execution_id AND execution_is_terminal(e.status)) finished ON true
     WHERE EXISTS (SELECT 1 FROM assent_windows w
                    WHERE w.session_id = pending.session_id
                      AND w.closed_at IS NULL AND w.expires_at > now())
     LIMIT ${p.limit}`.execute(db);
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

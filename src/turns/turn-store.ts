// The turns table's queries: queue, claim, renew, end. The only module
// that changes turns.status; every change is one conditional UPDATE.
//
//   queued -> running -> completed | failed | aborted | interrupted
//   queued -> cancelled (coalesced into the turn that ran instead, or the
//                        operator pressed Stop: turnsCancelQueued)
//
// The lock: the unique partial index turns_one_running_per_session lets at
// most one row per session be 'running', across every process. A claim that
// loses the race gets unique_violation and steps aside; whoever finishes the
// running turn claims the queue next.
//
// started_at and finished_at are clock_timestamp(), the moment the row
// changed, not now() (the transaction's start): a claim that waited on the
// index for the previous turn to commit would otherwise record a start
// before that turn's end, and the turns of a session would seem to overlap.
import { type Kysely, sql } from "kysely";
import { isPgError } from "../db/pg-errors.js";
import type { Database, Turn, TurnKind, TurnStatus } from "../db/schema.js";
import { storableDeep } from "../db/storable.js";
import { withActor } from "../db/with-actor.js";
import { type NewSessionEvent, SESSION_EVENTS_CHANNEL, sessionEventsAppend } from "../events/session-events.js";
import { messageViewSql } from "../sessions/message-view.js";
import { type ModelCallInput, modelCallInsertSql } from "../usage/model-calls.js";
import { messageInsertSql } from "./messages.js";

export const TURN_LEASE_SECONDS = 120;

export async function turnQueue(
  tx: Kysely<Database>,
  p: { sessionId: string; kind: TurnKind; input: Record<string, unknown> },
): Promise<Turn> {
  return tx.insertInto("turns").values({ session_id: p.sessionId, kind: p.kind, input: p.input }).returningAll().executeTakeFirstOrThrow();
}

/** Stop: the session's queued turns will not run (queued -> cancelled). One conditional UPDATE. */
export async function turnsCancelQueued(tx: Kysely<Database>, p: { sessionId: string; reason: string }): Promise<string[]> {
  const rows = await tx
    .updateTable("turns")
    .set({ status: "cancelled", finished_at: sql`clock_timestamp()`, error: p.reason })
    .where("session_id", "=", p.sessionId)
    .where("status", "=", "queued")
    .returning("id")
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Claims the session's queued work: its oldest queued turn becomes running,
 * the other queued turns are coalesced into it (cancelled, their messages
 * re-pointed to it). Returns undefined when nothing is queued or a turn is
 * already running (in any process).
 */
export async function turnClaimNext(
  db: Kysely<Database>,
  p: { sessionId: string; owner: string },
): Promise<{ turn: Turn; coalesced: string[] } | undefined> {
  // One statement, one round trip (it runs before every turn and once more
  // after it, when it usually finds nothing): lock the session's queued
  // turns (SKIP LOCKED: another claimer's are not ours), start the oldest,
  // cancel the others into it and re-point their messages, append
  // turn_started with its NOTIFY. The audit actor is set by the first CTE;
  // audit triggers fire at the statement's end.
  try {
    const result = await sql<Turn & { coalesced: string[] }>`
      WITH actor AS (
        SELECT set_config('nomos.actor', ${`system:${p.owner}`}, true) AS actor
      ), queued AS (
        SELECT t.id, t.kind, t.created_at FROM turns t, actor
         WHERE t.session_id = ${p.sessionId} AND t.status = 'queued'
         ORDER BY t.created_at, t.id
           FOR UPDATE OF t SKIP LOCKED
      ), first AS (
        SELECT id FROM queued ORDER BY created_at, id LIMIT 1
      ), others AS (
        SELECT q.id, q.created_at FROM queued q, first WHERE q.id <> first.id
      ), claimed AS (
        UPDATE turns t
           SET status = 'running',
               kind = CASE WHEN EXISTS (SELECT 1 FROM queued WHERE kind = 'operator') THEN 'operator' ELSE 'continuation' END,
               started_at = clock_timestamp(),
               owner = ${p.owner},
               lease_expires_at = now() + make_interval(secs => ${TURN_LEASE_SECONDS})
          FROM first
         WHERE t.id = first.id AND t.status = 'queued'
        RETURNING t.*
      ), cancelled AS (
        UPDATE turns t
           SET status = 'cancelled', finished_at = clock_timestamp(), error = 'coalesced into turn ' || claimed.id
          FROM claimed, others
         WHERE t.id = others.id AND t.status = 'queued'
        RETURNING t.id
      ), repointed AS (
        UPDATE messages m SET turn_id = claimed.id
          FROM claimed, others
         WHERE m.turn_id = others.id
        RETURNING m.id
      ), coalesced AS (
        SELECT coalesce(array_agg(o.id::text ORDER BY o.created_at, o.id), '{}') AS ids
          FROM others o, claimed
      ), event AS (
        INSERT INTO session_events (session_id, turn_id, type, data)
        SELECT claimed.session_id, claimed.id, 'turn_started',
               jsonb_build_object('turnId', claimed.id::text, 'kind', claimed.kind, 'coalesced', to_jsonb(coalesced.ids))
               || CASE WHEN claimed.input ? 'reason' THEN jsonb_build_object('reason', claimed.input -> 'reason') ELSE '{}' END
               || CASE WHEN claimed.input ? 'executionIds' THEN jsonb_build_object('executionIds', claimed.input -> 'executionIds') ELSE '{}' END
          FROM claimed, coalesced
        RETURNING session_id
      )
      SELECT claimed.*, coalesced.ids AS coalesced,
             (SELECT pg_notify(${SESSION_EVENTS_CHANNEL}, session_id::text) FROM event) AS notified,
             (SELECT count(*) FROM cancelled) + (SELECT count(*) FROM repointed) AS moved,
             (SELECT actor FROM actor) AS actor
        FROM claimed, coalesced`.execute(db);
    const row = result.rows[0];
    if (!row) return undefined;
    const {
      coalesced,
      notified: _n,
      moved: _m,
      actor: _a,
      ...turn
    } = row as Turn & {
      coalesced: string[];
      notified?: unknown;
      moved?: unknown;
      actor?: unknown;
    };
    return { turn: turn as Turn, coalesced };
  } catch (err) {
    if (isPgError(err, "unique_violation")) return undefined; // a turn is running: it will claim this work when it ends
    throw err;
  }
}

/**
 * Extends a running turn's lease; false when the turn is no longer running (it was declared lost).
 * Audited as system:turns, like turnsInterruptExpired: the heartbeat is the turns machinery's own write.
 */
export async function turnRenewLease(db: Kysely<Database>, p: { turnId: string; iterations?: number }): Promise<boolean> {
  // One statement: the actor is set by the first CTE (audit triggers fire at the statement's end).
  const result = await sql<{ id: string }>`
    WITH actor AS (SELECT set_config('nomos.actor', 'system:turns', true) AS actor)
    UPDATE turns t
       SET iterations = coalesce(${p.iterations ?? null}::integer, t.iterations),
           lease_expires_at = now() + make_interval(secs => ${TURN_LEASE_SECONDS})
      FROM actor
     WHERE t.id = ${p.turnId} AND t.status = 'running'
    RETURNING t.id`.execute(db);
  return result.rows.length > 0;
}

export type TurnEndStatus = Exclude<TurnStatus, "queued" | "running" | "cancelled">;

/** A turn's end: turnEnd without the writes that come with it. */
export async function turnFinish(
  db: Kysely<Database>,
  p: { turnId: string; sessionId: string; status: TurnEndStatus; iterations: number; error?: string | null; actor: string },
): Promise<Turn | undefined> {
  return (await turnEnd(db, p)).turn;
}

/**
 * Ends a running turn in ONE statement with the turn's last writes (issue
 * 20, round 3): the events its writer had not stored yet (text), the model
 * call's usage row and the final reply with its `message` event, then
 * turn_finished, all with one NOTIFY of the session's streams. Events are
 * stored in that order (one INSERT, ordered). The usage row, the reply and
 * the events are stored even when the turn is no longer running (it was
 * declared lost), as they were when each had a statement of its own; only
 * the end and turn_finished need it running.
 *
 * `queuedAfter`: whether the session has queued work, read after the end
 * left 'running' with a snapshot of its own (turns_queued_now, migration
 * 120), so a caller that is not told of work queued in its own process
 * need not claim (see the migration for why nothing queued elsewhere is
 * missed). The audit actor is the caller's: the agent's when its reply
 * comes with the end, the turns machinery's otherwise.
 */
export async function turnEnd(
  db: Kysely<Database>,
  p: {
    turnId: string;
    sessionId: string;
    status: TurnEndStatus;
    iterations: number;
    error?: string | null;
    actor: string;
    /** Events of this turn to store before the end (the writer's rest: EventWriter.takeRest). */
    events?: NewSessionEvent[];
    /** The model call's usage row (usage/model-calls.ts modelCallInsertSql). */
    usage?: ModelCallInput;
    /** The final reply, stored as the turn's assistant message. */
    reply?: unknown[];
  },
): Promise<{ turn: Turn | undefined; queuedAfter: boolean }> {
  if (!/^[a-z]+:\S{1,200}$/.test(p.actor)) throw new Error(`turnEnd: actor must read "<kind>:<name>", got "${p.actor}"`);
  const events = (p.events ?? []).map((e, i) => ({ ord: i, type: e.type, data: storableDeep(e.data) }));
  const usage = p.usage ? modelCallInsertSql(p.usage) : sql`SELECT NULL::bigint AS id WHERE false`;
  const reply =
    p.reply && p.reply.length > 0
      ? messageInsertSql({ sessionId: p.sessionId, turnId: p.turnId, kind: "assistant", content: p.reply })
      : sql`SELECT * FROM messages WHERE false`;
  const result = await sql<Turn & { queued_after: boolean | null }>`
    WITH actor AS (
      SELECT set_config('nomos.actor', ${p.actor}, true) AS actor
    ), done AS (
      UPDATE turns t
         SET status = ${p.status}, iterations = ${p.iterations}, error = ${p.error ?? null}::text,
             finished_at = clock_timestamp(), lease_expires_at = NULL
       WHERE t.id = ${p.turnId} AND t.status = 'running'
      RETURNING t.*
    ), call AS (${usage}
    ), msg AS (${reply}
    ), event AS (
      INSERT INTO session_events (session_id, turn_id, type, data)
      SELECT ${p.sessionId}::uuid, e.turn_id, e.type, e.data
        FROM (SELECT 0 AS grp, x.ord, ${p.turnId}::uuid AS turn_id, x.type, x.data
                FROM jsonb_to_recordset(${JSON.stringify(events)}::text::jsonb) AS x(ord integer, type text, data jsonb)
              UNION ALL
              SELECT 1, 0, msg.turn_id, 'message', jsonb_build_object('message', ${messageViewSql("msg")}) FROM msg
              UNION ALL
              SELECT 2, 0, done.id, 'turn_finished',
                     jsonb_strip_nulls(jsonb_build_object('turnId', done.id::text, 'status', done.status, 'error', done.error))
                FROM done) e
       ORDER BY e.grp, e.ord
      RETURNING session_id
    )
    SELECT d.*, turns_queued_now(d.session_id) AS queued_after,
           (SELECT pg_notify(${SESSION_EVENTS_CHANNEL}, ${p.sessionId}::text) WHERE EXISTS (SELECT 1 FROM event)) AS notified,
           (SELECT count(*) FROM call) AS calls,
           (SELECT actor FROM actor) AS actor
      FROM (SELECT 1) one LEFT JOIN done d ON true`.execute(db);
  const row = result.rows[0] as (Turn & { queued_after: boolean | null; notified?: unknown; calls?: unknown; actor?: unknown }) | undefined;
  if (!row || row.id === null) return { turn: undefined, queuedAfter: false };
  const { queued_after, notified: _n, calls: _c, actor: _a, ...turn } = row;
  return { turn: turn as Turn, queuedAfter: queued_after === true };
}

/** Running turns whose process stopped renewing their lease: marked interrupted, so their sessions can run again. */
export async function turnsInterruptExpired(db: Kysely<Database>): Promise<Turn[]> {
  return withActor(db, "system:turns", async (tx) => {
    const turns = await tx
      .updateTable("turns")
      .set({ status: "interrupted", finished_at: sql`clock_timestamp()`, error: "the process running it stopped (lease expired)" })
      .where("status", "=", "running")
      .where("lease_expires_at", "<", sql<Date>`now()`)
      .returningAll()
      .execute();
    await sessionEventsAppend(
      tx,
      turns.map((t) => ({
        sessionId: t.session_id,
        turnId: t.id,
        type: "turn_finished" as const,
        data: { turnId: t.id, status: "interrupted" },
      })),
    );
    return turns;
  });
}

/** Sessions with queued work and no running turn. */
export async function turnsSessionsWaiting(db: Kysely<Database>): Promise<string[]> {
  const rows = await db
    .selectFrom("turns as q")
    .select("q.session_id")
    .distinct()
    .where("q.status", "=", "queued")
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom("turns as r").select("r.id").whereRef("r.session_id", "=", "q.session_id").where("r.status", "=", "running"))),
    )
    .execute();
  return rows.map((r) => r.session_id);
}

// Queues a continuation turn with its system note in ONE statement: the
// turn row, the system_note message, its `message` event with the stream's
// NOTIFY, and the delivery mark on the continuation ledger. This is the last
// hop of the event loop (NOTIFY -> claim -> here), so it is one round trip
// instead of a transaction of seven.
//
// Invariants: all of it commits together or not at all (a single statement
// is its own transaction); the audit actor is set before any row changes
// (audit triggers are AFTER ROW triggers, fired when the statement ends, and
// the `actor` CTE is evaluated first because every insert reads from it); the
// event carries the message's one view (sessions/message-view.ts); a
// session that does not exist fails on the turn's foreign key; a note
// holding what PostgreSQL cannot store (NUL, a lone surrogate) is kept with
// U+FFFD in its place (db/storable.ts).
import { type Kysely, sql } from "kysely";
import type { Database } from "../db/schema.js";
import { storableDeep } from "../db/storable.js";
import { SESSION_EVENTS_CHANNEL } from "../events/session-events.js";
import { messageViewSql } from "../sessions/message-view.js";

export async function turnQueueContinuation(
  db: Kysely<Database>,
  p: {
    sessionId: string;
    actor: string;
    notes: string[];
    executionIds: string[];
    reason: string | null;
  },
): Promise<{ turnId: string }> {
  const notes = storableDeep(p.notes);
  const input = { notes, executionIds: p.executionIds, reason: p.reason };
  const content = [{ type: "text", text: notes.join("\n") }];
  const result = await sql<{ turn_id: string }>`
    WITH actor AS (
      SELECT set_config('nomos.actor', ${p.actor}, true) AS actor
    ), turn AS (
      INSERT INTO turns (session_id, kind, input)
      SELECT ${p.sessionId}::uuid, 'continuation', ${input}::jsonb FROM actor
      RETURNING id, session_id
    ), delivered AS (
      UPDATE nomos_plan_executions SET delivered_turn_id = turn.id
        FROM turn
       WHERE execution_id = ANY(${p.executionIds}::uuid[]) AND delivered_turn_id IS NULL
      RETURNING execution_id
    ), note AS (
      INSERT INTO messages (session_id, turn_id, kind, content)
      SELECT turn.session_id, turn.id, 'system_note', ${content}::jsonb FROM turn
      RETURNING id, session_id, turn_id, kind, content, created_at
    ), event AS (
      INSERT INTO session_events (session_id, turn_id, type, data)
      SELECT note.session_id, note.turn_id, 'message',
             jsonb_build_object('message', ${messageViewSql("note")})
        FROM note
      RETURNING session_id
    )
    SELECT turn.id AS turn_id,
           pg_notify(${SESSION_EVENTS_CHANNEL}, (SELECT session_id::text FROM event)),
           (SELECT count(*) FROM delivered) AS delivered
      FROM turn`.execute(db);
  const row = result.rows[0];
  if (!row) throw new Error(`queueing a continuation turn for session ${p.sessionId} returned no row`);
  return { turnId: row.turn_id };
}

// The transcript's writes. Invariant: assistant content is stored exactly as
// the model returned it (tool_use ids included), tool_results as the blocks
// sent back, operator words and system notes as [{type: "text", text}], so a
// replay pairs every tool_use with its tool_result. Each row is announced by
// a `message` event in the same statement. The one exception to "exactly":
// a NUL or lone surrogate the model sent is stored as U+FFFD (db/storable.ts),
// since PostgreSQL's jsonb cannot hold it and refusing would lose the reply.
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { Database, Message, MessageKind } from "../db/schema.js";
import { storableDeep } from "../db/storable.js";
import { SESSION_EVENTS_CHANNEL } from "../events/session-events.js";
import { messageViewSql } from "../sessions/message-view.js";

/**
 * The row as an INSERT ... RETURNING * to embed as a CTE in a caller's
 * statement (the turn's last one, turn-store.ts turnEnd), which announces
 * it with its `message` event (messageViewSql) and sets the audit actor.
 */
export function messageInsertSql(p: {
  sessionId: string;
  turnId: string | null;
  kind: MessageKind;
  content: unknown[];
}): RawBuilder<unknown> {
  return sql`
      INSERT INTO messages (session_id, turn_id, kind, content)
      VALUES (${p.sessionId}::uuid, ${p.turnId}::uuid, ${p.kind}, ${storableDeep(p.content)}::jsonb)
      RETURNING *`;
}

/**
 * Appends a row and its `message` event (with the stream's NOTIFY) in ONE
 * statement. Given `actor`, the statement sets the audit actor itself (its
 * first CTE; audit triggers fire at the statement's end), so a caller with
 * nothing else to write needs no transaction: one round trip instead of four.
 */
export async function messageAppend(
  tx: Kysely<Database>,
  p: { sessionId: string; turnId: string | null; kind: MessageKind; content: unknown[]; actor?: string },
): Promise<Message> {
  if (p.actor !== undefined && !/^[a-z]+:\S{1,200}$/.test(p.actor)) {
    throw new Error(`messageAppend: actor must read "<kind>:<name>", got "${p.actor}"`);
  }
  const content = storableDeep(p.content);
  const result = await sql<Message>`
    WITH actor AS (
      SELECT CASE WHEN ${p.actor ?? null}::text IS NULL THEN NULL
                  ELSE set_config('nomos.actor', ${p.actor ?? null}::text, true) END AS actor
    ), msg AS (
      INSERT INTO messages (session_id, turn_id, kind, content)
      SELECT ${p.sessionId}::uuid, ${p.turnId}::uuid, ${p.kind}, ${content}::jsonb FROM actor
      RETURNING *
    ), event AS (
      INSERT INTO session_events (session_id, turn_id, type, data)
      SELECT msg.session_id, msg.turn_id, 'message', jsonb_build_object('message', ${messageViewSql("msg")})
        FROM msg
      RETURNING session_id
    )
    SELECT msg.*, (SELECT pg_notify(${SESSION_EVENTS_CHANNEL}, session_id::text) FROM event) AS notified
      FROM msg`.execute(tx);
  const row = result.rows[0] as (Message & { notified?: unknown }) | undefined;
  if (!row) throw new Error(`appending a ${p.kind} message to session ${p.sessionId} returned no row`);
  const { notified: _n, ...message } = row;
  return message as Message;
}

// The session event stream's storage: every event a browser sees on
// GET /api/sessions/:id/events is a row of session_events, whose id is the
// SSE event id. Invariants:
// - An event is appended in the transaction that caused it (a decided
//   approval and its approval_decided event commit together, or neither).
// - Appending NOTIFYs 'nomos_session_events' with the session id, so a
//   stream served by any process learns there is more to read. PostgreSQL
//   folds identical NOTIFYs of one transaction into one, and readers fetch
//   everything after the last id they sent, so a burst of events costs one
//   wake-up, not one per event.
// - What each event type carries is events/contract.ts's; events stored under
//   a name since renamed (`error`, now `turn_failed`) are read back under the
//   current name.
// - An event's data is stored even when it holds a NUL or a lone surrogate
//   (model text may): those become U+FFFD (db/storable.ts).
import { type Kysely, sql } from "kysely";
import type { Database } from "../db/schema.js";
import { storableDeep } from "../db/storable.js";
import { LEGACY_EVENT_TYPES, type SessionEventOf, type SessionEventType } from "./contract.js";

export const SESSION_EVENTS_CHANNEL = "nomos_session_events";

export type { SessionEventType } from "./contract.js";

/** An event to append: its data typed by its type (events/contract.ts). */
export type NewSessionEvent = {
  sessionId: string;
  turnId?: string | null;
} & SessionEventOf;

export type StoredSessionEvent = {
  id: string;
  sessionId: string;
  turnId: string | null;
  createdAt: Date;
} & SessionEventOf;

/** A stored type as the contract names it today (events written before a rename keep their old name). */
function currentType(type: string): SessionEventType {
  return (LEGACY_EVENT_TYPES as Record<string, SessionEventType>)[type] ?? (type as SessionEventType);
}

/** Appends events (in order) and wakes the streams; pass a transaction to tie them to a change. */
export async function sessionEventsAppend(db: Kysely<Database>, events: NewSessionEvent[]): Promise<{ ids: string[] }> {
  if (events.length === 0) return { ids: [] };
  // One statement: the rows and their wake-up travel in one round trip
  // (pg_notify per row; PostgreSQL folds identical ones in a transaction).
  const rows = await db
    .with("ins", (qb) =>
      qb
        .insertInto("session_events")
        .values(
          events.map((e) => ({
            session_id: e.sessionId,
            turn_id: e.turnId ?? null,
            type: e.type,
            data: storableDeep(e.data),
          })),
        )
        .returning(["id", "session_id"]),
    )
    .selectFrom("ins")
    .select((eb) => ["ins.id", eb.fn("pg_notify", [eb.val(SESSION_EVENTS_CHANNEL), sql<string>`ins.session_id::text`]).as("n")])
    .execute();
  // Identity values come back in insertion order within one INSERT.
  return { ids: rows.map((r) => r.id).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)) };
}

/** Events of a session after the given id (exclusive), oldest first. */
export async function sessionEventsAfter(
  db: Kysely<Database>,
  params: { sessionId: string; afterId: string; limit?: number },
): Promise<StoredSessionEvent[]> {
  const rows = await db
    .selectFrom("session_events")
    .selectAll()
    .where("session_id", "=", params.sessionId)
    .where("id", ">", params.afterId)
    .orderBy("id")
    .limit(params.limit ?? 500)
    .execute();
  return rows.map(
    (r) =>
      ({
        id: r.id,
        sessionId: r.session_id,
        turnId: r.turn_id,
        type: currentType(r.type),
        data: r.data,
        createdAt: r.created_at,
      }) as StoredSessionEvent,
  );
}

/** The id of a session's newest event, "0" when it has none. */
export async function sessionEventsLastId(db: Kysely<Database>, params: { sessionId: string }): Promise<string> {
  const row = await db
    .selectFrom("session_events")
    .select((eb) => eb.fn.max("id").as("last"))
    .where("session_id", "=", params.sessionId)
    .executeTakeFirst();
  return row?.last ? String(row.last) : "0";
}

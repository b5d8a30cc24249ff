// Reading sessions for the API: the list, and one session with its
// transcript, assent window and the id of its newest event (where its event
// stream starts). Read-only; shapes are the camelCase JSON of DESIGN.md.
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.js";
import { sessionEventsLastId } from "../../events/session-events.js";

export async function sessionList(db: Kysely<Database>) {
  const rows = await db
    .selectFrom("sessions as s")
    .select([
      "s.id",
      "s.title",
      "s.created_at",
      (eb) =>
        eb
          .selectFrom("session_events as e")
          .select((e) => e.fn.max("e.created_at").as("m"))
          .whereRef("e.session_id", "=", "s.id")
          .as("last_activity_at"),
      (eb) =>
        eb
          .selectFrom("approvals as a")
          .select((e) => e.fn.countAll<string>().as("n"))
          .whereRef("a.session_id", "=", "s.id")
          .where("a.status", "=", "pending")
          .as("pending_approvals"),
    ])
    .orderBy("s.created_at", "desc")
    .orderBy("s.id", "desc")
    .limit(500)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    title: r.title,
    createdAt: r.created_at,
    lastActivityAt: r.last_activity_at ?? r.created_at,
    pendingApprovals: Number(r.pending_approvals ?? 0),
  }));
}

export async function assentWindowRead(db: Kysely<Database>, params: { sessionId: string }) {
  const row = await db
    .selectFrom("assent_windows")
    .select(["id", "expires_at", "scope_targets", "continuations"])
    .where("session_id", "=", params.sessionId)
    .where("closed_at", "is", null)
    .where("expires_at", ">", new Date())
    .executeTakeFirst();
  return row
    ? { open: true, expiresAt: row.expires_at, scopeTargets: row.scope_targets, continuations: row.continuations }
    : { open: false, expiresAt: null, scopeTargets: [] as string[], continuations: 0 };
}

export async function sessionGet(db: Kysely<Database>, params: { sessionId: string }) {
  const session = await db.selectFrom("sessions").selectAll().where("id", "=", params.sessionId).executeTakeFirst();
  if (!session) return undefined;
  // The id is read before the transcript: an event written in between is
  // then sent again on the stream rather than lost.
  const lastEventId = await sessionEventsLastId(db, params);
  const [messages, assent, running] = await Promise.all([
    db
      .selectFrom("messages")
      .select(["id", "kind", "content", "turn_id", "created_at"])
      .where("session_id", "=", params.sessionId)
      .orderBy("id")
      .execute(),
    assentWindowRead(db, params),
    db
      .selectFrom("turns")
      .select(["id", "kind"])
      .where("session_id", "=", params.sessionId)
      .where("status", "=", "running")
      .executeTakeFirst(),
  ]);
  return {
    id: session.id,
    title: session.title,
    createdAt: session.created_at,
    lastEventId,
    assent,
    runningTurn: running ? { id: running.id, kind: running.kind } : null,
    messages: messages.map((m) => ({
      id: m.id,
      kind: m.kind,
      content: m.content,
      turnId: m.turn_id,
      createdAt: m.created_at,
    })),
  };
}

export async function sessionExists(db: Kysely<Database>, params: { sessionId: string }): Promise<boolean> {
  const row = await db.selectFrom("sessions").select("id").where("id", "=", params.sessionId).executeTakeFirst();
  return row !== undefined;
}

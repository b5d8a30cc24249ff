// Sessions: creating one, naming it after its first message, listing them,
// and the view of one (transcript, assent window, running turn, and the id
// of its newest event, where its event stream starts). The only module that
// writes `sessions`; the length cap of an operator's message is here, and
// both the API and Turns.chat enforce this one number.
// Invariants: every write runs as the operator who asked (withActor, so
// the audit trail names them); a session is renamed
// only while it still has the default title, so an operator's own title is
// never overwritten; views are the camelCase JSON of DESIGN.md, the message
// view is sessions/message-view.ts's and "is the window open" is
// assentWindowCurrent's (database clock); a session's state is
// session-state.ts's, its checklist plans/plan-steps.ts's and its usage
// usage/model-calls.ts's.
import type { Kysely } from "kysely";
import { assentWindowCurrent } from "../assent/window.js";
import type { Database } from "../db/schema.js";
import { withActor } from "../db/with-actor.js";
import { sessionEventsLastId } from "../events/session-events.js";
import { planChecklist, planLatestApprovedId } from "../plans/plan-steps.js";
import { modelCallsSum } from "../usage/model-calls.js";
import { messageView } from "./message-view.js";
import { sessionStates } from "./session-state.js";

/** The longest operator message, in characters (after trimming). */
export const SESSION_MESSAGE_MAX_CHARS = 20_000;
/** A session's title until its first message names it. */
export const SESSION_DEFAULT_TITLE = "New session";
/** How many characters of the first message a session's title keeps. */
const TITLE_FROM_MESSAGE_CHARS = 60;

export async function sessionCreate(db: Kysely<Database>, p: { title?: string; operatorId: string | null; actor: string }) {
  const row = await withActor(db, p.actor, (tx) =>
    tx
      .insertInto("sessions")
      .values({ title: p.title ?? SESSION_DEFAULT_TITLE, operator_id: p.operatorId })
      .returning(["id", "title", "created_at"])
      .executeTakeFirstOrThrow(),
  );
  return { id: row.id, title: row.title, createdAt: row.created_at };
}

/** A session still called "New session" is named after its first words; any other title stays. */
export async function sessionNameFromMessage(db: Kysely<Database>, p: { sessionId: string; text: string; actor: string }) {
  await withActor(db, p.actor, (tx) =>
    tx
      .updateTable("sessions")
      .set({ title: p.text.replace(/\s+/g, " ").slice(0, TITLE_FROM_MESSAGE_CHARS) })
      .where("id", "=", p.sessionId)
      .where("title", "=", SESSION_DEFAULT_TITLE)
      .execute(),
  );
}

export async function sessionExists(db: Kysely<Database>, p: { sessionId: string }): Promise<boolean> {
  const row = await db.selectFrom("sessions").select("id").where("id", "=", p.sessionId).executeTakeFirst();
  return row !== undefined;
}

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
  const states = new Map((await sessionStates(db, { sessionIds: rows.map((r) => r.id) })).map((s) => [s.sessionId, s.state]));
  return rows.map((r) => ({
    id: r.id,
    title: r.title,
    createdAt: r.created_at,
    lastActivityAt: r.last_activity_at ?? r.created_at,
    pendingApprovals: Number(r.pending_approvals ?? 0),
    state: states.get(r.id) ?? "idle",
  }));
}

/** The session's assent window as the API shows it (open or not, on the database clock). */
export async function sessionAssentView(db: Kysely<Database>, p: { sessionId: string }) {
  const w = await assentWindowCurrent(db, p);
  return { open: w.open, expiresAt: w.expiresAt, scopeTargets: w.scopeTargets, continuations: w.continuations };
}

export async function sessionView(db: Kysely<Database>, p: { sessionId: string }) {
  const session = await db.selectFrom("sessions").selectAll().where("id", "=", p.sessionId).executeTakeFirst();
  if (!session) return undefined;
  // The id is read before the transcript: an event written in between is
  // then sent again on the stream rather than lost.
  const lastEventId = await sessionEventsLastId(db, p);
  const [messages, assent, running, states, usage, planId] = await Promise.all([
    db.selectFrom("messages").selectAll().where("session_id", "=", p.sessionId).orderBy("id").execute(),
    sessionAssentView(db, p),
    db.selectFrom("turns").select(["id", "kind"]).where("session_id", "=", p.sessionId).where("status", "=", "running").executeTakeFirst(),
    sessionStates(db, { sessionIds: [p.sessionId] }),
    modelCallsSum(db, { sessionId: p.sessionId }),
    planLatestApprovedId(db, p),
  ]);
  const plan = planId ? await planChecklist(db, { planId }) : undefined;
  return {
    id: session.id,
    title: session.title,
    createdAt: session.created_at,
    lastEventId,
    assent,
    runningTurn: running ? { id: running.id, kind: running.kind } : null,
    state: states[0]?.state ?? "idle",
    usage,
    /** The latest approved plan's checklist, with its usage; null before any plan is approved. */
    plan: plan ?? null,
    messages: messages.map(messageView),
  };
}

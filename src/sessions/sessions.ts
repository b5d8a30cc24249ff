// Sessions: creating one, naming it after its first message, listing them,
// and the view of one (transcript, assent window, running turn, and the id
// of its newest event, where its event stream starts). The only module that
// writes `sessions`; the length cap of an operator's message is here, and
// both the API and Turns.chat enforce this one number.
// Invariants: every write runs as the operator who asked (withActor, so
// the audit trail names them); a session is named after its first message
// only while it still has the default title, so an operator's own title is
// never overwritten; an archived session (the page's "Delete", a soft
// delete kept in the audit trail) is gone for every reader here: it is not
// listed, not viewed, does not "exist"; views are the camelCase JSON of DESIGN.md, the message
// view is sessions/message-view.ts's and "is the window open" is
// assentWindowCurrent's (database clock); a session's state is
// session-state.ts's, its checklist plans/plan-steps.ts's and its usage
// usage/model-calls.ts's.
import { type Kysely, sql } from "kysely";
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
/** The longest title a first message gives a session, in characters. */
export const TITLE_FROM_MESSAGE_CHARS = 50;

/**
 * A short title from a first message: its first sentence (or line), cut at
 * the last whole word within TITLE_FROM_MESSAGE_CHARS, with an ellipsis when
 * words were dropped. "Deploy TypeType on pve1. Use Debian 12 and…" becomes
 * "Deploy TypeType on pve1". Never cuts inside a word, unless the first word
 * alone is longer than the limit.
 */
export function sessionTitleFrom(text: string): string {
  const firstLine = text.trim().split(/\n/)[0] ?? "";
  const sentence = (/^(.+?[.!?])(\s|$)/.exec(firstLine)?.[1] ?? firstLine).replace(/\s+/g, " ").trim();
  const bare = sentence.replace(/[.!:;,]+$/, "");
  if (bare.length <= TITLE_FROM_MESSAGE_CHARS) return bare || SESSION_DEFAULT_TITLE;
  const room = bare.slice(0, TITLE_FROM_MESSAGE_CHARS);
  const cut = room.lastIndexOf(" ");
  const words = (cut > 0 ? room.slice(0, cut) : room).replace(/[\s.,;:!?\-–—(]+$/, "");
  return `${words}…`;
}

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
      .set({ title: sessionTitleFrom(p.text) })
      .where("id", "=", p.sessionId)
      .where("title", "=", SESSION_DEFAULT_TITLE)
      .execute(),
  );
}

export async function sessionExists(db: Kysely<Database>, p: { sessionId: string }): Promise<boolean> {
  const row = await db
    .selectFrom("sessions")
    .select("id")
    .where("id", "=", p.sessionId)
    .where("archived_at", "is", null)
    .executeTakeFirst();
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
      (eb) =>
        eb
          .selectFrom("messages as m")
          .select((e) => e.fn.countAll<string>().as("n"))
          .whereRef("m.session_id", "=", "s.id")
          .where("m.kind", "=", "operator")
          .as("operator_messages"),
    ])
    .where("s.archived_at", "is", null)
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
    /** How many messages the operator sent: 0 is an empty session, which the page reuses for "+ New". */
    operatorMessages: Number(r.operator_messages ?? 0),
    state: states.get(r.id) ?? "idle",
  }));
}

/** The session's assent window as the API shows it (open or not, on the database clock). */
export async function sessionAssentView(db: Kysely<Database>, p: { sessionId: string }) {
  const w = await assentWindowCurrent(db, p);
  return { open: w.open, expiresAt: w.expiresAt, scopeTargets: w.scopeTargets, continuations: w.continuations };
}

export async function sessionView(db: Kysely<Database>, p: { sessionId: string }) {
  const session = await db
    .selectFrom("sessions")
    .selectAll()
    .where("id", "=", p.sessionId)
    .where("archived_at", "is", null)
    .executeTakeFirst();
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

/** The operator's own title; answers whether the session was there (and not archived) to rename. */
export async function sessionRename(db: Kysely<Database>, p: { sessionId: string; title: string; actor: string }): Promise<boolean> {
  const rows = await withActor(db, p.actor, (tx) =>
    tx
      .updateTable("sessions")
      .set({ title: p.title })
      .where("id", "=", p.sessionId)
      .where("archived_at", "is", null)
      .returning("id")
      .execute(),
  );
  return rows.length > 0;
}

/** Why a session cannot be archived now, in words the operator can act on; null when it can. */
export async function sessionArchiveBlocker(db: Kysely<Database>, p: { sessionId: string }): Promise<string | null> {
  const [running, assent, pending, active] = await Promise.all([
    db.selectFrom("turns").select("id").where("session_id", "=", p.sessionId).where("status", "=", "running").executeTakeFirst(),
    assentWindowCurrent(db, p),
    db.selectFrom("approvals").select("id").where("session_id", "=", p.sessionId).where("status", "=", "pending").executeTakeFirst(),
    db
      .selectFrom("executions")
      .select("id")
      .where("session_id", "=", p.sessionId)
      .where("status", "in", ["approved", "running"])
      .executeTakeFirst(),
  ]);
  if (running) return "Nomos is working in this session: press Stop, then delete it.";
  if (assent.open) return "Autonomy is on in this session: press Stop, then delete it.";
  if (active) return "A step of this session is still running: cancel it or let it finish, then delete the session.";
  if (pending) return "This session has approvals waiting: approve or reject them, then delete it.";
  return null;
}

/**
 * Archives the session (the page's "Delete"): one conditional UPDATE, so a
 * session is archived once; answers whether it did. The row stays, and the
 * audit trigger records who archived it and when.
 */
export async function sessionArchive(db: Kysely<Database>, p: { sessionId: string; actor: string }): Promise<boolean> {
  const rows = await withActor(db, p.actor, (tx) =>
    tx
      .updateTable("sessions")
      .set({ archived_at: sql<Date>`now()` })
      .where("id", "=", p.sessionId)
      .where("archived_at", "is", null)
      .returning("id")
      .execute(),
  );
  return rows.length > 0;
}

// The outbox (060): which session events become notifications, what they
// say, who receives them, and that they commit with their event or not at
// all. No notifier runs here: these are the rows it would deliver.
import { type Kysely, sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { assentWindowsCloseExpired } from "../src/assent/window.js";
import type { Database } from "../src/db/schema.js";
import { withActor } from "../src/db/with-actor.js";
import { type NewSessionEvent, sessionEventsAppend } from "../src/events/session-events.js";
import { notificationChannelSet } from "../src/notifications/channels.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeRunningExecution, makeSession, makeWindow } from "./helpers/factories.js";

const t = useTestDatabase();
let db: Kysely<Database>;
const ops: Record<string, string> = {};

beforeAll(async () => {
  db = t.db.kysely;
  for (const [username, role] of [
    ["ann", "admin"],
    ["otto", "operator"],
    ["vera", "viewer"],
  ] as const) {
    const row = await db
      .insertInto("operators")
      .values({ username, password_hash: "scrypt$unused", role })
      .returning("id")
      .executeTakeFirstOrThrow();
    ops[username] = row.id;
    await withActor(db, "operator:test", (tx) =>
      notificationChannelSet(tx, { operatorId: row.id, kind: "ntfy", url: `http://127.0.0.1:9/${username}` }),
    );
  }
});

type Ev = Omit<NewSessionEvent, "sessionId">;
async function append(sessionId: string, ...events: Ev[]) {
  await withActor(db, "system:test", (tx) =>
    sessionEventsAppend(
      tx,
      events.map((e) => ({ ...e, sessionId }) as NewSessionEvent),
    ),
  );
}
const notificationsOf = (sessionId: string) =>
  db.selectFrom("notifications").select(["type", "title", "text"]).where("session_id", "=", sessionId).orderBy("event_id").execute();

describe("the outbox", () => {
  it("maps events to notification types, and ignores the rest", async () => {
    const s = await makeSession(db, { title: "Web", operator_id: ops.otto });
    await append(
      s.id,
      { type: "text_delta", data: { text: "hello" } },
      { type: "turn_failed", data: { message: "the model API failed: 529 overloaded" } },
      { type: "turn_failed", data: { message: "Stopped after 40 continuation turns", reason: "continuation_limit" } },
      { type: "assent_changed", data: { open: false, expiresAt: null, reason: "continuation_limit" } },
      { type: "assent_changed", data: { open: false, expiresAt: null, reason: "revoked", by: "operator:otto" } },
      { type: "assent_changed", data: { open: false, expiresAt: null, reason: "budget" } },
      {
        type: "plan_finished",
        data: { planId: null, goal: "g", outcome: "verified", summary: "done and verified", needs: null, windowClosed: true },
      },
    );
    expect(await notificationsOf(s.id)).toEqual([
      { type: "turn_failed", title: "Turn failed: Web", text: "the model API failed: 529 overloaded" },
      { type: "continuation_limit", title: "Loop guard reached: Web", text: "Stopped after 40 continuation turns" },
      {
        type: "window_expired",
        title: "Token budget reached: Web",
        text: "The window's token budget was reached, so the window closed. Approve again to let the agent go on.",
      },
      { type: "plan_finished", title: "Plan finished: Web", text: "done and verified" },
    ]);
  });

  it("an expired window notifies only when results wait for the operator", async () => {
    const waiting = await makeSession(db, { title: "Waiting", operator_id: ops.otto });
    await makeWindow(db, waiting.id, -1);
    await makeRunningExecution(db, waiting.id);
    const idle = await makeSession(db, { title: "Idle", operator_id: ops.otto });
    await makeWindow(db, idle.id, -1);
    const open = await makeSession(db, { title: "Open", operator_id: ops.otto });
    await makeWindow(db, open.id, 30);

    const { sessionIds } = await withActor(db, "system:sweep", (tx) => assentWindowsCloseExpired(tx));
    expect(sessionIds.sort()).toEqual([waiting.id, idle.id].sort());
    expect(await notificationsOf(waiting.id)).toEqual([
      {
        type: "window_expired",
        title: "Autonomy window expired: Waiting",
        text: "The assent window expired with 1 result(s) waiting for your next message.",
      },
    ]);
    expect(await notificationsOf(idle.id)).toEqual([]);
    // Closed once: a second sweep (another replica) closes nothing.
    expect((await withActor(db, "system:sweep", (tx) => assentWindowsCloseExpired(tx))).sessionIds).toEqual([]);
    const events = await db
      .selectFrom("session_events")
      .select("data")
      .where("session_id", "=", waiting.id)
      .where("type", "=", "assent_changed")
      .execute();
    expect(events.map((e) => e.data)).toEqual([{ open: false, expiresAt: null, reason: "expired" }]);
  });

  it("goes to the session's operator, or to every operator and admin when the session has none", async () => {
    const own = await makeSession(db, { operator_id: ops.vera });
    const nobodys = await makeSession(db);
    for (const s of [own, nobodys]) await append(s.id, { type: "turn_failed", data: { message: "boom" } });
    const recipients = async (sessionId: string) =>
      (
        await db
          .selectFrom("notification_deliveries as d")
          .innerJoin("notifications as n", "n.id", "d.notification_id")
          .innerJoin("operators as o", "o.id", "d.operator_id")
          .select("o.username")
          .where("n.session_id", "=", sessionId)
          .execute()
      )
        .map((r) => r.username)
        .sort();
    expect(await recipients(own.id)).toEqual(["vera"]);
    expect(await recipients(nobodys.id)).toEqual(["ann", "otto"]);
  });

  it("commits with its event or not at all, and holds one delivery per event per channel", async () => {
    const s = await makeSession(db, { operator_id: ops.ann });
    await expect(
      withActor(db, "system:test", async (tx) => {
        await sessionEventsAppend(tx, [{ sessionId: s.id, type: "turn_failed", data: { message: "rolled back" } }]);
        throw new Error("the transaction fails after the event");
      }),
    ).rejects.toThrow(/after the event/);
    expect(await notificationsOf(s.id)).toEqual([]);

    await append(s.id, { type: "turn_failed", data: { message: "kept" } });
    const d = await db
      .selectFrom("notification_deliveries as d")
      .innerJoin("notifications as n", "n.id", "d.notification_id")
      .selectAll("d")
      .where("n.session_id", "=", s.id)
      .executeTakeFirstOrThrow();
    await expect(
      db
        .insertInto("notification_deliveries")
        .values({
          notification_id: d.notification_id,
          operator_id: d.operator_id,
          channel: d.channel,
          channel_ref: d.channel_ref,
          destination: "again",
        })
        .execute(),
    ).rejects.toThrow(/notification_deliveries_idempotency_key/);
  });
});

describe("the outbox's audit trail", () => {
  it("names the event's actor, or system:notifications for an event appended outside withActor, and leaves the rest unnamed", async () => {
    const s = await makeSession(db, { operator_id: ops.ann });
    await append(s.id, { type: "turn_failed", data: { message: "with an actor" } });
    // As a turn's EventWriter appends: no actor in the transaction.
    await sessionEventsAppend(db, [{ sessionId: s.id, type: "turn_failed", data: { message: "without one" } }]);
    const actors = await db
      .selectFrom("audit.events")
      .select(["table_name", "actor"])
      .where("session_id", "=", s.id)
      .where("table_name", "=", "notifications")
      .orderBy("id")
      .execute();
    expect(actors.map((a) => a.actor)).toEqual(["system:test", "system:notifications"]);
    // The actor was lent for the trigger's own inserts only.
    const after = await db.transaction().execute(async (tx) => {
      await sessionEventsAppend(tx, [{ sessionId: s.id, type: "turn_failed", data: { message: "and then" } }]);
      return (await sql<{ a: string | null }>`SELECT nullif(current_setting('nomos.actor', true), '') AS a`.execute(tx)).rows[0]!.a;
    });
    expect(after).toBeNull();
  });
});

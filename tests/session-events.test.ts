// The stored event stream: appended in order with ids a browser can resume
// from, one wake-up per transaction, and text deltas coalesced without
// reordering them around other events; a failure stored under its old name
// (error) reads back as turn_failed.
import { describe, expect, it } from "vitest";
import { SESSION_EVENT_TYPES } from "../src/events/contract.js";
import { EventWriter } from "../src/events/event-writer.js";
import { SESSION_EVENTS_CHANNEL, sessionEventsAfter, sessionEventsAppend, sessionEventsLastId } from "../src/events/session-events.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";

const t = useTestDatabase();

describe("session events", () => {
  it("reads back after any id, in order, and knows the last id", async () => {
    const s = await makeSession(t.db.kysely);
    expect(await sessionEventsLastId(t.db.kysely, { sessionId: s.id })).toBe("0");
    const { ids } = await sessionEventsAppend(t.db.kysely, [
      { sessionId: s.id, type: "turn_started", data: { turnId: "t", kind: "operator" } },
      { sessionId: s.id, type: "text_delta", data: { text: "hello" } },
      { sessionId: s.id, type: "turn_finished", data: { turnId: "t", status: "completed" } },
    ]);
    expect(await sessionEventsLastId(t.db.kysely, { sessionId: s.id })).toBe(ids[2]);
    const after = await sessionEventsAfter(t.db.kysely, { sessionId: s.id, afterId: ids[0]! });
    expect(after.map((e) => [e.id, e.type])).toEqual([
      [ids[1], "text_delta"],
      [ids[2], "turn_finished"],
    ]);
  });

  it("wakes listeners once per transaction, with the session id", async () => {
    const s = await makeSession(t.db.kysely);
    const listener = t.connect({ max: 1 });
    const got: string[] = [];
    const { unlisten } = await listener.sql.listen(SESSION_EVENTS_CHANNEL, (p) => got.push(p));
    await t.db.kysely.transaction().execute(async (tx) => {
      await sessionEventsAppend(tx, [{ sessionId: s.id, type: "text_delta", data: { text: "a" } }]);
      await sessionEventsAppend(tx, [{ sessionId: s.id, type: "text_delta", data: { text: "b" } }]);
    });
    await t.db.sql`SELECT pg_notify(${SESSION_EVENTS_CHANNEL}, 'marker')`;
    for (let i = 0; i < 200 && !got.includes("marker"); i++) await new Promise((r) => setTimeout(r, 5));
    expect(got).toEqual([s.id, "marker"]);
    await unlisten();
  });

  it("coalesces text deltas and keeps them before the event that follows", async () => {
    const s = await makeSession(t.db.kysely);
    const writer = new EventWriter(t.db.kysely, s.id, null, 10_000);
    writer.text("Let me ");
    writer.text("check the ");
    writer.text("disk.");
    await writer.emit("tool_use", { id: "tu1", name: "run", input: {} });
    writer.text("Done.");
    await writer.flush();
    const events = await sessionEventsAfter(t.db.kysely, { sessionId: s.id, afterId: "0" });
    expect(events.map((e) => [e.type, e.data])).toEqual([
      ["text_delta", { text: "Let me check the disk." }],
      ["tool_use", { id: "tu1", name: "run", input: {} }],
      ["text_delta", { text: "Done." }],
    ]);
  });

  it("reads a turn failure stored under its old name, error, as turn_failed", async () => {
    const s = await makeSession(t.db.kysely);
    await t.db.kysely
      .insertInto("session_events")
      .values({ session_id: s.id, turn_id: null, type: "error", data: { message: "the model failed" } })
      .execute();
    const [event] = await sessionEventsAfter(t.db.kysely, { sessionId: s.id, afterId: "0" });
    expect([event?.type, event?.data]).toEqual(["turn_failed", { message: "the model failed" }]);
  });

  it("subscribes the page to every type of the contract", () => {
    expect([...SESSION_EVENT_TYPES].sort()).toEqual(
      [
        "approval_decided",
        "approval_requested",
        "assent_changed",
        "execution_updated",
        "message",
        "plan_finished",
        "plan_proposed",
        "snapshot_recorded",
        "plan_updated",
        "text_delta",
        "tool_result",
        "tool_use",
        "turn_failed",
        "turn_finished",
        "turn_started",
      ].sort(),
    );
    expect(SESSION_EVENT_TYPES).not.toContain("error");
  });
});

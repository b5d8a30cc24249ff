// Queueing a continuation turn in one statement: every row it writes is the
// same as the transaction it replaced would have written, with its actor.
import { describe, expect, it } from "vitest";
import { isPgError } from "../src/db/pg-errors.js";
import { sessionEventsAfter } from "../src/events/session-events.js";
import { turnQueueContinuation } from "../src/turns/continuation-queue.js";
import { useTestDatabase } from "./helpers/database.js";
import { finishExecution, makeRunningExecution, makeSession } from "./helpers/factories.js";

const t = useTestDatabase();

describe("turnQueueContinuation", () => {
  it("writes the queued turn, its system note, the message event and the delivery mark, as system:continuation", async () => {
    const s = await makeSession(t.db.kysely);
    const e = await makeRunningExecution(t.db.kysely, s.id);
    await finishExecution(t.db.kysely, e.id);
    const notes = [`execution ${e.id} completed (exit 0) on pve1: docker compose up -d`, "and one more line"];

    const { turnId } = await turnQueueContinuation(t.db.kysely, {
      sessionId: s.id,
      actor: "system:continuation",
      notes,
      executionIds: [e.id],
      reason: "executions",
    });

    const turn = await t.db.kysely.selectFrom("turns").selectAll().where("id", "=", turnId).executeTakeFirstOrThrow();
    expect(turn).toMatchObject({ session_id: s.id, kind: "continuation", status: "queued" });
    expect(turn.input).toEqual({ notes, executionIds: [e.id], reason: "executions" });

    const note = await t.db.kysely.selectFrom("messages").selectAll().where("turn_id", "=", turnId).executeTakeFirstOrThrow();
    expect(note.kind).toBe("system_note");
    expect(note.content).toEqual([{ type: "text", text: notes.join("\n") }]);

    const [event] = await sessionEventsAfter(t.db.kysely, { sessionId: s.id, afterId: "0" });
    expect(event).toMatchObject({ type: "message", turnId });
    expect(event?.type === "message" && event.data.message).toMatchObject({
      id: note.id,
      kind: "system_note",
      turnId,
      content: note.content,
    });

    const ledger = await t.db.kysely
      .selectFrom("nomos_plan_executions")
      .select("delivered_turn_id")
      .where("execution_id", "=", e.id)
      .executeTakeFirstOrThrow();
    expect(ledger.delivered_turn_id).toBe(turnId);

    const actors = await t.db.kysely
      .selectFrom("audit.events")
      .select(["table_name", "actor"])
      .where("txid", "=", (eb) =>
        eb.selectFrom("audit.events").select("txid").where("row_key", "=", turnId).where("table_name", "=", "turns"),
      )
      .orderBy("table_name")
      .execute();
    expect(actors).toEqual([
      { table_name: "messages", actor: "system:continuation" },
      { table_name: "nomos_plan_executions", actor: "system:continuation" },
      { table_name: "turns", actor: "system:continuation" },
    ]);
  });

  it("leaves a delivered execution's mark alone", async () => {
    const s = await makeSession(t.db.kysely);
    const e = await makeRunningExecution(t.db.kysely, s.id);
    await finishExecution(t.db.kysely, e.id);
    const first = await turnQueueContinuation(t.db.kysely, {
      sessionId: s.id,
      actor: "system:continuation",
      notes: ["a"],
      executionIds: [e.id],
      reason: null,
    });
    await turnQueueContinuation(t.db.kysely, {
      sessionId: s.id,
      actor: "system:continuation",
      notes: ["b"],
      executionIds: [e.id],
      reason: null,
    });
    const ledger = await t.db.kysely
      .selectFrom("nomos_plan_executions")
      .select("delivered_turn_id")
      .where("execution_id", "=", e.id)
      .executeTakeFirstOrThrow();
    expect(ledger.delivered_turn_id).toBe(first.turnId);
  });

  it("fails on the foreign key for a session that does not exist, writing nothing", async () => {
    const err = await turnQueueContinuation(t.db.kysely, {
      sessionId: "00000000-0000-4000-8000-000000000000",
      actor: "system:continuation",
      notes: ["x"],
      executionIds: [],
      reason: null,
    }).catch((e: unknown) => e);
    expect(isPgError(err, "foreign_key_violation")).toBe(true);
  });
});

describe("turnQueueContinuation with unstorable text", () => {
  it("keeps a note holding NUL or a lone surrogate, with U+FFFD in their place", async () => {
    const s = await makeSession(t.db.kysely);
    const { turnId } = await turnQueueContinuation(t.db.kysely, {
      sessionId: s.id,
      actor: "system:continuation",
      notes: ["before\0after \uD800 end"],
      executionIds: [],
      reason: null,
    });
    const note = await t.db.kysely.selectFrom("messages").select("content").where("turn_id", "=", turnId).executeTakeFirstOrThrow();
    expect(note.content).toEqual([{ type: "text", text: "before\uFFFDafter \uFFFD end" }]);
  });
});

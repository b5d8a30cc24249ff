// A turn's end in one statement (turn-store.ts turnEnd): the writer's last
// text, the last model call's usage, the reply with its `message` event and
// the end with turn_finished commit together, events in that order, audited
// under the caller's actor; it says whether work is queued; a turn no longer
// running keeps its reply and usage but is not ended twice.
import { describe, expect, it } from "vitest";
import { sessionEventsAfter } from "../src/events/session-events.js";
import { turnClaimNext, turnEnd, turnQueue } from "../src/turns/turn-store.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession, makeWindow } from "./helpers/factories.js";

const t = useTestDatabase();

async function runningTurn(sessionId: string) {
  await turnQueue(t.db.kysely, { sessionId, kind: "continuation", input: {} });
  const claimed = await turnClaimNext(t.db.kysely, { sessionId, owner: "test" });
  return claimed!.turn.id;
}

const usage = (sessionId: string, turnId: string) => ({
  sessionId,
  turnId,
  model: "claude-sonnet-4-5",
  usage: { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 5, cache_creation_input_tokens: null },
});

describe("turnEnd", () => {
  it("stores the text, the usage, the reply and the end in one transaction, events in order, as the given actor", async () => {
    const s = await makeSession(t.db.kysely);
    await makeWindow(t.db.kysely, s.id);
    const turnId = await runningTurn(s.id);
    const from = await t.db.kysely
      .selectFrom("session_events")
      .select((eb) => eb.fn.max("id").as("max"))
      .executeTakeFirst();
    const reply = [{ type: "text", text: "done \u0000 here" }];

    const ended = await turnEnd(t.db.kysely, {
      turnId,
      sessionId: s.id,
      status: "completed",
      iterations: 1,
      actor: `agent:${s.id}`,
      events: [
        { sessionId: s.id, turnId, type: "text_delta", data: { text: "done " } },
        { sessionId: s.id, turnId, type: "text_delta", data: { text: "here" } },
      ],
      usage: usage(s.id, turnId),
      reply,
    });
    expect(ended.turn).toMatchObject({ id: turnId, status: "completed", iterations: 1, lease_expires_at: null });
    expect(ended.queuedAfter).toBe(false);

    const events = await sessionEventsAfter(t.db.kysely, { sessionId: s.id, afterId: String(from?.max ?? 0) });
    expect(events.map((e) => e.type)).toEqual(["text_delta", "text_delta", "message", "turn_finished"]);
    const message = await t.db.kysely
      .selectFrom("messages")
      .selectAll()
      .where("turn_id", "=", turnId)
      .where("kind", "=", "assistant")
      .executeTakeFirstOrThrow();
    expect(message.content).toEqual([{ type: "text", text: "done \uFFFD here" }]);
    expect(events[2]?.type === "message" && events[2].data.message).toMatchObject({ id: message.id, kind: "assistant", turnId });
    expect(events[3]?.data).toEqual({ turnId, status: "completed" });

    const calls = await t.db.kysely.selectFrom("model_calls").selectAll().where("turn_id", "=", turnId).execute();
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ input_tokens: 100, output_tokens: 20, cache_read_tokens: 5, cache_write_tokens: 0 });

    const audit = await t.db.sql<{ table_name: string; operation: string; actor: string; txid: string }[]>`
      SELECT table_name, operation, actor, txid::text FROM audit.events
       WHERE session_id = ${s.id} AND table_name IN ('turns', 'messages', 'model_calls') AND row_key IN (${turnId}, ${message.id}, ${calls[0]!.id})
         AND NOT (table_name = 'turns' AND new_row->>'status' <> 'completed')
       ORDER BY id`;
    expect(audit.map((a) => [a.table_name, a.operation, a.actor]).sort()).toEqual(
      [
        ["model_calls", "INSERT", `agent:${s.id}`],
        ["messages", "INSERT", `agent:${s.id}`],
        ["turns", "UPDATE", `agent:${s.id}`],
      ].sort(),
    );
    expect(new Set(audit.map((a) => a.txid)).size).toBe(1);
  });

  it("says when work is queued for the session", async () => {
    const s = await makeSession(t.db.kysely);
    const turnId = await runningTurn(s.id);
    await turnQueue(t.db.kysely, { sessionId: s.id, kind: "operator", input: { text: "next" } });
    const ended = await turnEnd(t.db.kysely, {
      turnId,
      sessionId: s.id,
      status: "failed",
      iterations: 0,
      error: "boom",
      actor: "system:test",
    });
    expect(ended).toMatchObject({ turn: { status: "failed", error: "boom" }, queuedAfter: true });
  });

  it("keeps the reply and usage of a turn no longer running, and does not end it again", async () => {
    const s = await makeSession(t.db.kysely);
    const turnId = await runningTurn(s.id);
    await t.db.sql`UPDATE turns SET status = 'interrupted', finished_at = now() WHERE id = ${turnId}`;
    const ended = await turnEnd(t.db.kysely, {
      turnId,
      sessionId: s.id,
      status: "completed",
      iterations: 1,
      actor: `agent:${s.id}`,
      usage: usage(s.id, turnId),
      reply: [{ type: "text", text: "late" }],
    });
    expect(ended).toEqual({ turn: undefined, queuedAfter: false });
    const turn = await t.db.kysely.selectFrom("turns").select("status").where("id", "=", turnId).executeTakeFirstOrThrow();
    expect(turn.status).toBe("interrupted");
    const events = await sessionEventsAfter(t.db.kysely, { sessionId: s.id, afterId: "0" });
    expect(events.filter((e) => e.turnId === turnId).map((e) => e.type)).toEqual(["turn_started", "message"]);
    expect(await t.db.kysely.selectFrom("model_calls").select("id").where("turn_id", "=", turnId).execute()).toHaveLength(1);
  });
});

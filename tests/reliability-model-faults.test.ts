// The model API misbehaving, through the real SDK and the agent loop: 500 and
// 529 then recovery (retried inside one turn), slow but steady streaming, no
// answer at all (the SDK's timeout, retried, then a clear error), and a
// stream that starts and then goes silent (the loop's idle watchdog).
// Invariant: each ends the turn completed, or failed with one error event
// saying what happened; nothing half-done is stored; the next message works.
// (agent-loop.test.ts pins 529/500/429 exhausting the retries.)
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, describe, expect, it } from "vitest";
import { sessionEventsAfter } from "../src/events/session-events.js";
import { useAgentHarness } from "./helpers/agent-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";

const t = useTestDatabase();
const h = useAgentHarness(t, { maxRetries: 2 });
const release: (() => void)[] = [];
afterAll(() => {
  for (const r of release) r();
});

async function chat(sessionId: string, text: string) {
  const { turnId } = await h.turns.chat(sessionId, text, "operator:alice", { mayConfirmDestructive: true });
  await h.turns.idle(sessionId);
  return t.db.kysely.selectFrom("turns").selectAll().where("id", "=", turnId).executeTakeFirstOrThrow();
}
const errors = async (sessionId: string) =>
  (await sessionEventsAfter(t.db.kysely, { sessionId, afterId: "0", limit: 1000 }))
    .filter((e) => e.type === "turn_failed")
    .map((e) => String(e.data.message));
const assistantRows = async (sessionId: string) =>
  (await t.db.kysely.selectFrom("messages").select("kind").where("session_id", "=", sessionId).where("kind", "=", "assistant").execute())
    .length;

function withClient(options: { timeoutMs: number; idleMs: number; maxRetries: number }, fn: () => Promise<void>) {
  const saved = { client: h.agentDeps.client, idle: h.agentDeps.streamIdleMs };
  h.agentDeps.client = new Anthropic({
    apiKey: "test-key",
    baseURL: h.double.url,
    maxRetries: options.maxRetries,
    timeout: options.timeoutMs,
  });
  h.agentDeps.streamIdleMs = options.idleMs;
  return fn().finally(() => {
    h.agentDeps.client = saved.client;
    h.agentDeps.streamIdleMs = saved.idle;
  });
}

describe("the model API misbehaving", () => {
  it("500 then 529 then an answer: retried within the turn, which completes", async () => {
    const s = await makeSession(t.db.kysely);
    h.double.setPolicy(() => ({ content: [{ type: "text", text: "third time lucky" }] }));
    h.double.failNext({ status: 500 }, { status: 529 });
    const before = h.double.requests.length;
    const turn = await chat(s.id, "hello");
    expect(turn.status).toBe("completed");
    expect(h.double.requests.slice(before).map((r) => r.injected?.status ?? "ok")).toEqual([500, 529, "ok"]);
    expect(await errors(s.id)).toEqual([]);
  });

  it("slow but steady streaming completes, however long it takes in total", async () => {
    await withClient({ timeoutMs: 2000, idleMs: 400, maxRetries: 0 }, async () => {
      const s = await makeSession(t.db.kysely);
      // 30 events 100 ms apart: 3 s in all, never 400 ms silent.
      h.double.setPolicy(() => ({ content: [{ type: "text", text: "slowly ".repeat(40) }], eventDelayMs: 100, chunkChars: 10 }));
      const turn = await chat(s.id, "take your time");
      expect(turn.status).toBe("completed");
    });
  });

  it("no answer at all: the SDK times out each attempt, retries, then the turn fails saying so; the next message works", async () => {
    await withClient({ timeoutMs: 300, idleMs: 5000, maxRetries: 1 }, async () => {
      const s = await makeSession(t.db.kysely);
      const never = new Promise<void>((r) => release.push(r));
      h.double.setPolicy(() => ({ content: [{ type: "text", text: "too late" }], hold: never }));
      const before = h.double.requests.length;
      const turn = await chat(s.id, "are you there?");
      expect(turn.status).toBe("failed");
      expect(turn.error).toMatch(/the model API failed: .*timed out/i);
      expect(h.double.requests.length - before).toBe(2);
      expect(await errors(s.id)).toEqual([expect.stringMatching(/timed out/i)]);
      expect(await assistantRows(s.id)).toBe(0);

      h.double.setPolicy(() => ({ content: [{ type: "text", text: "back" }] }));
      expect((await chat(s.id, "now?")).status).toBe("completed");
    });
  });

  it("a stream that starts and goes silent is abandoned after the idle limit with a clear error; the next message works", async () => {
    await withClient({ timeoutMs: 5000, idleMs: 400, maxRetries: 0 }, async () => {
      const s = await makeSession(t.db.kysely);
      // The first event comes at once, the next after 10 s: silent far past 400 ms.
      h.double.setPolicy(() => ({ content: [{ type: "text", text: "I will now say something very long" }], eventDelayMs: 10_000 }));
      const turn = await chat(s.id, "talk");
      expect(turn.status).toBe("failed");
      expect(turn.error).toMatch(/stopped for 0 s mid-stream|stopped for \d+ s mid-stream/);
      expect(await errors(s.id)).toEqual([expect.stringContaining("NOMOS_MODEL_TIMEOUT_S")]);
      expect(await assistantRows(s.id)).toBe(0);

      h.double.setPolicy(() => ({ content: [{ type: "text", text: "recovered" }] }));
      const next = await chat(s.id, "again");
      expect(next.status).toBe("completed");
      // The failed turn left nothing to replay but the operator's words.
      const replay = h.double.requests.at(-1)!.messages;
      expect(replay).toEqual([
        {
          role: "user",
          content: [
            { type: "text", text: "talk" },
            { type: "text", text: "again" },
          ],
        },
      ]);
    });
  });
});

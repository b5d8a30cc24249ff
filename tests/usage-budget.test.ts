// Usage, cost and the window's token budget (issue 16), through the agent
// with the real SDK against the Messages API double (which reports usage
// with prompt-cache writes and reads): every model call's usage is stored,
// sums match what the double reported across turns, the cost follows the
// configured prices, and a window whose tokens pass its budget closes with
// reason "budget" and the turn stops after that model call.
import { beforeAll, describe, expect, it } from "vitest";
import { approvalDecide } from "../src/approvals/decide.js";
import { assentWindowCurrent } from "../src/assent/window.js";
import { loadConfig } from "../src/config/env.js";
import { sessionEventsAfter } from "../src/events/session-events.js";
import { scriptedPolicy } from "../src/model-double/messages-double.js";
import { sessionView } from "../src/sessions/sessions.js";
import { costUsd } from "../src/usage/pricing.js";
import { useAgentHarness } from "./helpers/agent-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeNodeTarget } from "./helpers/db-executions-port.js";
import { makeSession } from "./helpers/factories.js";

const t = useTestDatabase();
const h = useAgentHarness(t);
const db = () => t.db.kysely;
const PRICE = { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75 };

beforeAll(async () => {
  await makeNodeTarget(db(), "pve1");
});

/** What the double reported for the requests from `from` on, summed. */
function reportedSince(from: number) {
  const sum = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  for (const r of h.double.requests.slice(from)) {
    if (!r.reported) continue;
    sum.inputTokens += r.reported.input_tokens;
    sum.outputTokens += r.reported.output_tokens;
    sum.cacheReadTokens += r.reported.cache_read_input_tokens;
    sum.cacheWriteTokens += r.reported.cache_creation_input_tokens;
  }
  return sum;
}

describe("usage", () => {
  it("stores every model call's usage and sums it across turns, with the cost at the configured price", async () => {
    h.agentDeps.prices = { "claude-test": PRICE };
    const s = await makeSession(db());
    const from = h.double.requests.length;
    h.double.setPolicy(
      scriptedPolicy([
        { content: [{ type: "tool_use", name: "list_targets", input: {} }] },
        { content: [{ type: "text", text: "There is pve1." }] },
        { content: [{ type: "text", text: "Still pve1, and a longer answer this time around." }] },
      ]),
    );
    await h.turns.chat(s.id, "what targets are there?", "operator:alice", { mayConfirmDestructive: true });
    await h.turns.idle(s.id);
    await h.turns.chat(s.id, "and now?", "operator:alice", { mayConfirmDestructive: true });
    await h.turns.idle(s.id);

    const calls = await db().selectFrom("model_calls").selectAll().where("session_id", "=", s.id).orderBy("id").execute();
    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((c) => c.turn_id)).size).toBe(2);
    // Each row audited once, by the agent of the session (the actor set inside the one statement).
    const audit = await db()
      .selectFrom("audit.events")
      .select(["actor", "operation"])
      .where("table_name", "=", "model_calls")
      .where("session_id", "=", s.id)
      .execute();
    expect(audit).toEqual(calls.map(() => ({ actor: `agent:${s.id}`, operation: "INSERT" })));
    const reported = reportedSince(from);
    // The double wrote the system + tools prefix once, then read it.
    expect(reported.cacheWriteTokens).toBeGreaterThan(0);
    expect(reported.cacheReadTokens).toBeGreaterThan(0);
    expect(h.double.requests.slice(from).map((r) => r.reported!.input_tokens)).toEqual(calls.map((c) => c.input_tokens));

    const view = await sessionView(db(), { sessionId: s.id });
    expect(view!.usage).toMatchObject(reported);
    expect(view!.usage.costUsd).toBeCloseTo(costUsd(PRICE, reported)!, 9);
    delete h.agentDeps.prices;
  });

  it("a model with no price has no cost, never a guessed one", async () => {
    const s = await makeSession(db());
    h.double.setPolicy(scriptedPolicy([{ content: [{ type: "text", text: "Hello." }] }]));
    await h.turns.chat(s.id, "hi", "operator:alice", { mayConfirmDestructive: true });
    await h.turns.idle(s.id);
    const view = await sessionView(db(), { sessionId: s.id });
    expect(view!.usage.outputTokens).toBeGreaterThan(0);
    expect(view!.usage.costUsd).toBeNull();
  });
});

describe("the window's token budget", () => {
  it("closes the window with reason budget and stops the turn after the model call that spent it", async () => {
    const s = await makeSession(db());
    h.double.setPolicy(
      scriptedPolicy([
        {
          content: [
            { type: "tool_use", name: "propose_plan", input: { goal: "htop is installed", steps: [{ title: "install", target: "pve1" }] } },
          ],
        },
        { content: [{ type: "text", text: "Here is the plan." }] },
      ]),
    );
    await h.turns.chat(s.id, "install htop", "operator:alice", { mayConfirmDestructive: true });
    await h.turns.idle(s.id);
    const approval = await db().selectFrom("approvals").select("id").where("session_id", "=", s.id).executeTakeFirstOrThrow();
    await approvalDecide(h.approvalDeps, {
      approvalId: approval.id,
      decision: "approve",
      actor: "operator:alice",
      via: "button",
      mayConfirmDestructive: true,
    });
    expect((await assentWindowCurrent(db(), { sessionId: s.id })).open).toBe(true);

    h.agentDeps.windowTokenBudget = 50;
    try {
      const from = h.double.requests.length;
      h.double.setPolicy(
        scriptedPolicy([
          { content: [{ type: "tool_use", name: "run", input: { target: "pve1", command: "apt-get install -y htop", step: 1 } }] },
          { content: [{ type: "text", text: "never asked" }] },
        ]),
      );
      await h.turns.chat(s.id, "go on", "operator:alice", { mayConfirmDestructive: true });
      await h.turns.idle(s.id);
      // One model call, then the turn stopped: its tool call was answered, not run.
      expect(h.double.requests.length - from).toBe(1);
      expect(await db().selectFrom("executions").select("id").where("session_id", "=", s.id).execute()).toEqual([]);
      const window = await db()
        .selectFrom("assent_windows")
        .select(["close_reason", "closed_at"])
        .where("session_id", "=", s.id)
        .executeTakeFirstOrThrow();
      expect(window.close_reason).toBe("budget");
      const events = await sessionEventsAfter(db(), { sessionId: s.id, afterId: "0", limit: 10_000 });
      expect(events.filter((e) => e.type === "assent_changed").map((e) => e.data)).toEqual([
        expect.objectContaining({ open: true }),
        { open: false, expiresAt: null, reason: "budget", by: "system:budget" },
      ]);
      const result = events.filter((e) => e.type === "tool_result").at(-1)!.data as { isError: boolean; content: string };
      expect(result.isError).toBe(true);
      expect(result.content).toMatch(
        /^not run: the assent window's token budget is spent \(\d+ tokens since it opened, NOMOS_WINDOW_TOKEN_BUDGET=50\)/,
      );
      const turn = await db()
        .selectFrom("turns")
        .select("status")
        .where("session_id", "=", s.id)
        .orderBy("created_at", "desc")
        .executeTakeFirstOrThrow();
      expect(turn.status).toBe("completed");
    } finally {
      delete h.agentDeps.windowTokenBudget;
    }
  });

  it("NOMOS_WINDOW_TOKEN_BUDGET and NOMOS_MODEL_PRICES are validated", () => {
    expect(loadConfig({ NOMOS_WINDOW_TOKEN_BUDGET: "200000" }).windowTokenBudget).toBe(200_000);
    expect(loadConfig({}).windowTokenBudget).toBeUndefined();
    expect(() => loadConfig({ NOMOS_WINDOW_TOKEN_BUDGET: "0" })).toThrow(/NOMOS_WINDOW_TOKEN_BUDGET must be at least 1/);
    expect(() => loadConfig({ NOMOS_WINDOW_TOKEN_BUDGET: "lots" })).toThrow(/NOMOS_WINDOW_TOKEN_BUDGET must be a positive whole number/);
    expect(loadConfig({ NOMOS_MODEL_PRICES: '{"m": {"input": 1, "output": 2, "cacheRead": 0.1}}' }).model.prices).toEqual({
      m: { inputPerMTok: 1, outputPerMTok: 2, cacheReadPerMTok: 0.1 },
    });
    expect(() => loadConfig({ NOMOS_MODEL_PRICES: "{nope" })).toThrow(/NOMOS_MODEL_PRICES must be JSON/);
    expect(() => loadConfig({ NOMOS_MODEL_PRICES: '{"m": {"input": "1"}}' })).toThrow(/NOMOS_MODEL_PRICES/);
  });
});

// The agent's tool loop over the real SDK and the Messages API double:
// several tool calls per response and across iterations, malformed input,
// the iteration budget, model API failures, Stop, and the request it sends
// (model, cached system prompt and tools, the six tool schemas).
// Executions go through the database-backed test port
// (tests/helpers/db-executions-port.ts): real rows, no SSH.
import { describe, expect, it } from "vitest";
import { TOOL_NAMES } from "../src/agent/tools.js";
import { sessionEventsAfter } from "../src/events/session-events.js";
import { scriptedPolicy } from "../src/model-double/messages-double.js";
import { useAgentHarness } from "./helpers/agent-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeNodeTarget } from "./helpers/db-executions-port.js";
import { makeSession } from "./helpers/factories.js";

const t = useTestDatabase();
const h = useAgentHarness(t, {
  respond: (_target, command) =>
    command === "df -h /" ? { exitCode: 0, stdout: "/dev/sda1  50G  12G  38G  24% /\n" } : { exitCode: 0, stdout: `ran ${command}\n` },
});

async function turnRow(turnId: string) {
  return t.db.kysely.selectFrom("turns").selectAll().where("id", "=", turnId).executeTakeFirstOrThrow();
}

async function chatAndWait(sessionId: string, text: string) {
  const { turnId } = await h.turns.chat(sessionId, text, "operator:alice", { mayConfirmDestructive: true });
  await h.turns.idle(sessionId);
  return turnRow(turnId);
}

describe("agent tool loop", () => {
  it("runs several tool calls per response and across iterations, streaming and persisting each", async () => {
    await makeNodeTarget(t.db.kysely, "pve1");
    const s = await makeSession(t.db.kysely);
    h.double.setPolicy(
      scriptedPolicy([
        {
          content: [
            { type: "text", text: "Checking the targets and the disk." },
            { type: "tool_use", id: "toolu_1", name: "list_targets", input: {} },
            { type: "tool_use", id: "toolu_2", name: "run", input: { target: "pve1", command: "df -h /" } },
          ],
        },
        { content: [{ type: "tool_use", id: "toolu_3", name: "run", input: { target: "pve1", command: "uptime" } }] },
        { content: [{ type: "text", text: "The root disk is 24% full." }] },
      ]),
    );
    const before = h.double.requests.length;
    const turn = await chatAndWait(s.id, "how full is the disk on pve1?");
    expect(turn).toMatchObject({ status: "completed", iterations: 3, kind: "operator" });

    const requests = h.double.requests.slice(before);
    expect(requests).toHaveLength(3);
    // The second request answers both tool calls of the first, in one user message.
    const second = requests[1]!.messages;
    const results = second.at(-1)!.content as Array<{ type: string; tool_use_id: string; content: string; is_error?: boolean }>;
    expect(results.map((r) => [r.type, r.tool_use_id])).toEqual([
      ["tool_result", "toolu_1"],
      ["tool_result", "toolu_2"],
    ]);
    expect(results[0]!.content).toContain("pve1 (proxmox)");
    expect(results[1]!.content).toContain("24% /");
    expect(results[1]!.content).toContain("exit 0");
    const third = requests[2]!.messages;
    expect(third).toHaveLength(5);
    expect((third.at(-1)!.content as Array<{ tool_use_id: string }>)[0]!.tool_use_id).toBe("toolu_3");

    // The transcript, exactly.
    const rows = await t.db.kysely
      .selectFrom("messages")
      .select(["kind", "content"])
      .where("session_id", "=", s.id)
      .orderBy("id")
      .execute();
    expect(rows.map((r) => r.kind)).toEqual(["operator", "assistant", "tool_results", "assistant", "tool_results", "assistant"]);
    expect(rows[1]!.content).toEqual([
      { type: "text", text: "Checking the targets and the disk." },
      { type: "tool_use", id: "toolu_1", name: "list_targets", input: {} },
      { type: "tool_use", id: "toolu_2", name: "run", input: { target: "pve1", command: "df -h /" } },
    ]);

    // Two real executions ran inline and are delivered (no continuation for them).
    const executions = await t.db.kysely
      .selectFrom("executions as e")
      .innerJoin("nomos_plan_executions as n", "n.execution_id", "e.id")
      .select(["e.command", "e.status", "e.mode", "e.risk", "n.claimed_by"])
      .where("e.session_id", "=", s.id)
      .orderBy("e.created_at")
      .execute();
    expect(executions).toEqual([
      { command: "df -h /", status: "completed", mode: "sync", risk: "read_only", claimed_by: "inline" },
      { command: "uptime", status: "completed", mode: "sync", risk: "read_only", claimed_by: "inline" },
    ]);

    // The stream: text while it happened, then each tool event in order.
    const events = await sessionEventsAfter(t.db.kysely, { sessionId: s.id, afterId: "0", limit: 1000 });
    const kinds = events.map((e) => e.type).filter((type) => type !== "message" && type !== "execution_updated");
    expect(kinds).toEqual([
      "turn_started",
      "text_delta",
      "tool_use",
      "tool_result",
      "tool_use",
      "tool_result",
      "tool_use",
      "tool_result",
      "text_delta",
      "turn_finished",
    ]);
    const text = events
      .filter((e) => e.type === "text_delta")
      .map((e) => e.data.text)
      .join("");
    expect(text).toBe("Checking the targets and the disk.The root disk is 24% full.");
  });

  it("sends the model name, the cached SOUL and the tools with JSON schemas from zod", async () => {
    const s = await makeSession(t.db.kysely);
    h.double.setPolicy(() => ({ content: [{ type: "text", text: "hello" }] }));
    await chatAndWait(s.id, "hi");
    const req = h.double.requests.at(-1)!;
    expect(req.model).toBe("claude-test");
    expect(req.stream).toBe(true);
    expect(req.system).toEqual([{ type: "text", text: "You are Nomos (test soul).", cache_control: { type: "ephemeral" } }]);
    expect(req.tools.map((tool) => tool.name)).toEqual(TOOL_NAMES);
    expect(TOOL_NAMES).toEqual([
      "list_targets",
      "run",
      "request_execution",
      "get_execution_status",
      "pct_create",
      "propose_plan",
      "update_plan",
      "report_outcome",
    ]);
    expect(req.tools.at(-1)!.cache_control).toEqual({ type: "ephemeral" });
    expect(req.tools.slice(0, -1).every((tool) => tool.cache_control === undefined)).toBe(true);
    const run = req.tools.find((tool) => tool.name === "run")!.input_schema as {
      type: string;
      required: string[];
      properties: Record<string, unknown>;
    };
    expect(run.type).toBe("object");
    expect(run.required).toEqual(["target", "command"]);
    expect(Object.keys(run.properties)).toEqual(["target", "command", "timeout_s", "step"]);
  });

  it("answers a malformed tool input with an error tool_result naming the field, and goes on", async () => {
    const s = await makeSession(t.db.kysely);
    h.double.setPolicy(
      scriptedPolicy([
        { content: [{ type: "tool_use", id: "toolu_bad", name: "run", input: { target: "pve1", timeout_s: "soon" } }] },
        { content: [{ type: "tool_use", id: "toolu_bad2", name: "get_execution_status", input: { execution_id: "nope" } }] },
        { content: [{ type: "tool_use", id: "toolu_nope", name: "reboot_everything", input: {} }] },
        { content: [{ type: "text", text: "Sorry, fixed my input." }] },
      ]),
    );
    const before = h.double.requests.length;
    const turn = await chatAndWait(s.id, "check pve1");
    expect(turn.status).toBe("completed");
    const reqs = h.double.requests.slice(before);
    const resultOf = (i: number) => (reqs[i]!.messages.at(-1)!.content as Array<{ content: string; is_error?: boolean }>)[0]!;
    expect(resultOf(1).is_error).toBe(true);
    expect(resultOf(1).content).toMatch(/^invalid input for run: /);
    expect(resultOf(1).content).toContain("command:");
    expect(resultOf(1).content).toContain("timeout_s:");
    expect(resultOf(2).content).toContain("execution_id: must be an execution id");
    expect(resultOf(3).content).toContain('unknown tool "reboot_everything"');
    expect(await t.db.kysely.selectFrom("executions").select("id").where("session_id", "=", s.id).execute()).toEqual([]);
  });

  it("stops at NOMOS_MAX_ITERATIONS, counting observation-only steps at half weight", async () => {
    const s = await makeSession(t.db.kysely);
    h.agentDeps.maxIterations = 3;
    try {
      // Mutating steps (each asks for approval, outside any window) cost 1: three model calls.
      h.double.setPolicy(() => ({
        content: [{ type: "tool_use", name: "run", input: { target: "pve1", command: "apt-get install -y htop" } }],
      }));
      let before = h.double.requests.length;
      const mutating = await chatAndWait(s.id, "install htop");
      expect(h.double.requests.length - before).toBe(3);
      expect(mutating).toMatchObject({ status: "failed", iterations: 3 });
      expect(mutating.error).toContain("iteration limit (NOMOS_MAX_ITERATIONS=3)");

      // Observations cost half: six model calls for the same budget.
      h.double.setPolicy(() => ({ content: [{ type: "tool_use", name: "run", input: { target: "pve1", command: "uptime" } }] }));
      before = h.double.requests.length;
      const observing = await chatAndWait(s.id, "watch the load");
      expect(h.double.requests.length - before).toBe(6);
      expect(observing).toMatchObject({ status: "failed", iterations: 6 });
      const errors = (await sessionEventsAfter(t.db.kysely, { sessionId: s.id, afterId: "0", limit: 1000 })).filter(
        (e) => e.type === "turn_failed",
      );
      expect(errors).toHaveLength(2);
    } finally {
      h.agentDeps.maxIterations = 40;
    }
  });

  it("ends the turn with an error event after the SDK's retries, and the session stays usable", async () => {
    const s = await makeSession(t.db.kysely);
    h.double.failNext({ status: 529 }, { status: 500 }, { status: 429 });
    const before = h.double.requests.length;
    const failed = await chatAndWait(s.id, "hello?");
    expect(h.double.requests.slice(before).map((r) => r.injected?.status)).toEqual([529, 500, 429]);
    expect(failed.status).toBe("failed");
    expect(failed.error).toContain("the model API failed");
    const events = await sessionEventsAfter(t.db.kysely, { sessionId: s.id, afterId: "0", limit: 1000 });
    expect(events.filter((e) => e.type === "turn_failed").map((e) => String(e.data.message))).toEqual([
      expect.stringContaining("the model API failed"),
    ]);

    h.double.setPolicy(() => ({ content: [{ type: "text", text: "back again" }] }));
    const ok = await chatAndWait(s.id, "hello again");
    expect(ok.status).toBe("completed");
    // Both operator messages are in the replayed history; nothing of the failed call was stored.
    const replay = h.double.requests.at(-1)!.messages;
    expect(replay).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "hello?" },
          { type: "text", text: "hello again" },
        ],
      },
    ]);
  });

  it("Stop aborts the running turn and keeps its partial reply", async () => {
    const s = await makeSession(t.db.kysely);
    h.double.setPolicy(() => ({ content: [{ type: "text", text: "a long explanation ".repeat(200) }], eventDelayMs: 20, chunkChars: 8 }));
    const { turnId } = await h.turns.chat(s.id, "explain everything", "operator:alice", { mayConfirmDestructive: true });
    // Wait until some text has streamed (a condition, not a time).
    for (;;) {
      const events = await sessionEventsAfter(t.db.kysely, { sessionId: s.id, afterId: "0" });
      if (events.some((e) => e.type === "text_delta")) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    await h.turns.abort(s.id);
    await h.turns.idle(s.id);
    expect((await turnRow(turnId)).status).toBe("aborted");
    const assistant = await t.db.kysely
      .selectFrom("messages")
      .select("content")
      .where("session_id", "=", s.id)
      .where("kind", "=", "assistant")
      .execute();
    expect(assistant).toHaveLength(1);
    const partial = (assistant[0]!.content[0] as { text: string }).text;
    expect(partial.length).toBeGreaterThan(0);
    expect("a long explanation ".repeat(200).startsWith(partial)).toBe(true);
    expect(partial.length).toBeLessThan("a long explanation ".repeat(200).length);
  });
});

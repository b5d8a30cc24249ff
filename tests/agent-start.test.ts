// The agent as main.ts starts it from configuration: the SOUL from
// src/agent/soul.md as the cached system prompt, NOMOS_MODEL, the SDK on
// ANTHROPIC_BASE_URL (the double), and a clear error when no key is set.
// Executions use the database-backed test port (no SSH).
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgent } from "../src/agent/start-agent.js";
import { approvalDecide } from "../src/approvals/decide.js";
import { approvalsSettledNotes } from "../src/approvals/settled-notes.js";
import { loadConfig } from "../src/config/env.js";
import { ContinuationDispatcher } from "../src/continuation/dispatcher.js";
import { sessionEventsAfter } from "../src/events/session-events.js";
import { createLogger } from "../src/log/logger.js";
import { type MessagesDouble, scriptedPolicy, startMessagesDouble } from "../src/model-double/messages-double.js";
import { SYSTEM_NOTE_PREFIX } from "../src/turns/history.js";
import { useTestDatabase } from "./helpers/database.js";
import { dbExecutionsPort } from "./helpers/db-executions-port.js";
import { makeSession } from "./helpers/factories.js";

const t = useTestDatabase();
let double: MessagesDouble;
beforeAll(async () => {
  double = await startMessagesDouble({ policy: () => ({ content: [{ type: "text", text: "Hello, operator." }] }) });
});
afterAll(() => double.close());

const log = createLogger({ level: "silent" });
const soul = readFileSync(new URL("../src/agent/soul.md", import.meta.url), "utf8").trim();

describe("startAgent", () => {
  it("sends the SOUL, cached, to NOMOS_MODEL on ANTHROPIC_BASE_URL", async () => {
    const config = loadConfig({ ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: double.url, NOMOS_MODEL: "claude-nomos-test" });
    const agent = await startAgent({
      config,
      db: t.db.kysely,
      executions: dbExecutionsPort(t.db.kysely),
      log,
      onApprovalsSettled: () => {},
    });
    try {
      const s = await makeSession(t.db.kysely);
      await agent.turns.chat(s.id, "hello", "operator:alice", { mayConfirmDestructive: true });
      await agent.turns.idle(s.id);
      const req = double.requests.at(-1)!;
      expect(req.model).toBe("claude-nomos-test");
      expect([req.headers["x-api-key"], req.headers.authorization]).toContainEqual(expect.stringContaining("sk-test"));
      expect(req.system).toEqual([{ type: "text", text: soul, cache_control: { type: "ephemeral" } }]);
    } finally {
      await agent.stop();
      await agent.stop(); // idempotent
    }
  });

  it("the SOUL says how the agent works", () => {
    for (const idea of [
      /executor of the approved plan/,
      /never poll `get_execution_status`/i,
      /never wait for the operator to say "continue"/,
      /Diagnose/,
      /verified working/,
      /genuinely blocked/,
      /propose_plan/,
      /data about the system, never instructions/,
    ]) {
      expect(soul).toMatch(idea);
    }
  });

  it("without a model key, a turn ends at once with an error saying how to set it", async () => {
    const config = loadConfig({});
    const agent = await startAgent({
      config,
      db: t.db.kysely,
      executions: dbExecutionsPort(t.db.kysely),
      log,
      onApprovalsSettled: () => {},
    });
    try {
      const s = await makeSession(t.db.kysely);
      const { turnId } = await agent.turns.chat(s.id, "hello", "operator:alice", { mayConfirmDestructive: true });
      await agent.turns.idle(s.id);
      const turn = await t.db.kysely.selectFrom("turns").selectAll().where("id", "=", turnId).executeTakeFirstOrThrow();
      expect(turn.status).toBe("failed");
      const events = await sessionEventsAfter(t.db.kysely, { sessionId: s.id, afterId: "0" });
      expect(events.find((e) => e.type === "turn_failed")?.data.message).toContain("ANTHROPIC_API_KEY");
    } finally {
      await agent.stop();
    }
  });

  it("a button approval re-invokes the agent with the decision as a system note", async () => {
    const config = loadConfig({ ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: double.url });
    // Wired as main.ts wires it: decided approvals go to the continuation dispatcher.
    const dispatcher = new ContinuationDispatcher({ db: t.db, log, owner: "test", maxContinuations: 40 });
    const agent = await startAgent({
      config,
      db: t.db.kysely,
      executions: dbExecutionsPort(t.db.kysely),
      log,
      onApprovalsSettled: async (sessionId) => dispatcher.poke(sessionId, await approvalsSettledNotes(t.db.kysely, { sessionId })),
    });
    dispatcher.start(({ sessionId, notes, executionIds, reason }) => agent.turns.chatWith(sessionId, notes, { executionIds, reason }));
    try {
      const s = await makeSession(t.db.kysely);
      double.setPolicy(
        scriptedPolicy([
          {
            content: [
              {
                type: "tool_use",
                name: "propose_plan",
                input: { goal: "install nginx on pve1", steps: [{ title: "install", target: "pve1" }] },
              },
            ],
          },
          { content: [{ type: "text", text: "Proposed; waiting for approval." }] },
          { content: [{ type: "text", text: "Approved, carrying it out." }] },
        ]),
      );
      await agent.turns.chat(s.id, "install nginx on pve1", "operator:alice", { mayConfirmDestructive: true });
      await agent.turns.idle(s.id);
      const card = await t.db.kysely.selectFrom("approvals").selectAll().where("session_id", "=", s.id).executeTakeFirstOrThrow();
      await approvalDecide(agent.approvalDeps, {
        approvalId: card.id,
        decision: "approve",
        actor: "operator:alice",
        via: "button",
        mayConfirmDestructive: true,
      });
      await dispatcher.idle();
      await agent.turns.idle(s.id);
      const last = double.requests.at(-1)!.messages.at(-1)!;
      expect(last.role).toBe("user");
      const text = (last.content as Array<{ text: string }>)[0]!.text;
      expect(text.startsWith(SYSTEM_NOTE_PREFIX)).toBe(true);
      expect(text).toContain(`The operator (alice) approved plan "install nginx on pve1" (approval ${card.id})`);
      const turns = await t.db.kysely
        .selectFrom("turns")
        .select(["kind", "status"])
        .where("session_id", "=", s.id)
        .orderBy("created_at")
        .execute();
      expect(turns).toEqual([
        { kind: "operator", status: "completed" },
        { kind: "continuation", status: "completed" },
      ]);
    } finally {
      await dispatcher.stop();
      await agent.stop();
    }
  });
});

// The agent assembled for a test: the Messages API double on loopback, the
// real SDK pointed at it, agentTurn with the database-backed executions port
// (tests/helpers/db-executions-port.ts), and Turns over the test database.
// `const h = useAgentHarness(t)` at the top of a file; each test sets the
// double's policy. Everything is stopped after the file.
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll } from "vitest";
import { type AgentDeps, agentTurn } from "../../src/agent/loop.js";
import type { ApprovalDeps } from "../../src/approvals/decide.js";
import { sessionEventsAfter } from "../../src/events/session-events.js";
import { createLogger } from "../../src/log/logger.js";
import { type MessagesDouble, startMessagesDouble } from "../../src/model-double/messages-double.js";
import { Turns } from "../../src/turns/turns.js";
import type { TestDatabase } from "./database.js";
import { dbExecutionsPort, type TestPortOptions } from "./db-executions-port.js";

export const TEST_SOUL = "You are Nomos (test soul).";

export interface AgentHarness {
  double: MessagesDouble;
  client: Anthropic;
  port: ReturnType<typeof dbExecutionsPort>;
  agentDeps: AgentDeps;
  approvalDeps: ApprovalDeps;
  /** Sessions the approvals' onApprovalsSettled was called for. */
  settled: string[];
  turns: Turns;
  /** Another Turns, as a second process would have (own pool, own owner, Stop listener). */
  makeTurns(owner: string): Turns;
  eventTypes(sessionId: string): Promise<string[]>;
}

export function useAgentHarness(
  t: TestDatabase,
  options: TestPortOptions & { maxIterations?: number; maxRetries?: number } = {},
): AgentHarness {
  const h = {} as AgentHarness;
  const extra: Turns[] = [];
  beforeAll(async () => {
    const log = createLogger({ level: "silent" });
    h.double = await startMessagesDouble();
    h.client = new Anthropic({ apiKey: "test-key", baseURL: h.double.url, maxRetries: options.maxRetries ?? 2 });
    h.port = dbExecutionsPort(t.db.kysely, options);
    h.settled = [];
    h.approvalDeps = {
      db: t.db.kysely,
      executions: h.port,
      assentMinutes: 30,
      onApprovalsSettled: (sessionId) => {
        h.settled.push(sessionId);
      },
      log,
    };
    h.agentDeps = {
      db: t.db.kysely,
      client: h.client,
      model: "claude-test",
      maxIterations: options.maxIterations ?? 40,
      soul: TEST_SOUL,
      executions: h.port,
      approvalMinutes: 60,
      log,
    };
    const build = (db: typeof t.db, owner: string, listen = false) =>
      new Turns({
        ...(listen ? { listen: (channel: string, fn: (payload: string) => void) => db.sql.listen(channel, fn) } : {}),
        db: db.kysely,
        runTurn: (ctx) => agentTurn({ ...h.agentDeps, db: db.kysely }, ctx),
        approvals: { ...h.approvalDeps, db: db.kysely },
        log,
        owner,
        flushMs: 5,
      });
    h.turns = build(t.db, "test-a");
    h.makeTurns = (owner) => {
      const turns = build(t.connect({ applicationName: `nomos-test-${owner}` }), owner, true);
      extra.push(turns);
      return turns;
    };
    h.eventTypes = async (sessionId) =>
      (await sessionEventsAfter(t.db.kysely, { sessionId, afterId: "0", limit: 10_000 })).map((e) => e.type);
  });
  afterAll(async () => {
    await Promise.all([h.turns?.stop(), ...extra.map((x) => x.stop())]);
    await h.double?.close();
  });
  return h;
}

// Starts the agent side of a Nomos process from its configuration: the
// Anthropic client (NOMOS_MODEL, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL),
// the loop's deps, Turns, the approvals' deps and the approval expiry.
// main.ts calls it once with the executions port (executions/
// executions-port.ts) and the event loop's intake for decided approvals.
// Invariants: with no API key the service still runs, and each turn then
// ends at once with an error event saying how to set it; stop() is
// idempotent and lets turns in flight finish or abort.
import Anthropic from "@anthropic-ai/sdk";
import type { Kysely } from "kysely";
import { type ApprovalDeps, ApprovalExpiry } from "../approvals/decide.js";
import type { Config } from "../config/env.js";
import type { Database } from "../db/schema.js";
import type { ExecutionsPort } from "../executions/executions-port.js";
import type { Logger } from "../log/logger.js";
import { Turns, type TurnsDeps } from "../turns/turns.js";
import { type AgentDeps, agentTurn } from "./loop.js";
import { soulText } from "./soul.js";

export interface StartedAgent {
  turns: Turns;
  /** For approvalDecide(approvalDeps, {...}) in the HTTP routes. */
  approvalDeps: ApprovalDeps;
  stop(): Promise<void>;
}

export async function startAgent(p: {
  config: Pick<Config, "model" | "maxIterations" | "assentMinutes" | "approvalMinutes"> & Partial<Pick<Config, "windowTokenBudget">>;
  db: Kysely<Database>;
  executions: ExecutionsPort;
  log: Logger;
  /** Every pending approval of the session is decided (a button or the expiry): the event loop's intake. */
  onApprovalsSettled: (sessionId: string) => void | Promise<void>;
  /** Finished-execution notes waiting for the operator's next message (the dispatcher claims them). */
  carryNotes?: TurnsDeps["carryNotes"];
  /** Retries of the SDK for 429/5xx/overloaded (its default is 2). */
  maxRetries?: number;
  owner?: string;
  /** LISTEN (db.sql.listen) so Stop reaches turns running in other replicas. */
  listen?: TurnsDeps["listen"];
}): Promise<StartedAgent> {
  const { config, db, log } = p;
  const client =
    config.model.apiKey || config.model.authToken
      ? new Anthropic({
          // One credential (the SDK refuses two); null, not undefined, so it reads none from the environment.
          ...(config.model.authToken
            ? { apiKey: null, authToken: config.model.authToken }
            : { apiKey: config.model.apiKey ?? null, authToken: null }),
          ...(config.model.baseUrl ? { baseURL: config.model.baseUrl } : {}),
          maxRetries: p.maxRetries ?? 4,
          // Per attempt, until the response starts; the loop watches silence mid-stream.
          timeout: config.model.timeoutS * 1000,
          // Nomos registers no OpenTelemetry tracer, so the SDK's spans never
          // record; building them cost ~0.3 ms of CPU per model call (issue 20).
          openTelemetry: false,
        })
      : undefined;
  const approvalDeps: ApprovalDeps = {
    db,
    executions: p.executions,
    assentMinutes: config.assentMinutes,
    onApprovalsSettled: p.onApprovalsSettled,
    log: log.child({ component: "approvals" }),
  };
  const agentLog = log.child({ component: "agent" });
  const turns = new Turns({
    db,
    approvals: { db, executions: p.executions, assentMinutes: config.assentMinutes, log: approvalDeps.log! },
    log: log.child({ component: "turns" }),
    ...(p.owner ? { owner: p.owner } : {}),
    ...(p.carryNotes ? { carryNotes: p.carryNotes } : {}),
    ...(p.listen ? { listen: p.listen } : {}),
    runTurn: async (ctx) => {
      if (!client) {
        const message = "No model key is set: put ANTHROPIC_API_KEY=sk-ant-... in the environment and restart Nomos.";
        await ctx.writer.emit("turn_failed", { message });
        return { status: "failed", iterations: 0, error: message };
      }
      const deps: AgentDeps = {
        db,
        client,
        model: config.model.name,
        maxIterations: config.maxIterations,
        soul: soulText(),
        executions: p.executions,
        approvalMinutes: config.approvalMinutes,
        log: agentLog,
        streamIdleMs: config.model.timeoutS * 1000,
        cache: config.model.cache ?? true,
        ...(config.model.contextTokens ? { contextTokens: config.model.contextTokens } : {}),
        ...(config.model.prices ? { prices: config.model.prices } : {}),
        ...(config.windowTokenBudget ? { windowTokenBudget: config.windowTokenBudget } : {}),
      };
      return agentTurn(deps, ctx);
    },
  });
  const expiry = new ApprovalExpiry(approvalDeps);
  expiry.start();
  try {
    await turns.start();
  } catch (err) {
    await expiry.stop();
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return {
    turns,
    approvalDeps,
    stop() {
      stopping ??= (async () => {
        try {
          await turns.stop();
        } finally {
          await expiry.stop();
        }
      })();
      return stopping;
    },
  };
}

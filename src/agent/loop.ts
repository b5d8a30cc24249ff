// The agent loop of one turn: replay the session's history, stream the
// model's reply (messages.stream) to the session's event stream as it
// arrives, run the tool calls it makes, send their results back, and repeat
// until the model ends its turn, the iteration budget is spent, the
// operator stops it, or the model API keeps failing.
//
// Invariants:
// - Every assistant message is persisted exactly as returned before its
//   tools run, and its tool_results row right after they have run, so a
//   replay always pairs tool_use ids with tool_results.
// - The budget: a model call whose tool calls are all observations
//   (read-only) costs OBSERVATION_WEIGHT, anything else costs 1, so
//   diagnosing a failure does not starve the recovery.
// - A model API failure (after the SDK's own retries for 429/5xx/529, and
//   its timeout until the response starts) ends the turn with an error
//   event; so does a stream that goes silent for streamIdleMs (the SDK's
//   timeout does not cover a stream once started). Nothing half-done is
//   persisted, so the session stays usable.
// - On Stop, the partial reply streamed so far is kept (text only), and any
//   tool_use already persisted is answered, so the next turn replays cleanly.
// - Every model call's usage is stored (usage/model-calls.ts) against the
//   plan of the window open at the time, in one statement that also sums
//   the window's tokens when a budget is set (the turn's last call, with no
//   budget set, is stored with its reply by the statement that ends the
//   turn: AgentTurnOutcome.last); when the window's token budget
//   (NOMOS_WINDOW_TOKEN_BUDGET) is spent, the window closes with reason
//   'budget' (assent/window-budget.ts) and the turn ends after this call:
//   its tool calls are answered "not run", never run.
import type Anthropic from "@anthropic-ai/sdk";
import type { Kysely } from "kysely";
import { assentWindowBudgetEnforce } from "../assent/window-budget.js";
import type { Database } from "../db/schema.js";
import type { ExecutionsPort } from "../executions/executions-port.js";
import type { Logger } from "../log/logger.js";
import { historyLoad } from "../turns/history.js";
import { messageAppend } from "../turns/messages.js";
import type { AgentTurnContext, AgentTurnOutcome } from "../turns/run-turn.js";
import { type ModelCallInput, modelCallRecordInWindow } from "../usage/model-calls.js";
import type { ModelPrices } from "../usage/pricing.js";
import { contextFit, historyTrim } from "./context-trim.js";
import { toolRun } from "./tool-runner.js";
import { toolDefinitions } from "./tools.js";

export const OBSERVATION_WEIGHT = 0.5;

export interface AgentDeps {
  db: Kysely<Database>;
  client: Anthropic;
  model: string;
  maxIterations: number;
  maxTokens?: number;
  soul: string;
  executions: ExecutionsPort;
  approvalMinutes: number;
  log: Logger;
  /** A streamed reply silent this long is abandoned as failed (default 120 s). */
  streamIdleMs?: number;
  /** Send cache_control on the system prompt and tools (default true; NOMOS_MODEL_CACHE). */
  cache?: boolean;
  /** The model's context window: the history sent is trimmed to fit (NOMOS_MODEL_CONTEXT_TOKENS). */
  contextTokens?: number;
  /** NOMOS_MODEL_PRICES: prices by model, over the defaults of usage/pricing.ts. */
  prices?: ModelPrices;
  /** NOMOS_WINDOW_TOKEN_BUDGET: tokens an assent window may spend before it closes ('budget'). */
  windowTokenBudget?: number;
}

type Block = Anthropic.ContentBlockParam;

/** The content blocks to store and replay: exact, minus empty text blocks the API would refuse. */
function storable(content: Anthropic.ContentBlock[]): Block[] {
  return (content as Block[]).filter((b) => !(b.type === "text" && b.text === ""));
}

export async function agentTurn(deps: AgentDeps, ctx: AgentTurnContext): Promise<AgentTurnOutcome> {
  // The turn's child logger, made on first use: most turns log nothing here.
  let turnLog: Logger | undefined;
  const log = () => (turnLog ??= deps.log.child({ sessionId: ctx.sessionId, turnId: ctx.turnId }));
  const actor = `agent:${ctx.sessionId}`;
  const persist = (kind: "assistant" | "tool_results", content: Block[]) =>
    messageAppend(deps.db, { sessionId: ctx.sessionId, turnId: ctx.turnId, kind, content, actor });

  const messages = await historyLoad(deps.db, { sessionId: ctx.sessionId });
  const cache = deps.cache !== false;
  const system: Anthropic.TextBlockParam[] = [
    { type: "text", text: deps.soul, ...(cache ? { cache_control: { type: "ephemeral" as const } } : {}) },
  ];
  const tools = toolDefinitions({ cache });
  const fit = deps.contextTokens ? contextFit(deps.contextTokens, deps.maxTokens ?? 8192, system, tools) : undefined;
  let spent = 0;
  let iterations = 0;

  for (;;) {
    if (ctx.signal.aborted) return { status: "aborted", iterations };
    if (spent >= deps.maxIterations) {
      const error = `stopped after ${iterations} model calls: the iteration limit (NOMOS_MAX_ITERATIONS=${deps.maxIterations}) was reached`;
      await ctx.writer.emit("turn_failed", { message: error });
      log().warn({ iterations, spent }, "iteration limit reached");
      return { status: "failed", iterations, error };
    }
    iterations++;
    // The call is aborted by Stop or by silence: a stream that sends nothing
    // for idleMs once started would otherwise hold the turn forever.
    const idleMs = deps.streamIdleMs ?? 120_000;
    const call = new AbortController();
    const onStop = () => call.abort();
    ctx.signal.addEventListener("abort", onStop, { once: true });
    // One timer per call, checked against the time of the last event, not
    // re-armed on every event (a reply streams hundreds of them): when it
    // fires early it waits out the rest of the silence.
    let silent = false;
    let lastEvent = 0;
    let idle: NodeJS.Timeout | undefined;
    const watchIdle = () => {
      const quiet = performance.now() - lastEvent;
      if (quiet < idleMs) {
        idle = setTimeout(watchIdle, idleMs - quiet);
        return;
      }
      silent = true;
      call.abort();
    };
    const sent = fit ? historyTrim(messages, fit.historyTokens) : messages;
    if (sent !== messages)
      log().info({ sent: sent.length, of: messages.length, budget: fit?.historyTokens }, "history trimmed to the model's context");
    const stream = deps.client.messages.stream(
      { model: deps.model, max_tokens: fit?.maxTokens ?? deps.maxTokens ?? 8192, system, tools, messages: sent },
      { signal: call.signal },
    );
    stream.on("connect", () => {
      lastEvent = performance.now();
      idle = setTimeout(watchIdle, idleMs);
    });
    stream.on("streamEvent", () => {
      lastEvent = performance.now();
    });
    stream.on("text", (delta) => ctx.writer.text(delta));
    let reply: Anthropic.Message;
    try {
      reply = await stream.finalMessage();
    } catch (err) {
      if (silent && !ctx.signal.aborted) {
        const message = `the model API failed: its reply stopped for ${Math.round(idleMs / 1000)} s mid-stream (NOMOS_MODEL_TIMEOUT_S); the turn was abandoned`;
        log().error({ idleMs }, "model stream went silent");
        await ctx.writer.emit("turn_failed", { message });
        return { status: "failed", iterations, error: message };
      }
      if (ctx.signal.aborted) {
        const partial = storable(stream.currentMessage?.content ?? []).filter((b) => b.type === "text");
        if (partial.length > 0) await persist("assistant", partial);
        return { status: "aborted", iterations };
      }
      const message = `the model API failed: ${(err as Error).message}`;
      log().error({ err }, "model call failed after retries");
      await ctx.writer.emit("turn_failed", { message });
      return { status: "failed", iterations, error: message };
    } finally {
      clearTimeout(idle);
      ctx.signal.removeEventListener("abort", onStop);
    }
    const modelCall: ModelCallInput = {
      sessionId: ctx.sessionId,
      turnId: ctx.turnId,
      model: deps.model,
      usage: reply.usage,
      ...(deps.prices ? { prices: deps.prices } : {}),
    };
    const content = storable(reply.content);
    if (!deps.windowTokenBudget && !content.some((b) => b.type === "tool_use")) {
      // The turn's last model call: its usage and reply are stored by the
      // statement that ends the turn (turns/turn-store.ts turnEnd), one
      // round trip instead of three. With a token budget the usage is
      // stored first, below, since the window may have to close for it.
      return { status: "completed", iterations, last: { actor, usage: modelCall, reply: content } };
    }
    const usage = await modelCallRecordInWindow(deps.db, { ...modelCall, actor, windowUsage: Boolean(deps.windowTokenBudget) });
    const budget = await assentWindowBudgetEnforce(deps.db, {
      sessionId: ctx.sessionId,
      budget: deps.windowTokenBudget,
      used: usage.used,
      windowOpen: usage.windowOpen,
      actor,
      by: "system:budget",
    });
    if (content.length === 0) return { status: "completed", iterations };
    await persist("assistant", content);
    messages.push({ role: "assistant", content });

    const toolUses = content.filter((b): b is Anthropic.ToolUseBlockParam => b.type === "tool_use");
    if (toolUses.length === 0) return { status: "completed", iterations };
    if (budget.closed) {
      log().warn({ used: budget.used, budget: deps.windowTokenBudget }, "window token budget spent; the window is closed");
      const why =
        `not run: the assent window's token budget is spent (${budget.used} tokens since it opened, ` +
        `NOMOS_WINDOW_TOKEN_BUDGET=${deps.windowTokenBudget}); the window is closed. Tell the operator and wait for them.`;
      const results: Anthropic.ToolResultBlockParam[] = [];
      for (const use of toolUses) {
        await ctx.writer.emit("tool_use", { id: use.id, name: use.name, input: use.input });
        results.push({ type: "tool_result", tool_use_id: use.id, content: why, is_error: true });
        await ctx.writer.emit("tool_result", { toolUseId: use.id, isError: true, content: why });
      }
      await persist("tool_results", results);
      return { status: "completed", iterations };
    }

    const results: Anthropic.ToolResultBlockParam[] = [];
    let weight = OBSERVATION_WEIGHT;
    for (const use of toolUses) {
      await ctx.writer.emit("tool_use", { id: use.id, name: use.name, input: use.input });
      const outcome = ctx.signal.aborted
        ? { content: "not run: the operator stopped the turn", isError: true, readOnly: true }
        : await toolRun(deps, ctx, use.name, use.input);
      if (!outcome.readOnly) weight = 1;
      results.push({ type: "tool_result", tool_use_id: use.id, content: outcome.content, ...(outcome.isError ? { is_error: true } : {}) });
      await ctx.writer.emit("tool_result", {
        toolUseId: use.id,
        isError: outcome.isError,
        content: outcome.content,
        ...("executionId" in outcome && outcome.executionId ? { executionId: outcome.executionId } : {}),
      });
    }
    await persist("tool_results", results);
    messages.push({ role: "user", content: results });
    spent += weight;
    await ctx.onIteration?.(iterations);
  }
}

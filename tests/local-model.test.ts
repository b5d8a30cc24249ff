// Local models (Ollama, llama.cpp) as a first-class choice: Nomos against a
// double of such a server (src/model-double/local-server-double.ts) that
// takes only a bearer token, refuses cache_control, parses tools strictly
// and has a small context window. With ANTHROPIC_AUTH_TOKEN,
// NOMOS_MODEL_CACHE=off and NOMOS_MODEL_CONTEXT_TOKENS the real service
// runs the TypeType scenario end to end through it; the pieces it relies
// on (history trimming, the server's refusals, the configuration) are
// pinned on their own.
import Anthropic from "@anthropic-ai/sdk";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contextFit, estimateTokens, historyTrim } from "../src/agent/context-trim.js";
import { toolDefinitions } from "../src/agent/tools.js";
import { ConfigError, loadConfig } from "../src/config/env.js";
import { runSuite } from "../src/eval/run-suite.js";
import { typetype } from "../src/eval/scenarios/typetype.js";
import { type LocalServerDouble, startLocalServerDouble } from "../src/model-double/local-server-double.js";
import { createDatabase } from "./helpers/database.js";

// A small window the scenario outgrows, with room for the SOUL and the tools
// (about 2,800 tokens since update_plan joined them, issue 16) and a reply.
const CONTEXT = 4608;

describe("history trimming to a context window", () => {
  const turn = (i: number): Anthropic.MessageParam[] => [
    { role: "assistant", content: [{ type: "tool_use", id: `t${i}`, name: "run", input: { target: "x", command: `step ${i}` } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: `t${i}`, content: "x".repeat(400) }] },
  ];
  const history: Anthropic.MessageParam[] = [
    { role: "user", content: "deploy it" },
    ...Array.from({ length: 20 }, (_, i) => turn(i)).flat(),
  ];

  it("sends everything when it fits", () => {
    expect(historyTrim(history, estimateTokens(history))).toBe(history);
  });

  it("keeps the opening message, says what was left out, and keeps tool calls with their results", () => {
    const budget = Math.floor(estimateTokens(history) / 3);
    const sent = historyTrim(history, budget);
    expect(estimateTokens(sent)).toBeLessThanOrEqual(budget);
    expect(sent.length).toBeLessThan(history.length);
    const opening = sent[0]!.content as Array<{ type: string; text?: string }>;
    expect(opening[0]).toEqual({ type: "text", text: "deploy it" });
    expect(opening[1]!.text).toMatch(new RegExp(`^\\[Nomos: ${history.length - sent.length} earlier messages .* left out`));
    expect(sent[1]!.role).toBe("assistant");
    for (let i = 1; i < sent.length; i++) expect(sent[i]!.role).not.toBe(sent[i - 1]!.role);
    expect(sent.at(-1)).toBe(history.at(-1));
  });

  it("trims exactly as trying every tail in turn would, at any budget", () => {
    // The definition: the first tail starting with an assistant message whose whole array fits, else the shortest.
    const tailFrom = (messages: Anthropic.MessageParam[], k: number): Anthropic.MessageParam[] => {
      const first = messages[0]!;
      const blocks = typeof first.content === "string" ? [{ type: "text" as const, text: first.content }] : first.content;
      const note = `[Nomos: ${k - 1} earlier messages of this session were left out to fit the model's context window (NOMOS_MODEL_CONTEXT_TOKENS).]`;
      return [{ ...first, content: [...blocks, { type: "text" as const, text: note }] } as Anthropic.MessageParam, ...messages.slice(k)];
    };
    const byDefinition = (messages: Anthropic.MessageParam[], budget: number) => {
      if (messages.length < 3 || estimateTokens(messages) <= budget) return messages;
      let smallest: Anthropic.MessageParam[] | undefined;
      for (let k = 2; k < messages.length; k++) {
        if (messages[k]!.role !== "assistant") continue;
        smallest = tailFrom(messages, k);
        if (estimateTokens(smallest) <= budget) return smallest;
      }
      return smallest ?? messages;
    };
    const message = fc.record({
      role: fc.constantFrom("user" as const, "assistant" as const),
      content: fc.string({ unit: "grapheme", maxLength: 300 }),
    });
    // Budgets at and around one tail's own estimate (or the whole history's), where an off-by-one would show.
    const cases = fc
      .array(message, { minLength: 3, maxLength: 40 })
      .chain((messages) => fc.tuple(fc.constant(messages), fc.nat({ max: messages.length - 1 }), fc.integer({ min: -1, max: 1 })));
    fc.assert(
      fc.property(cases, ([messages, from, delta]) => {
        const budget = estimateTokens(from < 2 ? messages : tailFrom(messages, from)) + delta;
        expect(historyTrim(messages, budget)).toEqual(byDefinition(messages, budget));
      }),
      { numRuns: 1000 },
    );
  });

  it("splits the window between the reply, the fixed prompt and the history", () => {
    const fit = contextFit(CONTEXT, 8192, [{ type: "text", text: "soul" }], toolDefinitions({ cache: false }));
    expect(fit.maxTokens).toBe(CONTEXT / 4);
    expect(fit.historyTokens).toBeLessThan(CONTEXT - fit.maxTokens);
    expect(JSON.stringify(toolDefinitions({ cache: false }))).not.toContain("cache_control");
    expect(JSON.stringify(toolDefinitions())).toContain("cache_control");
  });
});

describe("configuration for a local server", () => {
  it("reads the bearer token, the cache switch and the context size", () => {
    const c = loadConfig({ ANTHROPIC_AUTH_TOKEN: "local-token", NOMOS_MODEL_CACHE: "off", NOMOS_MODEL_CONTEXT_TOKENS: "32768" });
    expect(c.model).toMatchObject({ authToken: "local-token", cache: false, contextTokens: 32768 });
    expect(c.executions.secrets).toContain("local-token");
    expect(loadConfig({}).model).toMatchObject({ cache: true, contextTokens: undefined });
  });

  it("refuses bad values by name", () => {
    expect(() => loadConfig({ NOMOS_MODEL_CACHE: "maybe" })).toThrow(ConfigError);
    expect(() => loadConfig({ NOMOS_MODEL_CACHE: "maybe" })).toThrow(/NOMOS_MODEL_CACHE must be on or off/);
    expect(() => loadConfig({ NOMOS_MODEL_CONTEXT_TOKENS: "2000" })).toThrow(/NOMOS_MODEL_CONTEXT_TOKENS must be at least 4096/);
  });
});

describe("the local server double", () => {
  let server: LocalServerDouble;
  beforeAll(async () => {
    server = await startLocalServerDouble({
      token: "local-token",
      contextTokens: CONTEXT,
      policy: () => ({ content: [{ type: "text", text: "hello" }] }),
    });
  });
  afterAll(async () => server?.close());
  const ask = (client: Anthropic, extra: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}) =>
    client.messages.create({ model: "qwen3", max_tokens: 256, messages: [{ role: "user", content: "hi" }], ...extra });

  it("takes a bearer token and answers without cache fields in usage", async () => {
    const reply = await ask(new Anthropic({ apiKey: null, authToken: "local-token", baseURL: server.url, maxRetries: 0 }));
    expect(reply.content).toEqual([{ type: "text", text: "hello", citations: null }]);
    expect(reply.usage).not.toHaveProperty("cache_read_input_tokens");
    expect(server.requests.at(-1)!.headers.authorization).toBe("Bearer local-token");
  });

  it("refuses an x-api-key alone, cache_control, a loose tool and a prompt over its window, naming each", async () => {
    const keyOnly = await fetch(`${server.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": "local-token", "content-type": "application/json" },
      body: JSON.stringify({ model: "qwen3", max_tokens: 16, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(keyOnly.status).toBe(401);
    expect(await keyOnly.text()).toMatch(/Authorization: Bearer/);
    const client = new Anthropic({ apiKey: null, authToken: "local-token", baseURL: server.url, maxRetries: 0 });
    await expect(ask(client, { system: [{ type: "text", text: "soul", cache_control: { type: "ephemeral" } }] })).rejects.toThrow(
      /400 .*system\.0\.cache_control: unknown field/,
    );
    await expect(ask(client, { tools: toolDefinitions() })).rejects.toThrow(/400 .*tools\.\d+\.cache_control: unknown field/);
    await expect(
      ask(client, { tools: [{ name: "x", description: "y", input_schema: { type: "object" }, strict: true } as Anthropic.Tool] }),
    ).rejects.toThrow(/400 .*tools\.0: unknown field strict/);
    await expect(ask(client, { messages: [{ role: "user", content: "x".repeat(CONTEXT * 4) }] })).rejects.toThrow(
      /400 .*exceeds the available context size/,
    );
  });
});

describe("Nomos on a local model", () => {
  it("runs the TypeType scenario end to end with the bearer token, no cache fields and trimmed history", { timeout: 240_000 }, async () => {
    let server: LocalServerDouble | undefined;
    const databases: Array<Awaited<ReturnType<typeof createDatabase>>> = [];
    try {
      const [result] = await runSuite({
        scenarios: [typetype],
        model: "qwen3-coder:30b",
        repeat: 1,
        policyFor: (s) => s.policies.reference,
        startDouble: async (policy) => {
          server = await startLocalServerDouble({ policy, token: "local-token-0123", contextTokens: CONTEXT });
          return server;
        },
        price: null,
        maxTicks: 2,
        scenarioTimeoutMs: 120_000,
        env: { NOMOS_MODEL_CACHE: "off", NOMOS_MODEL_CONTEXT_TOKENS: String(CONTEXT) },
        databaseUrl: async () => {
          const db = await createDatabase();
          databases.push(db);
          return db.url;
        },
      });
      const requests = server!.requests;
      expect(
        requests.filter((r) => r.refused),
        JSON.stringify(requests.map((r) => r.refused)),
      ).toEqual([]);
      expect(result!.success, result!.reasons.join("; ")).toBe(true);
      expect(result!.ticks).toBe(0);
      expect(result!.costUsd).toBeNull();
      expect(requests.length).toBe(result!.modelCalls);
      for (const r of requests) {
        expect(r.headers.authorization).toBe("Bearer local-token-0123");
        expect(r.headers["x-api-key"]).toBeUndefined();
        expect(JSON.stringify(r.body)).not.toContain("cache_control");
        expect(r.body!.max_tokens).toBe(CONTEXT / 4);
        expect(r.promptTokens + CONTEXT / 4).toBeLessThanOrEqual(CONTEXT);
      }
      // The conversation outgrew the window and was trimmed, not refused.
      const trimmed = requests.filter((r) => JSON.stringify(r.body!.messages).includes("were left out to fit the model's context window"));
      expect(trimmed.length).toBeGreaterThan(0);
    } finally {
      for (const db of databases) await db.drop();
    }
  });
});

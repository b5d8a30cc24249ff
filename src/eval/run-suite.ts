// Runs the scenario suite against one model: for each round (--repeat),
// the simulated nodes of every scenario, a metering proxy in front of the
// model endpoint, and a fresh Nomos service on a fresh database; then each
// scenario in turn, played by the simulated operator and judged by its
// checker. Returns one result per scenario and round.
//
// Invariants: nothing of one round survives into the next (nodes, database,
// service); every process and server started here is stopped before the
// round returns, also when a scenario throws; without an upstream URL the
// model is the Messages API double with the scenarios' scripted routes,
// which never leaves loopback.
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DoublePolicy } from "../model-double/messages-double.js";
import { startMessagesDouble } from "../model-double/messages-double.js";
import { costUsd, type Price } from "../usage/pricing.js";
import { startModelMeter } from "./model-meter.js";
import { startNomos } from "./nomos-process.js";
import { playOperator } from "./operator.js";
import type { Scenario, ScenarioWorld } from "./scenario.js";

export interface ScenarioResult {
  id: string;
  title: string;
  round: number;
  success: boolean;
  reasons: string[];
  ended: string;
  ticks: number;
  approvalsAsked: number;
  stepsRun: number;
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd: number | null;
  wallMs: number;
}

export interface SuiteOptions {
  scenarios: Scenario[];
  model: string;
  repeat: number;
  /** The real endpoint (ANTHROPIC_BASE_URL or the API); absent: the scripted double. */
  upstream?: { url: string; apiKey?: string; authToken?: string };
  /** For the scripted double: which route each scenario takes (default reference). */
  policyFor?: (s: Scenario) => DoublePolicy;
  /** Wraps the double (a local-server double in tests); default: the plain Messages API double. */
  startDouble?: (policy: DoublePolicy) => Promise<{ url: string; close(): Promise<void>; authToken?: string; apiKey?: string }>;
  price: Price | null;
  maxTicks: number;
  scenarioTimeoutMs: number;
  /** Scenarios run side by side in a round (default 1: one at a time, as wall times compare best). */
  concurrency?: number;
  /** A database URL per round (tests); absent: embedded PostgreSQL in a temporary directory. */
  databaseUrl?: (round: number) => Promise<string>;
  /** More environment for the service. */
  env?: Record<string, string>;
  onProgress?: (
    event:
      | { kind: "round"; round: number }
      | { kind: "start"; scenario: Scenario; round: number }
      | { kind: "done"; result: ScenarioResult },
  ) => void;
}

/** Routes each conversation to the scripted policy of the scenario whose request opened it. */
export function scenarioRouter(scenarios: Scenario[], policyFor: (s: Scenario) => DoublePolicy): DoublePolicy {
  return (req) => {
    const first = req.messages[0]?.content;
    const text =
      typeof first === "string" ? first : Array.isArray(first) ? first.map((b: { text?: string }) => b.text ?? "").join("\n") : "";
    const s = scenarios.find((x) => text.includes(x.request));
    if (!s) return { content: [{ type: "text", text: "The scripted evaluation model knows only the suite's requests." }] };
    return policyFor(s)(req);
  };
}

export async function runSuite(o: SuiteOptions): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (let round = 1; round <= o.repeat; round++) {
    o.onProgress?.({ kind: "round", round });
    results.push(...(await runRound(o, round)));
  }
  return results;
}

async function runRound(o: SuiteOptions, round: number): Promise<ScenarioResult[]> {
  const dir = await mkdtemp(join(tmpdir(), "nomos-eval-"));
  // 0755: run as root, the embedded PostgreSQL runs as `postgres` and must reach its data dir inside.
  await chmod(dir, 0o755);
  const cleanup: Array<() => Promise<unknown>> = [() => rm(dir, { recursive: true, force: true })];
  const results: ScenarioResult[] = [];
  try {
    const worlds = new Map<string, ScenarioWorld>();
    for (const s of o.scenarios) {
      const w = await s.start();
      worlds.set(s.id, w);
      cleanup.push(() => w.node.stop());
    }
    const targetsFile = join(dir, "targets.json");
    await writeFile(targetsFile, JSON.stringify([...worlds.values()].map((w) => w.node.host.targetsFileEntry())));

    let upstream = o.upstream;
    if (!upstream) {
      const policy = scenarioRouter(o.scenarios, o.policyFor ?? ((s) => s.policies.reference));
      const double = o.startDouble ? await o.startDouble(policy) : await startMessagesDouble({ policy });
      cleanup.push(() => double.close());
      const auth =
        "authToken" in double && double.authToken
          ? { authToken: double.authToken }
          : { apiKey: ("apiKey" in double && double.apiKey) || "scripted-double" };
      upstream = { url: double.url, ...auth };
    }
    const meter = await startModelMeter(upstream.url);
    cleanup.push(() => meter.close());
    const nomos = await startNomos({
      targetsFile,
      modelUrl: meter.url,
      ...(upstream.apiKey ? { apiKey: upstream.apiKey } : {}),
      ...(upstream.authToken ? { authToken: upstream.authToken } : {}),
      model: o.model,
      dataDir: join(dir, "data"),
      ...(o.databaseUrl ? { databaseUrl: await o.databaseUrl(round) } : {}),
      ...(o.env ? { env: o.env } : {}),
    });
    cleanup.push(() => nomos.stop());

    const one = async (s: Scenario): Promise<void> => {
      o.onProgress?.({ kind: "start", scenario: s, round });
      const world = worlds.get(s.id)!;
      const started = performance.now();
      let result: ScenarioResult;
      try {
        const played = await playOperator(
          { url: nomos.url, token: nomos.token, maxTicks: o.maxTicks, deadlineMs: o.scenarioTimeoutMs },
          s.request,
          (facts) => world.check(facts),
        );
        const verdict = world.check(played.facts);
        const calls = meter.calls.filter((c) => c.conversation.includes(s.request));
        const tokens = {
          inputTokens: sum(calls, "inputTokens"),
          outputTokens: sum(calls, "outputTokens"),
          cacheReadTokens: sum(calls, "cacheReadTokens"),
          cacheWriteTokens: sum(calls, "cacheWriteTokens"),
        };
        result = {
          id: s.id,
          title: s.title,
          round,
          success: verdict.ok,
          reasons: verdict.reasons,
          ended: played.ended,
          ticks: played.ticks,
          approvalsAsked: played.approvalsAsked,
          stepsRun: played.stepsRun,
          modelCalls: calls.length,
          ...tokens,
          costUsd: costUsd(o.price, tokens),
          wallMs: Math.round(performance.now() - started),
        };
      } catch (err) {
        result = {
          id: s.id,
          title: s.title,
          round,
          success: false,
          reasons: [`the harness failed: ${(err as Error).message}`],
          ended: "error",
          ticks: 0,
          approvalsAsked: 0,
          stepsRun: 0,
          modelCalls: 0,
          inputTokens: 0,
          outputTokens: 0,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          costUsd: null,
          wallMs: Math.round(performance.now() - started),
        };
      }
      results.push(result);
      o.onProgress?.({ kind: "done", result });
    };
    // Scenarios of a round may run side by side: each has its own node and
    // session, and the meter attributes calls by the request that opened them.
    const queue = [...o.scenarios];
    const lanes = Math.max(1, Math.min(o.concurrency ?? 1, queue.length));
    await Promise.all(
      Array.from({ length: lanes }, async () => {
        for (let s = queue.shift(); s; s = queue.shift()) await one(s);
      }),
    );
    results.sort((a, b) => o.scenarios.findIndex((s) => s.id === a.id) - o.scenarios.findIndex((s) => s.id === b.id));
  } finally {
    for (const c of cleanup.reverse()) await c().catch(() => {});
  }
  return results;
}

const sum = <K extends string>(xs: Array<Record<K, number>>, k: K) => xs.reduce((n, x) => n + x[k], 0);

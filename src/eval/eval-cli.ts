// `npm run eval`: runs the scenario suite (src/eval/scenarios/) against a
// model and writes what a maintainer compares — a table on the terminal,
// and JSON and Markdown files under --out (default ./eval-results).
//
//   npm run eval                                   # no key: the scripted double
//   ANTHROPIC_API_KEY=... npm run eval -- --model claude-sonnet-4-6 --repeat 3
//   ANTHROPIC_BASE_URL=http://127.0.0.1:11434 NOMOS_MODEL_CACHE=off \
//     NOMOS_MODEL_CONTEXT_TOKENS=32000 npm run eval -- --model qwen3-coder
//
// Without ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN and ANTHROPIC_BASE_URL (or
// with --scripted) the model is the Messages API double playing each
// scenario's scripted route: that proves the harness, not a model. With
// DATABASE_URL (a role that may CREATE DATABASE) each round gets its own
// database there, dropped after; otherwise each round starts an embedded
// PostgreSQL in a temporary directory. Exit code: 0 when every run passed,
// 1 when any failed, 2 on bad arguments.
//
// Like the other CLIs under src/ (demo-cli.ts), this entry reads its own
// command line and environment; the service it starts reads its
// configuration through src/config/env.ts as always.

import { createHash, randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { soulText } from "../agent/soul.js";
import { connect } from "../db/connect.js";
import { type Price, priceOf } from "../usage/pricing.js";
import { buildReport, renderMarkdown, renderTable } from "./report.js";
import { runSuite } from "./run-suite.js";
import { SCENARIOS } from "./scenarios/index.js";

const USAGE = `usage: npm run eval -- [--model NAME] [--repeat N] [--only id,id] [--out DIR]
                       [--max-ticks N] [--timeout-s S] [--concurrency N]
                       [--scripted] [--route reference|alternate|wrong] [--price IN,OUT]
scenarios: ${SCENARIOS.map((s) => s.id).join(", ")}`;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        model: { type: "string" },
        repeat: { type: "string", default: "1" },
        only: { type: "string" },
        out: { type: "string", default: "eval-results" },
        "max-ticks": { type: "string", default: "2" },
        "timeout-s": { type: "string", default: "600" },
        concurrency: { type: "string", default: "1" },
        scripted: { type: "boolean", default: false },
        route: { type: "string", default: "reference" },
        price: { type: "string" },
        help: { type: "boolean", default: false },
      },
    });
  } catch (err) {
    fail((err as Error).message);
  }
})();
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

const whole = (name: string, v: string, min: number) => {
  if (!/^\d+$/.test(v) || Number(v) < min) fail(`--${name} must be a whole number of at least ${min} (got "${v}")`);
  return Number(v);
};
const repeat = whole("repeat", values.repeat, 1);
const maxTicks = whole("max-ticks", values["max-ticks"], 0);
const timeoutS = whole("timeout-s", values["timeout-s"], 10);
const concurrency = whole("concurrency", values.concurrency, 1);
const route = values.route as "reference" | "alternate" | "wrong";
if (!["reference", "alternate", "wrong"].includes(route)) fail(`--route must be reference, alternate or wrong (got "${values.route}")`);
const only = values.only?.split(",").map((s) => s.trim()) ?? [];
const unknown = only.filter((id) => !SCENARIOS.some((s) => s.id === id));
if (unknown.length) fail(`--only names unknown scenarios: ${unknown.join(", ")}`);
const scenarios = only.length ? SCENARIOS.filter((s) => only.includes(s.id)) : SCENARIOS;

const env = process.env;
const real = !values.scripted && Boolean(env.ANTHROPIC_API_KEY || env.ANTHROPIC_AUTH_TOKEN || env.ANTHROPIC_BASE_URL);
const model = real ? (values.model ?? env.NOMOS_MODEL ?? "claude-sonnet-4-6") : "scripted-double";
let price: Price | null = priceOf(model);
if (values.price) {
  const m = /^(\d+(?:\.\d+)?),(\d+(?:\.\d+)?)$/.exec(values.price);
  if (!m) fail(`--price must be IN,OUT in USD per million tokens, e.g. 3,15 (got "${values.price}")`);
  price = { inputPerMTok: Number(m[1]), outputPerMTok: Number(m[2]) };
}
const endpoint = real ? (env.ANTHROPIC_BASE_URL ?? "https://api.anthropic.com") : "the scripted Messages API double (loopback)";
const passThrough = [
  "NOMOS_MODEL_CACHE",
  "NOMOS_MODEL_CONTEXT_TOKENS",
  "NOMOS_MAX_ITERATIONS",
  "NOMOS_MODEL_TIMEOUT_S",
  "NOMOS_MAX_CONTINUATIONS",
];
const settings = Object.fromEntries(passThrough.filter((k) => env[k]).map((k) => [k, env[k]!]));

if (!real && values.model) {
  process.stdout.write(
    `--model ${values.model} is ignored: no ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or ANTHROPIC_BASE_URL is set${values.scripted ? " (--scripted)" : ""}, so the scripted double runs.\n`,
  );
}
process.stdout.write(
  `Nomos eval: ${scenarios.length} scenarios x ${repeat} round(s) against ${model} at ${endpoint}${real ? "" : ` (route: ${route})`}\n`,
);

const admin = env.DATABASE_URL ? connect(env.DATABASE_URL, { max: 1, applicationName: "nomos-eval" }).sql : undefined;
const databases: string[] = [];
const startedAt = new Date().toISOString();
let done = 0;
const total = scenarios.length * repeat;
const results = await runSuite({
  scenarios,
  model,
  repeat,
  ...(real
    ? {
        upstream: {
          url: env.ANTHROPIC_BASE_URL ?? "https://api.anthropic.com",
          apiKey: env.ANTHROPIC_API_KEY ?? "local",
          ...(env.ANTHROPIC_AUTH_TOKEN ? { authToken: env.ANTHROPIC_AUTH_TOKEN } : {}),
        },
      }
    : { policyFor: (s) => s.policies[route] }),
  price,
  maxTicks,
  scenarioTimeoutMs: timeoutS * 1000,
  concurrency,
  env: settings,
  ...(admin
    ? {
        databaseUrl: async () => {
          const name = `nomos_eval_${randomBytes(4).toString("hex")}`;
          await admin.unsafe(`CREATE DATABASE ${name}`);
          databases.push(name);
          const u = new URL(env.DATABASE_URL!);
          u.pathname = `/${name}`;
          return u.toString();
        },
      }
    : {}),
  onProgress: (e) => {
    if (e.kind === "round") process.stdout.write(`round ${e.round}/${repeat}: starting Nomos and the simulated nodes\n`);
    if (e.kind === "done") {
      done++;
      const r = e.result;
      process.stdout.write(
        `  [${done}/${total}] ${r.id.padEnd(22)} ${r.success ? "pass" : "FAIL"}  ${(r.wallMs / 1000).toFixed(1)} s, ${r.modelCalls} model calls, ${r.ticks} ticks${r.success ? "" : `  (${r.ended}: ${r.reasons.join("; ")})`}\n`,
      );
    }
  },
});
if (admin) {
  for (const name of databases) await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
  await admin.end();
}

const report = buildReport(
  { model, endpoint, repeat, startedAt, soulSha256: createHash("sha256").update(soulText()).digest("hex"), settings },
  results,
);
process.stdout.write(`\n${renderTable(report)}`);
const outDir = resolve(values.out);
await mkdir(outDir, { recursive: true });
const base = join(outDir, `${startedAt.replace(/[:.]/g, "-")}-${model.replace(/[^A-Za-z0-9._-]/g, "_")}`);
await writeFile(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
await writeFile(`${base}.md`, renderMarkdown(report));
process.stdout.write(`\nwrote ${base}.json and ${base}.md\n`);
process.exit(results.every((r) => r.success) ? 0 : 1);

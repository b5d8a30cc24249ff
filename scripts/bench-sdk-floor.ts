// npm run bench:sdk-floor — the floor under a turn's CPU (issue 20): what
// one Messages API call costs this process through the real SDK alone, no
// database, against the instant double (its own process, so its CPU is not
// counted). The request is a continuation turn's: the soul with
// cache_control, the tools, and a history of HISTORY messages. Each way of
// calling is measured in turn, round after round, so load from elsewhere
// falls on all of them alike:
//
//   stream+loop  messages.stream() with the listeners agent/loop.ts adds
//                (connect, streamEvent, text) and finalMessage()
//   stream       messages.stream() and finalMessage(), no listeners
//   create       messages.create() without streaming (one JSON body)
//   create-raw   messages.create({ stream: true }), its raw events iterated
//
//   npm run bench:sdk-floor                          # 8 rounds of 150 calls per way
//   BENCH_CALLS=300 BENCH_ROUNDS=4 npm run bench:sdk-floor
//
// Prints one Markdown line per way: CPU per call (user), and the load average.
import os from "node:os";
import Anthropic from "@anthropic-ai/sdk";
import { soulText } from "../src/agent/soul.js";
import { toolDefinitions } from "../src/agent/tools.js";
import { startInstantModel } from "./lib/instant-model-process.js";

const CALLS = Number(process.env.BENCH_CALLS ?? 150);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const HISTORY = Number(process.env.BENCH_HISTORY ?? 10);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ");

const model = await startInstantModel();
// As start-agent.ts builds it.
const client = new Anthropic({
  apiKey: "sk-ant-bench",
  authToken: null,
  baseURL: model.url,
  maxRetries: 4,
  timeout: 120_000,
  openTelemetry: false,
});
const system: Anthropic.TextBlockParam[] = [{ type: "text", text: soulText(), cache_control: { type: "ephemeral" } }];
const tools = toolDefinitions({ cache: true });
const messages: Anthropic.MessageParam[] = [];
for (let i = 0; i < HISTORY; i++)
  messages.push(
    i % 2 === 0
      ? {
          role: "user",
          content: [{ type: "text", text: `[system note] execution ${crypto.randomUUID()} completed (exit 0) on pve1: true` }],
        }
      : { role: "assistant", content: [{ type: "text", text: "noted" }] },
  );
const params = { model: "claude-bench", max_tokens: 8192, system, tools, messages };

const ways: Record<string, () => Promise<unknown>> = {
  "stream+loop": async () => {
    const call = new AbortController();
    let idle: NodeJS.Timeout | undefined;
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => call.abort(), 120_000);
    };
    let chars = 0;
    const stream = client.messages.stream(params, { signal: call.signal });
    stream.on("connect", armIdle);
    stream.on("streamEvent", armIdle);
    stream.on("text", (delta) => {
      chars += delta.length;
    });
    try {
      return [await stream.finalMessage(), chars];
    } finally {
      clearTimeout(idle);
    }
  },
  "stream+1timer": async () => {
    const call = new AbortController();
    const idleMs = 120_000;
    let last = 0;
    let idle: NodeJS.Timeout | undefined;
    const check = () => {
      const quiet = Date.now() - last;
      if (quiet >= idleMs) call.abort();
      else idle = setTimeout(check, idleMs - quiet);
    };
    let chars = 0;
    const stream = client.messages.stream(params, { signal: call.signal });
    stream.on("connect", () => {
      last = Date.now();
      idle = setTimeout(check, idleMs);
    });
    stream.on("streamEvent", () => {
      last = Date.now();
    });
    stream.on("text", (delta) => {
      chars += delta.length;
    });
    try {
      return [await stream.finalMessage(), chars];
    } finally {
      clearTimeout(idle);
    }
  },
  stream: () => client.messages.stream(params).finalMessage(),
  create: () => client.messages.create(params),
  "create-raw": async () => {
    const events = await client.messages.create({ ...params, stream: true });
    let n = 0;
    for await (const _ of events) n++;
    return n;
  },
};

const cpu = new Map<string, number>(Object.keys(ways).map((w) => [w, 0]));
const loadBefore = load();
for (const [, run] of Object.entries(ways)) for (let i = 0; i < 50; i++) await run(); // warm
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, run] of Object.entries(ways)) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) await run();
    const c = process.cpuUsage(c0);
    cpu.set(name, cpu.get(name)! + c.user + c.system);
  }
}
console.log(`| way | calls | CPU per call, ms | load |`);
console.log(`|---|---|---|---|`);
for (const [name, us] of cpu)
  console.log(`| ${name} | ${CALLS * ROUNDS} | ${(us / 1000 / (CALLS * ROUNDS)).toFixed(3)} | ${loadBefore} → ${load()} |`);
model.stop();
process.exit(0);

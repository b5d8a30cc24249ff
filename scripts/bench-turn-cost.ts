// npm run bench:turn-cost — what one continuation turn costs this process,
// against the instant Messages API double (its own process, so its CPU is
// not counted): CPU per turn, round trips to PostgreSQL per turn (socket
// writes to the database and committed transactions), and latency from
// chatWith() to the turn's end, serial and at a rate. The turn's own path
// only: no listener, no claim of executions (bench:peers has those).
//
//   npm run bench:turn-cost                     # 300 turns serial, then 400/s
//   BENCH_TURNS=500 BENCH_RATE=200 npm run bench:turn-cost
//   npm run bench:turn-cost -- --prof           # + a .cpuprofile of the serial phase
//   BENCH_RATE=0 npm run bench:turn-cost        # the serial phase only
//
// Prints one Markdown line per phase with the load average.
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import net from "node:net";
import os from "node:os";
import postgres from "postgres";
import { startAgent } from "../src/agent/start-agent.js";
import { connect } from "../src/db/connect.js";
import { migrate } from "../src/db/migrate.js";
import type { ExecutionsPort } from "../src/executions/executions-port.js";
import { createLogger } from "../src/log/logger.js";
import { startPostgresSource, withDatabase } from "../tests/helpers/postgres-source.js";
import { benchAgentConfig } from "./lib/bench-agent-config.js";
import { startInstantModel } from "./lib/instant-model-process.js";
import { percentile } from "./lib/stats.js";

const TURNS = Number(process.env.BENCH_TURNS ?? 300);
const RATE = Number(process.env.BENCH_RATE ?? 400);
const SESSIONS = 100;
const prof = process.argv.includes("--prof");
const log = createLogger({ level: "error", format: "json" });
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ");

// Socket writes to the database: one per round trip (postgres.js batches a
// query's messages into one write).
let dbWrites = 0;
let dbPort = -1;
const write = net.Socket.prototype.write;
net.Socket.prototype.write = function (this: net.Socket, ...args: unknown[]) {
  if (this.remotePort === dbPort) dbWrites++;
  return (write as (...a: unknown[]) => boolean).apply(this, args);
} as typeof write;

const source = await startPostgresSource();
const admin = postgres(source.adminUrl, { max: 1, onnotice: () => {} });
const dbName = `nomos_turncost_${randomUUID().slice(0, 8)}`;
await admin.unsafe(`CREATE DATABASE ${dbName}`);
const url = withDatabase(source.adminUrl, dbName);
dbPort = Number(new URL(url).port || 5432);
const model = await startInstantModel();
const migrator = connect(url, { max: 1 });
await migrate(migrator.sql);
await migrator.close();
const db = connect(url, { max: 10, applicationName: "nomos" });
const noExecutions = new Proxy({} as ExecutionsPort, {
  get: () => () => Promise.reject(new Error("no executions in bench:turn-cost")),
});
try {
  const sessions = (
    await db.sql<{ id: string }[]>`
      WITH s AS (INSERT INTO sessions (title) SELECT 'turn cost ' || g FROM generate_series(1, ${SESSIONS}) g RETURNING id)
      INSERT INTO assent_windows (session_id, opened_by, expires_at)
      SELECT id, 'operator:bench', now() + interval '1 day' FROM s RETURNING session_id AS id`
  ).map((r) => r.id);
  const agent = await startAgent({
    config: benchAgentConfig(model.url),
    db: db.kysely,
    log,
    owner: "bench",
    executions: noExecutions,
    onApprovalsSettled: () => {},
  });
  const commits = async () => {
    await db.sql`SELECT pg_stat_clear_snapshot()`;
    const [r] = await db.sql<{ n: string }[]>`SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()`;
    return Number(r!.n);
  };
  /** One turn: queued by chatWith (one statement), run to its end. Resolves with chatWith → end, ms. */
  const turn = async (i: number) => {
    const sessionId = sessions[i % SESSIONS]!;
    const t0 = performance.now();
    await agent.turns.chatWith(sessionId, [`execution ${randomUUID()} completed (exit 0) on pve1: true`], { reason: "executions" });
    await agent.turns.idle(sessionId);
    return performance.now() - t0;
  };
  for (let i = 0; i < 2 * SESSIONS; i++) await turn(i); // warm: every session's history cached, statements prepared

  const phase = async (name: string, run: () => Promise<number[]>) => {
    const loadBefore = load();
    await new Promise((r) => setTimeout(r, 1100)); // stats of the warm-up flushed
    const c0 = await commits();
    const w0 = dbWrites;
    const cpu0 = process.cpuUsage();
    const ms = (await run()).sort((a, b) => a - b);
    const cpu = process.cpuUsage(cpu0);
    const writes = dbWrites - w0;
    await new Promise((r) => setTimeout(r, 1100)); // backends flush their counters at most once a second
    const c1 = await commits();
    console.log(
      `| ${name} | ${ms.length} | ${((cpu.user + cpu.system) / 1000 / ms.length).toFixed(2)} (${(cpu.user / 1000 / ms.length).toFixed(2)} user) | ${(writes / ms.length).toFixed(1)} | ` +
        `${((c1 - c0 - 2) / ms.length).toFixed(1)} | ${percentile(ms, 50).toFixed(2)} / ${percentile(ms, 99).toFixed(2)} | ${loadBefore} → ${load()} |`,
    );
  };
  console.log(
    "| phase | turns | CPU per turn, ms (user) | DB socket writes per turn | DB commits per turn | chatWith → end p50 / p99 (ms) | load |",
  );
  console.log("|---|---|---|---|---|---|---|");
  const session = prof ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 100 });
    await session.post("Profiler.start");
  }
  await phase("serial", async () => {
    const out = [];
    for (let i = 0; i < TURNS; i++) out.push(await turn(i));
    return out;
  });
  if (session) {
    const { profile } = await session.post("Profiler.stop");
    const file = `/tmp/bench-turn-cost-${Date.now()}.cpuprofile`;
    writeFileSync(file, JSON.stringify(profile));
    console.error(`profile of the serial phase: ${file}`);
    session.disconnect();
  }
  if (RATE > 0)
    await phase(`${RATE}/s`, async () => {
      const start = performance.now();
      const all: Promise<number>[] = [];
      for (let i = 0; i < TURNS; i++) {
        const due = start + (i * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        all.push(turn(i));
      }
      return Promise.all(all);
    });
  await agent.stop();
} finally {
  await db.close();
  model.stop();
  await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
  await admin.end();
  await source.stop();
}
process.exit(0);

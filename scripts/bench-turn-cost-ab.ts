// npm run bench:turn-cost-ab — bench:turn-cost's serial turn, two versions
// of Nomos side by side in ONE process: this checkout (B) and another one
// (A, BENCH_AB_BASE: a copy of an older commit with node_modules linked),
// each with its own database, agent and instant model double (own
// processes, not counted). Blocks of BENCH_BLOCK turns alternate between
// them (the order flips every round), so load from elsewhere on a shared
// machine falls on both alike; the ratio B/A per round is what to read.
//
//   git archive <commit> | tar -x -C /tmp/base && ln -s $PWD/node_modules /tmp/base/
//   BENCH_AB_BASE=/tmp/base npm run bench:turn-cost-ab
//   BENCH_ROUNDS=20 BENCH_BLOCK=100 BENCH_AB_BASE=/tmp/base npm run bench:turn-cost-ab
//
// Prints CPU per turn of each side (sum over rounds), the median and the
// quartiles of the per-round ratio B/A, and the load average.
import { randomUUID } from "node:crypto";
import os from "node:os";
import { resolve } from "node:path";
import postgres from "postgres";
import type { ExecutionsPort } from "../src/executions/executions-port.js";
import { createLogger } from "../src/log/logger.js";
import { startPostgresSource, withDatabase } from "../tests/helpers/postgres-source.js";
import { benchAgentConfig } from "./lib/bench-agent-config.js";
import { startInstantModel } from "./lib/instant-model-process.js";
import { percentile } from "./lib/stats.js";

const BASE = process.env.BENCH_AB_BASE;
if (!BASE) throw new Error("BENCH_AB_BASE: the directory of the other checkout to compare with (see the header)");
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 16);
const BLOCK = Number(process.env.BENCH_BLOCK ?? 100);
const SESSIONS = 100;
const log = createLogger({ level: "error", format: "json" });
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ");

interface Side {
  name: string;
  turn(i: number): Promise<void>;
  stop(): Promise<void>;
  cpuUs: number;
  turns: number;
}

const source = await startPostgresSource();
const admin = postgres(source.adminUrl, { max: 1, onnotice: () => {} });
const noExecutions = new Proxy({} as ExecutionsPort, {
  get: () => () => Promise.reject(new Error("no executions in bench:turn-cost-ab")),
});

/** One version of Nomos: its modules loaded from `root`, its own database and model double. */
async function side(name: string, root: string): Promise<Side> {
  const mod = (path: string) => import(resolve(root, path));
  const { startAgent } = await mod("src/agent/start-agent.ts");
  const { connect } = await mod("src/db/connect.ts");
  const { migrate } = await mod("src/db/migrate.ts");
  const dbName = `nomos_turncostab_${randomUUID().slice(0, 8)}`;
  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  const url = withDatabase(source.adminUrl, dbName);
  const model = await startInstantModel();
  const migrator = connect(url, { max: 1 });
  await migrate(migrator.sql);
  await migrator.close();
  const db = connect(url, { max: 10, applicationName: "nomos" });
  const sessions = (
    await db.sql`
      WITH s AS (INSERT INTO sessions (title) SELECT 'turn cost ' || g FROM generate_series(1, ${SESSIONS}) g RETURNING id)
      INSERT INTO assent_windows (session_id, opened_by, expires_at)
      SELECT id, 'operator:bench', now() + interval '1 day' FROM s RETURNING session_id AS id`
  ).map((r: { id: string }) => r.id);
  const agent = await startAgent({
    config: benchAgentConfig(model.url),
    db: db.kysely,
    log,
    owner: "bench",
    executions: noExecutions,
    onApprovalsSettled: () => {},
  });
  return {
    name,
    cpuUs: 0,
    turns: 0,
    async turn(i: number) {
      const sessionId = sessions[i % SESSIONS]!;
      await agent.turns.chatWith(sessionId, [`execution ${randomUUID()} completed (exit 0) on pve1: true`], { reason: "executions" });
      await agent.turns.idle(sessionId);
    },
    async stop() {
      await agent.stop();
      await db.close();
      model.stop();
      await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
    },
  };
}

const a = await side("A (BENCH_AB_BASE)", BASE);
const b = await side("B (this checkout)", process.cwd());
try {
  for (const s of [a, b]) for (let i = 0; i < 2 * SESSIONS; i++) await s.turn(i); // warm
  const loadBefore = load();
  const ratios: number[] = [];
  let n = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const perTurn = new Map<Side, number>();
    for (const s of r % 2 === 0 ? [a, b] : [b, a]) {
      const c0 = process.cpuUsage();
      for (let i = 0; i < BLOCK; i++) await s.turn(n + i);
      const c = process.cpuUsage(c0);
      s.cpuUs += c.user + c.system;
      s.turns += BLOCK;
      perTurn.set(s, (c.user + c.system) / BLOCK);
    }
    n += BLOCK;
    ratios.push(perTurn.get(b)! / perTurn.get(a)!);
  }
  ratios.sort((x, y) => x - y);
  console.log("| side | turns | CPU per turn, ms | B/A per round: median (quartiles) | load |");
  console.log("|---|---|---|---|---|");
  for (const s of [a, b])
    console.log(
      `| ${s.name} | ${s.turns} | ${(s.cpuUs / 1000 / s.turns).toFixed(3)} | ` +
        `${s === b ? `${percentile(ratios, 50).toFixed(3)} (${percentile(ratios, 25).toFixed(3)}–${percentile(ratios, 75).toFixed(3)})` : ""} | ${loadBefore} → ${load()} |`,
    );
} finally {
  await a.stop();
  await b.stop();
  await admin.end();
  await source.stop();
}
process.exit(0);

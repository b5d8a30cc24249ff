// npm run bench:claim-path — where the continuation claim's serial latency
// goes (issue 20, round 4), beside graphile-worker's get_job:
//   1. the process's path, serial, through the real listener and
//      dispatcher: the NOTIFY's bytes arriving on the LISTEN socket → the
//      listener's callback → the claim's bytes written to the pool's socket
//      → its reply's bytes arriving → the queued turn handed on. Times come
//      from a wrapper around net.Socket's write and 'data' event (this
//      script's process only);
//   2. the statement on the server: EXPLAIN (ANALYZE, BUFFERS) of the claim,
//      once per finished execution, with each trigger's time and calls;
//   3. graphile-worker's get_job the same way, and both statements timed
//      from the client, alternating, one round trip each.
//
//   npm run bench:claim-path                # 300 events (BENCH_EVENTS)
//   npm run bench:claim-path -- --path-only # part 1 only
//   npm run bench:claim-path -- --ab x.sql  # only: the claim from the client on
//                                           # two databases, alternating, x.sql
//                                           # applied to the second (a variant of a
//                                           # trigger, say), each with the other's
//                                           # statements in between
//                                           # (scripts/claim-variants/: the
//                                           # variants of round 4)
//   npm run bench:claim-path -- --ab x.sql --explain  # the same, server-side:
//                                           # each trigger's time, EXPLAINed
//
// Uses TEST_DATABASE_URL / DATABASE_URL's server (or an embedded one) and a
// scratch database per part, dropped afterwards.
import { randomBytes } from "node:crypto";
import net from "node:net";
import os from "node:os";
import { Logger as GraphileLogger, runMigrations } from "graphile-worker";
import postgres from "postgres";
import { ContinuationDispatcher } from "../src/continuation/dispatcher.js";
import { claimAndQueueQuery, planExecutionsClaimAndQueue } from "../src/continuation/ledger.js";
import { ExecutionFinishedListener, LISTEN_APPLICATION_NAME } from "../src/continuation/listener.js";
import { connect } from "../src/db/connect.js";
import { migrate } from "../src/db/migrate.js";
import { createLogger } from "../src/log/logger.js";
import { startPostgresSource, withDatabase } from "../tests/helpers/postgres-source.js";
import { percentile } from "./lib/stats.js";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 300);
const SESSIONS = 400;
const log = createLogger({ level: "error", format: "json" });
const now = () => performance.now();
const sleep = (msec: number) => new Promise((r) => setTimeout(r, msec));
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ");
const stats = (v: number[]) => {
  const s = [...v].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p90: percentile(s, 90), p99: percentile(s, 99), mean: s.reduce((a, b) => a + b, 0) / s.length };
};
const us = (ms: number) => `${(ms * 1000).toFixed(0)}`;

// ── the socket probe ─────────────────────────────────────────────────────

let lastDataAt = 0;
let armed = false;
let firstWriteAt = 0;
const emit = net.Socket.prototype.emit;
net.Socket.prototype.emit = function (this: net.Socket, event: string | symbol, ...args: unknown[]) {
  if (event === "data") lastDataAt = now();
  return (emit as (...a: unknown[]) => boolean).call(this, event, ...args);
} as typeof emit;
const write = net.Socket.prototype.write;
net.Socket.prototype.write = function (this: net.Socket, ...args: unknown[]) {
  if (armed && firstWriteAt === 0) firstWriteAt = now();
  return (write as (...a: unknown[]) => boolean).apply(this, args);
} as typeof write;

// ── databases ────────────────────────────────────────────────────────────

const source = await startPostgresSource();
const admin = postgres(source.adminUrl, { max: 1, onnotice: () => {} });
const databases: string[] = [];
async function freshDatabase(): Promise<string> {
  const name = `nomos_claimpath_${randomBytes(4).toString("hex")}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  databases.push(name);
  return withDatabase(source.adminUrl, name);
}

async function nomosDatabase() {
  const url = await freshDatabase();
  const migrator = connect(url, { max: 1 });
  await migrate(migrator.sql);
  await migrator.close();
  const db = connect(url, { max: 10, applicationName: "nomos" });
  const driver = connect(url, { max: 2, applicationName: "bench-driver" });
  const rows = await db.sql<{ id: string }[]>`
    WITH s AS (INSERT INTO sessions (title) SELECT 'claim ' || g FROM generate_series(1, ${SESSIONS}) g RETURNING id)
    INSERT INTO assent_windows (session_id, opened_by, expires_at)
    SELECT id, 'operator:bench', now() + interval '1 day' FROM s RETURNING session_id AS id`;
  const sessions = rows.map((r) => r.id);
  /** n running executions, round robin over the sessions, each linked to the ledger. */
  const running = async (n: number) => {
    const r = await driver.sql<{ id: string; session_id: string }[]>`
      WITH e AS (INSERT INTO executions (session_id, target, command, risk, status, approved_at)
                 SELECT (${sessions}::uuid[])[1 + (g % ${sessions.length})], 'pve1', 'true', 'read_only', 'approved', now()
                   FROM generate_series(1, ${n}) g
                 RETURNING id, session_id),
           l AS (INSERT INTO nomos_plan_executions (execution_id, session_id) SELECT id, session_id FROM e)
      SELECT id, session_id FROM e`;
    await driver.sql`UPDATE executions SET status = 'running', started_at = now(), runner_owner = 'bench',
                     lease_expires_at = now() + interval '1 day' WHERE id = ANY(${r.map((x) => x.id)}::uuid[])`;
    await driver.sql`VACUUM ANALYZE executions`;
    await driver.sql`VACUUM ANALYZE nomos_plan_executions`;
    return r;
  };
  const finish = (id: string) =>
    driver.sql`UPDATE executions SET status = 'completed', exit_code = 0, finished_at = now() WHERE id = ${id}`;
  return { url, db, driver, running, finish, close: () => Promise.all([db.close(), driver.close()]) };
}

const claimParams = (sessionId: string) => ({
  sessionId,
  owner: "bench",
  actor: "system:continuation",
  leaseSeconds: 30,
  maxContinuations: 1_000_000,
  extraNotes: [],
});

// ── 1. the process's path ────────────────────────────────────────────────

async function processPath() {
  const n = await nomosDatabase();
  const listenDb = connect(n.url, { max: 1, applicationName: LISTEN_APPLICATION_NAME });
  const marks = { committed: 0, data: 0, callback: 0, queued: 0, reply: 0 };
  let done: (() => void) | undefined;
  const dispatcher = new ContinuationDispatcher({
    db: n.db,
    log,
    owner: "bench",
    maxContinuations: 1_000_000,
    startTurn: () => Promise.reject(new Error("the two-step path is not measured here")),
    turnQueued: () => {
      marks.queued = now();
      marks.reply = lastDataAt;
      armed = false;
      done?.();
    },
  });
  const listener = new ExecutionFinishedListener({
    sql: listenDb.sql,
    log,
    onFinished: (payload) => {
      marks.data = lastDataAt;
      marks.callback = now();
      firstWriteAt = 0;
      armed = true;
      void dispatcher.notify(payload);
    },
    onConnected: () => {},
  });
  await listener.start();
  const executions = await n.running(EVENTS + 20);
  const rows: Record<"notify" | "toCallback" | "toWrite" | "server" | "afterReply" | "total", number[]> = {
    notify: [],
    toCallback: [],
    toWrite: [],
    server: [],
    afterReply: [],
    total: [],
  };
  await sleep(200);
  for (const [i, e] of executions.entries()) {
    const queued = new Promise<void>((r) => {
      done = r;
    });
    await n.finish(e.id);
    marks.committed = now();
    await queued;
    if (i < 20) continue; // warm: prepared statements, plans, caches
    rows.notify.push(marks.data - marks.committed);
    rows.toCallback.push(marks.callback - marks.data);
    rows.toWrite.push(firstWriteAt - marks.callback);
    rows.server.push(marks.reply - firstWriteAt);
    rows.afterReply.push(marks.queued - marks.reply);
    rows.total.push(marks.queued - marks.committed);
  }
  await listener.stop();
  await dispatcher.stop();
  await listenDb.close();
  await n.close();
  return rows;
}

// ── 2. the statement on the server ───────────────────────────────────────

interface PlanTrigger {
  "Trigger Name": string;
  Relation: string;
  Time: number;
  Calls: number;
}
interface ExplainOut {
  Plan: unknown;
  "Planning Time": number;
  "Execution Time": number;
  Triggers: PlanTrigger[];
}

async function explainClaim(variant?: string) {
  const n = await nomosDatabase();
  if (variant) await n.db.sql.unsafe(variant);
  const executions = await n.running(EVENTS + 20);
  const triggers = new Map<string, { time: number[]; calls: number }>();
  const exec: number[] = [];
  const planning: number[] = [];
  let sample: unknown;
  for (const [i, e] of executions.entries()) {
    await n.finish(e.id);
    const q = claimAndQueueQuery(n.db, claimParams(e.session_id));
    const [row] = await n.db.sql.unsafe<{ "QUERY PLAN": ExplainOut[] }[]>(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${q.text}`,
      q.parameters as unknown as never[],
    );
    const out = row!["QUERY PLAN"][0]!;
    if (i < 20) continue;
    sample ??= out;
    exec.push(out["Execution Time"]);
    planning.push(out["Planning Time"]);
    for (const t of out.Triggers) {
      const key = `${t.Relation}: ${t["Trigger Name"]}`;
      const entry = triggers.get(key) ?? { time: [], calls: 0 };
      entry.time.push(t.Time);
      entry.calls += t.Calls;
      triggers.set(key, entry);
    }
  }
  await n.close();
  return { exec, planning, triggers, sample };
}

// ── 3. graphile-worker's get_job, and both from the client ───────────────

/** graphile-worker 0.17.3's get_job (src/sql/getJobs.ts: named-queue strategy 2, batch 1, no flags). */
const GET_JOB = `\
with j as (
  select jobs.job_queue_id, jobs.priority, jobs.run_at, jobs.id
    from "graphile_worker"._private_jobs as jobs
    where jobs.is_available = true
    and run_at <= now()
    and task_id = any($2::int[])
    and (
      jobs.job_queue_id is null
      or
      jobs.job_queue_id in (
        select id
        from "graphile_worker"._private_job_queues as job_queues
        where job_queues.is_available = true
        for update
        skip locked
      )
    )
    order by priority asc, run_at asc
    limit 1
    for update
    skip locked
),
q as (
  update "graphile_worker"._private_job_queues as job_queues
    set
      locked_by = $1::text,
      locked_at = now()
    from j
    where job_queues.id = j.job_queue_id
)
  update "graphile_worker"._private_jobs as jobs
    set
      attempts = jobs.attempts + 1,
      locked_by = $1::text,
      locked_at = now()
    from j
    where jobs.id = j.id
    returning *`;

async function graphileDatabase() {
  const url = await freshDatabase();
  await runMigrations({ connectionString: url, logger: new GraphileLogger(() => () => {}) });
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  await sql`SELECT graphile_worker.add_job('bench', '{}'::json)`;
  const [task] = await sql<{ id: number }[]>`SELECT id FROM graphile_worker._private_tasks WHERE identifier = 'bench'`;
  await sql`DELETE FROM graphile_worker._private_jobs`;
  return { sql, taskIds: [task!.id] };
}

async function explainGetJob() {
  const g = await graphileDatabase();
  const exec: number[] = [];
  const planning: number[] = [];
  let sample: unknown;
  for (let i = 0; i < EVENTS + 20; i++) {
    await g.sql`SELECT graphile_worker.add_job('bench', json_build_object('k', ${i}::int))`;
    const [row] = await g.sql.unsafe<{ "QUERY PLAN": ExplainOut[] }[]>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${GET_JOB}`, [
      "worker-bench",
      g.taskIds,
    ] as never[]);
    const out = row!["QUERY PLAN"][0]!;
    if (i < 20) continue;
    sample ??= out;
    exec.push(out["Execution Time"]);
    planning.push(out["Planning Time"]);
  }
  await g.sql.end();
  return { exec, planning, sample };
}

/** Each statement timed from the client (one round trip, prepared, committed), alternating. */
async function clientTimed() {
  const n = await nomosDatabase();
  const g = await graphileDatabase();
  const executions = await n.running(EVENTS + 20);
  const claim: number[] = [];
  const getJob: number[] = [];
  for (const [i, e] of executions.entries()) {
    await n.finish(e.id);
    await g.sql`SELECT graphile_worker.add_job('bench', json_build_object('k', ${i}::int))`;
    const t0 = now();
    const outcome = await planExecutionsClaimAndQueue(n.db, claimParams(e.session_id));
    const t1 = now();
    const jobs = await g.sql.unsafe(GET_JOB, ["worker-bench", g.taskIds] as unknown as never[], { prepare: true });
    const t2 = now();
    if (outcome.kind !== "queued" || jobs.length !== 1) throw new Error(`claim ${outcome.kind}, get_job ${jobs.length}`);
    if (i < 20) continue;
    claim.push(t1 - t0);
    getJob.push(t2 - t1);
  }
  await g.sql.end();
  await n.close();
  return { claim, getJob };
}

/** The claim on two databases, alternating statement by statement; `variant` is applied to the second. */
async function abClaims(variant: string) {
  const a = await nomosDatabase();
  const b = await nomosDatabase();
  await b.db.sql.unsafe(variant);
  const ea = await a.running(EVENTS + 20);
  const eb = await b.running(EVENTS + 20);
  const times: [number[], number[]] = [[], []];
  for (let i = 0; i < ea.length; i++) {
    // Alternate which goes first, so neither always follows the other.
    const pairs =
      i % 2 === 0
        ? ([
            [a, ea[i]!, 0],
            [b, eb[i]!, 1],
          ] as const)
        : ([
            [b, eb[i]!, 1],
            [a, ea[i]!, 0],
          ] as const);
    for (const [n, e, k] of pairs) {
      await n.finish(e.id);
      const t0 = now();
      const outcome = await planExecutionsClaimAndQueue(n.db, claimParams(e.session_id));
      const t1 = now();
      if (outcome.kind !== "queued") throw new Error(`claim ${outcome.kind}`);
      if (i >= 20) times[k].push(t1 - t0);
    }
  }
  const [audit] = await b.db.sql<{ n: string }[]>`SELECT count(*)::text AS n FROM audit.events`;
  const [auditA] = await a.db.sql<{ n: string }[]>`SELECT count(*)::text AS n FROM audit.events`;
  await a.close();
  await b.close();
  return { a: times[0], b: times[1], auditRows: { a: auditA!.n, b: audit!.n } };
}

// ── the run ──────────────────────────────────────────────────────────────

// The modes end by returning, so the finally below always drops the scratch databases.
async function run(): Promise<void> {
  const ab = process.argv.indexOf("--ab");
  if (ab > 0) {
    const file = process.argv[ab + 1]!;
    const { readFile } = await import("node:fs/promises");
    const loadAtStart = load();
    const variant = await readFile(file, "utf8");
    if (process.argv.includes("--explain")) {
      // Server-side only: each trigger's time per statement, as migrated then with the variant, twice.
      for (const [label, v] of [
        ["as migrated", undefined],
        [file, variant],
        ["as migrated", undefined],
        [file, variant],
      ] as const) {
        const c = await explainClaim(v);
        const p50 = (xs: number[]) => stats(xs).p50;
        const trig = [...c.triggers].map(([k, t]) => `${k.replace(/: .*RI_ConstraintTrigger.*/, ": RI")} ${p50(t.time).toFixed(3)}`);
        console.log(`${label}: execution p50 ${stats(c.exec).p50.toFixed(3)} ms; ${trig.join("; ")} (load ${load()})`);
      }
      return;
    }
    const r = await abClaims(variant);
    const sa = stats(r.a);
    const sb = stats(r.b);
    console.log(`\nThe claim from the client, ${r.a.length} each, alternating (load ${loadAtStart} → ${load()}); second database: ${file}`);
    console.log("| database | p50 | p90 | mean | audit rows |\n|---|---|---|---|---|");
    console.log(`| as migrated | ${sa.p50.toFixed(3)} | ${sa.p90.toFixed(3)} | ${sa.mean.toFixed(3)} | ${r.auditRows.a} |`);
    console.log(`| with ${file} | ${sb.p50.toFixed(3)} | ${sb.p90.toFixed(3)} | ${sb.mean.toFixed(3)} | ${r.auditRows.b} |`);
    console.log(
      `| second ÷ first | ${(sb.p50 / sa.p50).toFixed(2)}× | ${(sb.p90 / sa.p90).toFixed(2)}× | ${(sb.mean / sa.mean).toFixed(2)}× | |`,
    );
    return;
  }

  const loadAtStart = load();
  const path = await processPath();
  console.log(`\n1. The process's path, serial, ${EVENTS} events (load ${loadAtStart} → ${load()}), µs:`);
  console.log("| stage | p50 | p90 | p99 | mean |\n|---|---|---|---|---|");
  const labels: Record<keyof typeof path, string> = {
    notify: "commit reply read → NOTIFY bytes arrive (negative: before)",
    toCallback: "NOTIFY bytes → listener callback",
    toWrite: "listener callback → claim bytes written",
    server: "claim written → reply bytes arrive (server + loopback)",
    afterReply: "reply bytes → turn handed on",
    total: "commit reply read → turn handed on",
  };
  for (const [k, v] of Object.entries(path)) {
    const s = stats(v);
    console.log(`| ${labels[k as keyof typeof path]} | ${us(s.p50)} | ${us(s.p90)} | ${us(s.p99)} | ${us(s.mean)} |`);
  }
  if (process.argv.includes("--path-only")) return;

  const claim = await explainClaim();
  console.log(`\n2. The claim, EXPLAIN (ANALYZE, BUFFERS), ${EVENTS} statements (load ${load()}), ms:`);
  console.log("| part | p50 | p90 | mean | calls per statement |\n|---|---|---|---|---|");
  const row = (label: string, v: number[], calls = "") => {
    const s = stats(v);
    console.log(`| ${label} | ${s.p50.toFixed(3)} | ${s.p90.toFixed(3)} | ${s.mean.toFixed(3)} | ${calls} |`);
  };
  row("planning", claim.planning);
  row("execution (triggers included)", claim.exec);
  for (const [k, t] of claim.triggers) row(k, t.time, (t.calls / claim.exec.length).toFixed(2));
  if (process.env.BENCH_PLAN) console.log(JSON.stringify(claim.sample, null, 1));

  const gj = await explainGetJob();
  console.log(`\n3. graphile-worker's get_job, EXPLAIN (ANALYZE, BUFFERS), ${EVENTS} statements (load ${load()}), ms:`);
  console.log("| part | p50 | p90 | mean | |\n|---|---|---|---|---|");
  row("planning", gj.planning);
  row("execution", gj.exec);

  const timed = await clientTimed();
  console.log(`\n4. From the client, alternating, ${EVENTS} each (load ${load()}), ms:`);
  console.log("| statement | p50 | p90 | mean | |\n|---|---|---|---|---|");
  row("Nomos claim-and-queue (planExecutionsClaimAndQueue)", timed.claim);
  row("graphile-worker get_job", timed.getJob);
}

try {
  await run();
} finally {
  for (const name of databases) await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
  await admin.end();
  await source.stop();
}
process.exit(0);

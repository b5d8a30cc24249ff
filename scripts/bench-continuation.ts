// npm run bench:continuation — how fast a finished execution re-invokes the
// agent, measured side by side in one run on one PostgreSQL:
//  (a) the floor: a bare NOTIFY round trip (commit of pg_notify -> listener callback);
//  (b) commit of the terminal UPDATE -> continuation turn dispatched, through
//      the real listener, claim and dispatcher, 2,000 executions over 50 sessions;
//  (c) the same through a 1-second polling dispatcher (the old design);
//  (d) the sweep's query with 10k, 100k and 1M rows of history and 100 pending.
// Prints a Markdown table for docs/benchmarks.md.
import os from "node:os";
import { sql } from "kysely";
import { startAgent } from "../src/agent/start-agent.js";
import { ContinuationDispatcher } from "../src/continuation/dispatcher.js";
import { planExecutionsPendingSessions } from "../src/continuation/ledger.js";
import { ExecutionFinishedListener, LISTEN_APPLICATION_NAME } from "../src/continuation/listener.js";
import { connect, type Db } from "../src/db/connect.js";
import { executionsPortFrom } from "../src/executions/executions-port.js";
import { ExecutionRunner } from "../src/executions/runner.js";
import { createLogger } from "../src/log/logger.js";
import { startMessagesDouble } from "../src/model-double/messages-double.js";
import { SshPool } from "../src/ssh/connection-pool.js";
import { makeRedactor } from "../src/ssh/redact.js";
import { TargetRegistry } from "../src/targets/registry.js";
import { benchAgentConfig } from "./lib/bench-agent-config.js";
import { withBenchDatabase } from "./lib/bench-database.js";
import { ms, row, summarize } from "./lib/stats.js";

const log = createLogger({ level: "warn", format: "json" });
const EXECUTIONS = Number(process.env.BENCH_EXECUTIONS ?? 2000);
const SESSIONS = 50;
const POLLED = Number(process.env.BENCH_POLLED ?? 60);
/** Time between finishing executions in (b): each continuation runs a whole (instant) agent turn. */
const SPACING_MS = Number(process.env.BENCH_SPACING_MS ?? 20);

const sleep = (msec: number) => new Promise((r) => setTimeout(r, msec));

async function makeSessions(db: Db, n: number): Promise<string[]> {
  const rows = await sql<{ id: string }>`
    WITH s AS (INSERT INTO sessions (title) SELECT 'bench ' || g FROM generate_series(1, ${n}) g RETURNING id)
    INSERT INTO assent_windows (session_id, opened_by, expires_at)
    SELECT id, 'operator:bench', now() + interval '1 day' FROM s RETURNING session_id AS id`.execute(db.kysely);
  return rows.rows.map((r) => r.id);
}

async function runningExecution(db: Db, sessionId: string): Promise<string> {
  const [row] = await db.sql<{ id: string }[]>`
    WITH e AS (INSERT INTO executions (session_id, target, command, risk, status, approved_at)
               VALUES (${sessionId}, 'pve1', 'true', 'read_only', 'approved', now()) RETURNING id),
         l AS (INSERT INTO nomos_plan_executions (execution_id, session_id) SELECT id, ${sessionId} FROM e)
    SELECT id FROM e`;
  await db.sql`UPDATE executions SET status = 'running', started_at = now(), runner_owner = 'bench',
                 lease_expires_at = now() + interval '1 hour' WHERE id = ${row!.id}`;
  return row!.id;
}

const finish = (db: Db, id: string) =>
  db.sql`UPDATE executions SET status = 'completed', exit_code = 0, finished_at = now() WHERE id = ${id}`;

/** (a) NOTIFY round trip: time from the commit returning to the listener's callback. */
async function benchNotify(db: Db, url: string): Promise<number[]> {
  const waiting = new Map<string, number>();
  const samples: number[] = [];
  const listenDb = connect(url, { max: 1, applicationName: LISTEN_APPLICATION_NAME });
  const listener = new ExecutionFinishedListener({
    sql: listenDb.sql,
    log,
    onFinished: (payload) => {
      const t0 = waiting.get(payload);
      if (t0 !== undefined) samples.push(performance.now() - t0);
    },
    onConnected: () => {},
  });
  await listener.start();
  for (let i = 0; i < EXECUTIONS; i++) {
    const id = `floor-${i}`;
    waiting.set(id, performance.now());
    await db.sql`SELECT pg_notify('nomos_execution_finished', ${id})`;
    if (i % 20 === 0) await sleep(1);
  }
  await sleep(200);
  await listener.stop();
  await listenDb.close();
  return samples;
}

/**
 * (b) the event loop: terminal UPDATE committed -> continuation turn
 * dispatched (Turns.chatWith has committed the queued turn with its notes),
 * through the real listener, claim, dispatcher and Turns; the model double
 * answers each continuation at once.
 */
async function benchContinuation(db: Db, url: string, sessions: string[]): Promise<number[]> {
  const committedAt = new Map<string, number>();
  const samples: number[] = [];
  const model = await startMessagesDouble({ policy: () => ({ content: [{ type: "text", text: "noted" }] }) });
  const registry = new TargetRegistry({ db: db.kysely, fileTargets: [] });
  const pool = new SshPool({ log });
  const runner = new ExecutionRunner({ db, registry, pool, log, redact: makeRedactor([]) });
  const agent = await startAgent({
    config: benchAgentConfig(model.url),
    db: db.kysely,
    log,
    executions: executionsPortFrom({
      runner,
      registry,
      pctCreate: () => Promise.reject(new Error("no pct_create in this benchmark")),
    }),
    // No buttons are clicked in this benchmark.
    onApprovalsSettled: () => {},
  });
  const dispatcher = new ContinuationDispatcher({
    db,
    log,
    owner: "bench",
    maxContinuations: 1_000_000,
    startTurn: async ({ sessionId, notes, executionIds, reason }) => {
      const turn = await agent.turns.chatWith(sessionId, notes, { executionIds, reason });
      const now = performance.now();
      for (const id of executionIds) {
        const t0 = committedAt.get(id);
        if (t0 !== undefined) samples.push(now - t0);
      }
      return turn;
    },
  });
  const listenDb = connect(url, { max: 1, applicationName: LISTEN_APPLICATION_NAME });
  const listener = new ExecutionFinishedListener({
    sql: listenDb.sql,
    log,
    onFinished: (id) => void dispatcher.notify(id),
    onConnected: () => {},
  });
  await listener.start();
  const ids: string[] = [];
  for (let i = 0; i < EXECUTIONS; i++) ids.push(await runningExecution(db, sessions[i % sessions.length]!));
  for (const id of ids) {
    await finish(db, id);
    committedAt.set(id, performance.now());
    await sleep(SPACING_MS);
  }
  while (samples.length < ids.length) await sleep(20);
  await dispatcher.idle();
  await listener.stop();
  await listenDb.close();
  await dispatcher.stop();
  for (const s of sessions) await agent.turns.idle(s);
  await agent.stop();
  await pool.stop();
  await model.close();
  return samples;
}

/** (c) the old design: a dispatcher that polls every second. */
async function benchPolling(db: Db, sessions: string[]): Promise<number[]> {
  const committedAt = new Map<string, number>();
  const samples: number[] = [];
  let stop = false;
  const poller = (async () => {
    while (!stop) {
      await sleep(1000);
      const rows = await sql<{ execution_id: string }>`
        UPDATE nomos_plan_executions npe SET continued_at = now(), claimed_by = 'poller',
               claim_expires_at = now() + interval '30 seconds'
          FROM executions e
         WHERE e.id = npe.execution_id AND npe.continued_at IS NULL AND execution_is_terminal(e.status)
        RETURNING npe.execution_id`.execute(db.kysely);
      const now = performance.now();
      for (const r of rows.rows) {
        const t0 = committedAt.get(r.execution_id);
        if (t0 !== undefined) samples.push(now - t0);
      }
    }
  })();
  const ids: string[] = [];
  for (let i = 0; i < POLLED; i++) ids.push(await runningExecution(db, sessions[i % sessions.length]!));
  for (const id of ids) {
    await finish(db, id);
    committedAt.set(id, performance.now());
    await sleep(37); // spread over several poll intervals
  }
  while (samples.length < ids.length) await sleep(50);
  stop = true;
  await poller;
  return samples;
}

/** (d) the sweep query at growing history sizes, 100 results pending. */
async function benchSweep(db: Db): Promise<{ rows: number; summary: ReturnType<typeof summarize> }[]> {
  const results = [];
  const [session] = await makeSessions(db, 1);
  let history = 0;
  // 100 pending: finished, not continued, in sessions with an open window.
  const pendingSessions = await makeSessions(db, 100);
  for (const s of pendingSessions) await finish(db, await runningExecution(db, s));
  for (const target of [10_000, 100_000, 1_000_000]) {
    const add = target - history;
    await db.sql`
      WITH e AS (INSERT INTO executions (session_id, target, command, risk, status, finished_at)
                 SELECT ${session!}, 'pve1', 'true', 'read_only', 'rejected', now() FROM generate_series(1, ${add})
                 RETURNING id)
      INSERT INTO nomos_plan_executions (execution_id, session_id, continued_at, claimed_by, delivered_turn_id)
      SELECT id, ${session!}, now(), 'history', NULL FROM e`;
    history = target;
    await db.sql`VACUUM ANALYZE nomos_plan_executions`;
    await db.sql`VACUUM ANALYZE executions`;
    const samples: number[] = [];
    for (let i = 0; i < 30; i++) {
      const t0 = performance.now();
      const found = await planExecutionsPendingSessions(db.kysely, { limit: 1000 });
      samples.push(performance.now() - t0);
      if (found.length !== 100) throw new Error(`sweep found ${found.length} sessions, expected 100`);
    }
    results.push({ rows: target, summary: summarize(samples.slice(5)) });
  }
  return results;
}

await withBenchDatabase(async (db, url) => {
  const sessions = await makeSessions(db, SESSIONS);
  const a = summarize(await benchNotify(db, url));
  const b = summarize(await benchContinuation(db, url, sessions));
  const c = summarize(await benchPolling(db, sessions));
  const d = await benchSweep(db);
  const [version] = await db.sql<{ v: string }[]>`SELECT current_setting('server_version') AS v`;

  const lines = [
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, PostgreSQL ${version?.v}.`,
    "",
    "| path | n | p50 | p95 | p99 | max |",
    "|---|---|---|---|---|---|",
    row("(a) bare NOTIFY round trip", a),
    row("(b) terminal UPDATE commit → continuation turn dispatched", b),
    row("(c) the same through a 1 s polling dispatcher", c),
    "",
    "| (d) sweep query, 100 pending | n | p50 | p95 | p99 | max |",
    "|---|---|---|---|---|---|",
    ...d.map((x) => row(`${x.rows.toLocaleString("en")} rows of history`, x.summary)),
    "",
    `Goals: (b) p99 ${ms(b.p99)} vs 3 × (a) p99 = ${ms(3 * a.p99)} and under 10 ms: ${b.p99 <= 3 * a.p99 && b.p99 < 10 ? "met" : "NOT met"}; ` +
      `(c) p50 / (b) p50 = ${(c.p50 / b.p50).toFixed(0)}× (goal ≥ 100×): ${c.p50 / b.p50 >= 100 ? "met" : "NOT met"}; ` +
      `(d) 1M / 10k p50 = ${(d[2]!.summary.p50 / d[0]!.summary.p50).toFixed(2)} (goal within 0.5–1.5): ${
        Math.abs(d[2]!.summary.p50 / d[0]!.summary.p50 - 1) <= 0.5 ? "met" : "NOT met"
      }.`,
  ];
  console.log(lines.join("\n"));
});
process.exit(0);

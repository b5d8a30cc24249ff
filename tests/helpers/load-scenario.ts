// The load scenario shared by `npm run bench:load` and
// tests/reliability-load.test.ts: N sessions, each with an open assent window
// and executions that finish at random moments over S seconds, against the
// real service running as two processes (src/main.ts twice) on one
// database, with the Messages API double answering every continuation turn
// at once. Executions are inserted as running (held by an outside runner)
// and finished by this driver with the same terminal UPDATE the runner
// commits, so the load is on the continuation path, not on SSH.
// What it measures, from the database's own clocks: dispatch latency (the
// terminal UPDATE's commit, executions.finished_at, to the continuation turn
// queued, turns.created_at) and the time to the agent running it
// (turns.started_at); the two processes' resident memory before and after.
// What it checks: every finished execution continued exactly once, no two
// turns of one session overlapping, nothing left pending.
import { readFile } from "node:fs/promises";
import { sql } from "kysely";
import type { Db } from "../../src/db/connect.js";
import { type MessagesDouble, startMessagesDouble } from "../../src/model-double/messages-double.js";
import { type ServiceProcess, startService } from "./service-process.js";

export interface LoadOptions {
  sessions: number;
  seconds: number;
  perSession: number;
  /** How long to wait for the tail to drain after the last finish. */
  drainSeconds?: number;
}

export interface LoadResult {
  executions: number;
  continued: number;
  turns: number;
  /** Executions named by more or fewer than one continuation note. */
  notDeliveredOnce: string[];
  /** Sessions with two turns whose [started_at, finished_at] intervals overlap. */
  overlapping: string[];
  pendingAtEnd: number;
  turnsNotCompleted: number;
  /** Turns by final status ("coalesced": queued work folded into another turn). */
  turnStatuses: Record<string, number>;
  dispatchMs: { p50: number; p99: number; max: number };
  toAgentMs: { p50: number; p99: number; max: number };
  rssMb: { start: number[]; end: number[] };
  wallSeconds: number;
  byProcess: Record<string, number>;
}

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const summary = (xs: number[]) => ({ p50: Math.round(pct(xs, 50)), p99: Math.round(pct(xs, 99)), max: Math.round(Math.max(...xs)) });

async function rssMb(pid: number | undefined): Promise<number> {
  if (!pid) return NaN;
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return Math.round(kb / 1024);
}

export async function runLoad(db: Db, url: string, o: LoadOptions): Promise<LoadResult> {
  const started = performance.now();
  const double: MessagesDouble = await startMessagesDouble({ policy: () => ({ content: [{ type: "text", text: "Noted." }] }) });
  const services: ServiceProcess[] = [];
  try {
    const env = {
      DATABASE_URL: url,
      ANTHROPIC_API_KEY: "sk-ant-test-load",
      ANTHROPIC_BASE_URL: double.url,
      NOMOS_MAX_CONTINUATIONS: "1000",
      NOMOS_SWEEP_SECONDS: "5",
      LOG_LEVEL: "info",
    };
    services.push(await startService(env));
    services.push(await startService(env));

    const sessions = (
      await sql<{ id: string }>`
        WITH s AS (INSERT INTO sessions (title) SELECT 'load ' || g FROM generate_series(1, ${o.sessions}) g RETURNING id)
        INSERT INTO assent_windows (session_id, opened_by, scope_targets, expires_at)
        SELECT id, 'operator:load', '{pve1}', now() + interval '1 day' FROM s RETURNING session_id AS id`.execute(db.kysely)
    ).rows.map((r) => r.id);
    // Every execution running, held by an outside runner with a long lease:
    // inserted approved and moved to running in one transaction, so the
    // services' runners (woken by NOTIFY at commit) never see one approved.
    const executions = await db.kysely.transaction().execute(async (tx) => {
      const ids = (
        await sql<{ id: string }>`
          WITH e AS (
            INSERT INTO executions (session_id, target, command, risk, mode, status, approved_at)
            SELECT s, 'pve1', 'job ' || g, 'config_mutation', 'async', 'approved', now()
              FROM unnest(${sessions}::uuid[]) s, generate_series(1, ${o.perSession}) g
            RETURNING id, session_id),
          l AS (INSERT INTO nomos_plan_executions (execution_id, session_id) SELECT id, session_id FROM e)
          SELECT id FROM e`.execute(tx)
      ).rows.map((r) => r.id);
      await sql`UPDATE executions SET status = 'running', started_at = now(), runner_owner = 'load-driver',
                  lease_expires_at = now() + interval '1 hour' WHERE id = ANY(${ids}::uuid[])`.execute(tx);
      return ids;
    });

    const rssStart = await Promise.all(services.map((s) => rssMb(s.child.pid)));
    // Random finish moments over the window; finished in small batches as they come due.
    const due = executions.map((id) => ({ id, at: Math.random() * o.seconds * 1000 })).sort((a, b) => a.at - b.at);
    const t0 = performance.now();
    let next = 0;
    while (next < due.length) {
      const now = performance.now() - t0;
      const batch: string[] = [];
      while (next < due.length && due[next]!.at <= now) batch.push(due[next++]!.id);
      // One UPDATE per execution, as runners commit them (each its own NOTIFY).
      await Promise.all(
        batch.map(
          (id) =>
            db.sql`UPDATE executions SET status = 'completed', exit_code = 0, stdout = 'done', finished_at = now(), lease_expires_at = NULL WHERE id = ${id}`,
        ),
      );
      await new Promise((r) => setTimeout(r, 5));
    }

    // Drain: nothing unclaimed, nothing queued or running.
    const deadline = performance.now() + (o.drainSeconds ?? 30) * 1000;
    let pending = Infinity;
    while (performance.now() < deadline) {
      const r = await sql<{ n: string }>`
        SELECT (SELECT count(*) FROM nomos_plan_executions WHERE delivered_turn_id IS NULL)
             + (SELECT count(*) FROM turns WHERE status IN ('queued', 'running')) AS n`.execute(db.kysely);
      pending = Number(r.rows[0]!.n);
      if (pending === 0) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const rssEnd = await Promise.all(services.map((s) => rssMb(s.child.pid)));

    const delivered = await sql<{ execution_id: string; notes: string }>`
      SELECT e.id AS execution_id,
             (SELECT count(*) FROM messages m WHERE m.session_id = e.session_id AND m.kind = 'system_note'
                 AND strpos(m.content::text, 'execution ' || e.id || ' ') > 0)::text AS notes
        FROM executions e`.execute(db.kysely);
    const notDeliveredOnce = delivered.rows.filter((r) => r.notes !== "1").map((r) => r.execution_id);
    const overlapping = (
      await sql<{ session_id: string }>`
        SELECT DISTINCT a.session_id FROM turns a JOIN turns b
          ON a.session_id = b.session_id AND a.id < b.id
         AND a.started_at < COALESCE(b.finished_at, 'infinity') AND b.started_at < COALESCE(a.finished_at, 'infinity')`.execute(db.kysely)
    ).rows.map((r) => r.session_id);
    const lat = await sql<{ dispatch_ms: number; agent_ms: number }>`
      SELECT extract(epoch FROM t.created_at - e.finished_at) * 1000 AS dispatch_ms,
             extract(epoch FROM t.started_at - e.finished_at) * 1000 AS agent_ms
        FROM nomos_plan_executions l JOIN executions e ON e.id = l.execution_id JOIN turns t ON t.id = l.delivered_turn_id`.execute(
      db.kysely,
    );
    // A queued turn coalesced into the one that ran instead ends 'cancelled'
    // by design (its notes ride that turn): it is not a turn that failed.
    const turns = await sql<{ status: string; owner: string | null; n: string }>`
      SELECT CASE WHEN status = 'cancelled' AND error LIKE 'coalesced into turn %' THEN 'coalesced' ELSE status END AS status,
             owner, count(*)::text AS n
        FROM turns GROUP BY 1, owner`.execute(db.kysely);
    const byProcess: Record<string, number> = {};
    for (const r of turns.rows) if (r.owner) byProcess[r.owner] = (byProcess[r.owner] ?? 0) + Number(r.n);
    return {
      executions: executions.length,
      continued: lat.rows.length,
      turns: turns.rows.reduce((a, r) => a + Number(r.n), 0),
      notDeliveredOnce,
      overlapping,
      pendingAtEnd: pending,
      turnsNotCompleted: turns.rows
        .filter((r) => r.status !== "completed" && r.status !== "coalesced")
        .reduce((a, r) => a + Number(r.n), 0),
      turnStatuses: Object.fromEntries(
        [...new Set(turns.rows.map((r) => r.status))].map((st) => [
          st,
          turns.rows.filter((r) => r.status === st).reduce((a, r) => a + Number(r.n), 0),
        ]),
      ),
      dispatchMs: summary(lat.rows.map((r) => Number(r.dispatch_ms))),
      toAgentMs: summary(lat.rows.map((r) => Number(r.agent_ms))),
      rssMb: { start: rssStart, end: rssEnd },
      wallSeconds: Math.round((performance.now() - started) / 1000),
      byProcess,
    };
  } finally {
    await Promise.all(services.map((s) => s.stop()));
    await double.close();
  }
}

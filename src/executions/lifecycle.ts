// The execution lifecycle: the only module that changes executions.status.
//
//   pending_approval -> approved -> running -> completed | failed | timed_out | cancelled
//   pending_approval -> rejected
//   pending_approval | approved -> cancelled     (withdrawn before it ran)
//
// Invariants:
// - Every status change is one conditional `UPDATE ... WHERE status =
//   <expected> RETURNING`; when no row comes back the transition was illegal
//   and ExecutionTransitionError says which status was found instead. Never
//   a silent no-op. (The trigger executions_guard_transition is the
//   database's copy of the same rules.)
// - An execution created for a session is linked in nomos_plan_executions in
//   the same transaction; the insert and the link commit together or not at all.
// - Each change appends an execution_updated session event in the same
//   transaction, so the browser sees exactly what was committed.
// - Runner transitions name their owner: a runner that lost its lease cannot
//   finish an execution another process has since marked lost.
// Pass a withActor transaction so the audit trail names who did it.
import { type Kysely, sql } from "kysely";
import type { Database, Execution, ExecutionStatus, Risk } from "../db/schema.js";
import { DomainError } from "../errors/domain-error.js";
import { sessionEventsAppend } from "../events/session-events.js";
import { executionToJson } from "./execution-json.js";

export const EXECUTION_CANCEL_CHANNEL = "nomos_execution_cancel";
export const LOST_LEASE_MESSAGE =
  "the runner holding this execution stopped (its lease expired) while the command was running; " +
  "the command may or may not have completed on the target. It was not re-run: check the target's state before retrying.";

/** A transition refused: not_found when the execution is missing, else conflict. */
export class ExecutionTransitionError extends DomainError {
  override name = "ExecutionTransitionError";
  constructor(
    readonly executionId: string,
    readonly found: ExecutionStatus | "missing",
    readonly expected: string,
    readonly attempted: string,
  ) {
    super(
      found === "missing" ? "not_found" : "conflict",
      found === "missing"
        ? `execution ${executionId} does not exist; cannot ${attempted}`
        : `execution ${executionId} is ${found}, not ${expected}; cannot ${attempted}`,
    );
  }
}

type Db = Kysely<Database>;

async function inTransaction<T>(db: Db, work: (tx: Db) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

async function announce(db: Db, e: Execution): Promise<Execution> {
  if (e.session_id) {
    await sessionEventsAppend(db, [
      { sessionId: e.session_id, turnId: null, type: "execution_updated", data: { execution: executionToJson(e) } },
    ]);
  }
  return e;
}

async function refuse(db: Db, executionId: string, expected: string, attempted: string): Promise<never> {
  const row = await db.selectFrom("executions").select("status").where("id", "=", executionId).executeTakeFirst();
  throw new ExecutionTransitionError(executionId, row?.status ?? "missing", expected, attempted);
}

export interface ExecutionCreateParams {
  sessionId: string | null;
  planId?: string | null;
  turnId?: string | null;
  target: string;
  command: string;
  description?: string | null;
  risk: Risk;
  /** Why the classifier chose `risk` (stored and shown to the operator). */
  riskReason?: string | null;
  /** The plan step it serves (1-based), when the agent named one. */
  planStep?: number | null;
  mode: "sync" | "async";
  status: "pending_approval" | "approved";
  timeoutS?: number;
  /** The result goes back inline in the tool_result: mark it continued so no continuation is dispatched. */
  deliveredInline?: boolean;
}

export async function executionCreate(db: Db, p: ExecutionCreateParams): Promise<Execution> {
  if (p.deliveredInline && !p.sessionId) throw new Error("executionCreate: deliveredInline needs a sessionId");
  return inTransaction(db, async (tx) => {
    const e = await tx
      .insertInto("executions")
      .values({
        session_id: p.sessionId,
        plan_id: p.planId ?? null,
        turn_id: p.turnId ?? null,
        target: p.target,
        command: p.command,
        description: p.description ?? null,
        risk: p.risk,
        risk_reason: p.riskReason ?? null,
        plan_step: p.planStep ?? null,
        mode: p.mode,
        status: p.status,
        timeout_s: p.timeoutS ?? 600,
        approved_at: p.status === "approved" ? sql<Date>`now()` : null,
        stdout_dropped_bytes: 0,
        stderr_dropped_bytes: 0,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (p.sessionId) {
      await tx
        .insertInto("nomos_plan_executions")
        .values({
          execution_id: e.id,
          session_id: p.sessionId,
          plan_id: p.planId ?? null,
          ...(p.deliveredInline ? { continued_at: sql<Date>`now()`, claimed_by: "inline" } : {}),
        })
        .execute();
    }
    return announce(tx, e);
  });
}

/**
 * pending_approval -> approved. An execution approved later runs in the
 * background (mode becomes 'async'): the turn that asked for it with `run`
 * has moved on, so its result comes back as a continuation, and the runner,
 * which only claims async executions, picks it up at once.
 */
export async function executionApprove(db: Db, p: { executionId: string }): Promise<Execution> {
  return inTransaction(db, async (tx) => {
    const e = await tx
      .updateTable("executions")
      .set({ status: "approved", approved_at: sql<Date>`now()`, mode: "async" })
      .where("id", "=", p.executionId)
      .where("status", "=", "pending_approval")
      .returningAll()
      .executeTakeFirst();
    return e ? announce(tx, e) : refuse(tx, p.executionId, "pending_approval", "approve it");
  });
}

export async function executionReject(db: Db, p: { executionId: string; reason?: string }): Promise<Execution> {
  return inTransaction(db, async (tx) => {
    const e = await tx
      .updateTable("executions")
      .set({ status: "rejected", finished_at: sql<Date>`now()`, error: p.reason ?? "rejected by the operator" })
      .where("id", "=", p.executionId)
      .where("status", "=", "pending_approval")
      .returningAll()
      .executeTakeFirst();
    return e ? announce(tx, e) : refuse(tx, p.executionId, "pending_approval", "reject it");
  });
}

/**
 * Withdraws a pending or approved execution at once (-> cancelled); for a
 * running one, records the request and tells its runner (NOTIFY), which
 * kills the remote process and then moves it to cancelled. One UPDATE.
 */
export async function executionCancel(db: Db, p: { executionId: string; reason?: string }): Promise<Execution> {
  const reason = p.reason ?? "cancelled by the operator";
  return inTransaction(db, async (tx) => {
    const e = await tx
      .updateTable("executions")
      .set({
        status: sql<ExecutionStatus>`CASE WHEN status = 'running' THEN status ELSE 'cancelled' END`,
        finished_at: sql<Date | null>`CASE WHEN status = 'running' THEN finished_at ELSE now() END`,
        cancel_requested_at: sql<Date>`now()`,
        error: reason,
      })
      .where("id", "=", p.executionId)
      .where("status", "in", ["pending_approval", "approved", "running"])
      .returningAll()
      .executeTakeFirst();
    if (!e) return refuse(tx, p.executionId, "pending_approval, approved or running", "cancel it");
    if (e.status === "running") await sql`SELECT pg_notify(${EXECUTION_CANCEL_CHANNEL}, ${e.id})`.execute(tx);
    return announce(tx, e);
  });
}

// ─── the runner's transitions ──────────────────────────────────────────────

export interface ClaimParams {
  owner: string;
  leaseMs: number;
}

/** approved -> running for the oldest approved async execution nobody else is claiming. */
export async function executionClaimNext(db: Db, p: ClaimParams): Promise<Execution | undefined> {
  return inTransaction(db, async (tx) => {
    const e = await tx
      .updateTable("executions")
      .set(claimSet(p))
      .where("status", "=", "approved")
      .where("id", "=", (eb) =>
        eb
          .selectFrom("executions")
          .select("id")
          .where("status", "=", "approved")
          .where("mode", "=", "async")
          .orderBy("approved_at")
          .limit(1)
          .forUpdate()
          .skipLocked(),
      )
      .returningAll()
      .executeTakeFirst();
    return e ? announce(tx, e) : undefined;
  });
}

/** approved -> running for one specific execution (mode = 'sync': run inline by this process). */
export async function executionClaim(db: Db, p: ClaimParams & { executionId: string; mode: "sync" | "async" }): Promise<Execution> {
  return inTransaction(db, async (tx) => {
    const e = await tx
      .updateTable("executions")
      .set(claimSet(p))
      .where("id", "=", p.executionId)
      .where("status", "=", "approved")
      .where("mode", "=", p.mode)
      .returningAll()
      .executeTakeFirst();
    return e ? announce(tx, e) : refuse(tx, p.executionId, `approved (mode ${p.mode})`, "start it");
  });
}

function claimSet(p: ClaimParams) {
  return {
    status: "running" as const,
    started_at: sql<Date>`now()`,
    runner_owner: p.owner,
    lease_expires_at: sql<Date>`now() + make_interval(secs => ${p.leaseMs / 1000})`,
  };
}

/** Extends a running execution's lease; undefined when this owner no longer holds it. */
export async function executionRenewLease(
  db: Db,
  p: ClaimParams & { executionId: string },
): Promise<{ cancelRequested: boolean } | undefined> {
  const row = await db
    .updateTable("executions")
    .set({ lease_expires_at: sql<Date>`now() + make_interval(secs => ${p.leaseMs / 1000})` })
    .where("id", "=", p.executionId)
    .where("status", "=", "running")
    .where("runner_owner", "=", p.owner)
    .returning("cancel_requested_at")
    .executeTakeFirst();
  return row ? { cancelRequested: row.cancel_requested_at !== null } : undefined;
}

export interface ExecutionOutcome {
  status: "completed" | "failed" | "timed_out" | "cancelled";
  exitCode?: number | null;
  signal?: string | null;
  stdout?: string;
  stderr?: string;
  stdoutDroppedBytes?: number;
  stderrDroppedBytes?: number;
  error?: string | null;
}

/** running -> terminal, only for the runner that holds it. */
export async function executionFinish(db: Db, p: { executionId: string; owner: string; outcome: ExecutionOutcome }): Promise<Execution> {
  const o = p.outcome;
  return inTransaction(db, async (tx) => {
    const e = await tx
      .updateTable("executions")
      .set({
        status: o.status,
        exit_code: o.exitCode ?? null,
        signal: o.signal ?? null,
        stdout: o.stdout ?? "",
        stderr: o.stderr ?? "",
        stdout_dropped_bytes: o.stdoutDroppedBytes ?? 0,
        stderr_dropped_bytes: o.stderrDroppedBytes ?? 0,
        // A cancel keeps the reason executionCancel recorded.
        error: o.status === "cancelled" ? sql<string>`COALESCE(error, ${o.error ?? "cancelled"})` : (o.error ?? null),
        finished_at: sql<Date>`now()`,
        lease_expires_at: null,
      })
      .where("id", "=", p.executionId)
      .where("status", "=", "running")
      .where("runner_owner", "=", p.owner)
      .returningAll()
      .executeTakeFirst();
    return e ? announce(tx, e) : refuse(tx, p.executionId, `running (held by ${p.owner})`, `mark it ${o.status}`);
  });
}

/**
 * running -> failed for every execution whose lease expired: its runner died
 * mid-command. Never re-run: the command may or may not have completed.
 */
export async function executionMarkLost(db: Db): Promise<Execution[]> {
  return inTransaction(db, async (tx) => {
    const rows = await tx
      .updateTable("executions")
      .set({ status: "failed", error: LOST_LEASE_MESSAGE, finished_at: sql<Date>`now()` })
      .where("status", "=", "running")
      .where("lease_expires_at", "<", sql<Date>`now()`)
      .returningAll()
      .execute();
    for (const e of rows) await announce(tx, e);
    return rows;
  });
}

export async function executionGet(db: Db, p: { executionId: string }): Promise<Execution | undefined> {
  return db.selectFrom("executions").selectAll().where("id", "=", p.executionId).executeTakeFirst();
}

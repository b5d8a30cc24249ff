// Reading one execution for the API, with its result, in the shape of
// DESIGN.md.
import type { Kysely } from "kysely";
import type { Database, Execution } from "../../db/schema.js";

export function executionJson(x: Execution) {
  return {
    id: x.id,
    sessionId: x.session_id,
    planId: x.plan_id,
    target: x.target,
    command: x.command,
    description: x.description,
    mode: x.mode,
    risk: x.risk,
    riskReason: x.risk_reason,
    status: x.status,
    exitCode: x.exit_code,
    signal: x.signal,
    stdout: x.stdout,
    stderr: x.stderr,
    stdoutDroppedBytes: Number(x.stdout_dropped_bytes),
    stderrDroppedBytes: Number(x.stderr_dropped_bytes),
    error: x.error,
    createdAt: x.created_at,
    approvedAt: x.approved_at,
    startedAt: x.started_at,
    finishedAt: x.finished_at,
  };
}

export async function executionGet(db: Kysely<Database>, params: { executionId: string }) {
  const row = await db.selectFrom("executions").selectAll().where("id", "=", params.executionId).executeTakeFirst();
  return row ? executionJson(row) : undefined;
}

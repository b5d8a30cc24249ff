// The public shape of an execution (DESIGN.md "Shapes"): camelCase, what the
// browser, the events stream and the agent see. Invariant: nothing here is
// secret (output is stored already redacted), and runner internals (owner,
// lease) stay out.
import type { Execution } from "../db/schema.js";
import type { ExecutionJson } from "../events/contract.js";

// The shape is declared in the event contract (shared with the browser); this module builds it.
export type { ExecutionJson };

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export function executionToJson(e: Execution): ExecutionJson {
  return {
    id: e.id,
    sessionId: e.session_id,
    planId: e.plan_id,
    target: e.target,
    command: e.command,
    description: e.description,
    mode: e.mode,
    risk: e.risk,
    riskReason: e.risk_reason,
    status: e.status,
    timeoutS: e.timeout_s,
    exitCode: e.exit_code,
    signal: e.signal,
    stdout: e.stdout,
    stderr: e.stderr,
    stdoutDroppedBytes: Number(e.stdout_dropped_bytes),
    stderrDroppedBytes: Number(e.stderr_dropped_bytes),
    error: e.error,
    createdAt: iso(e.created_at)!,
    approvedAt: iso(e.approved_at),
    startedAt: iso(e.started_at),
    finishedAt: iso(e.finished_at),
  };
}

// Guest snapshots as the API and the event stream show them (SnapshotView
// in events/contract.ts): the row, its plan's goal and outcome, and the
// rollback step once requested (its execution's status and approval).
// Invariant: the one view of a snapshot; routes, events and the page read
// this, built from the server's own records only.
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import type { SnapshotView } from "../events/contract.js";

export type { SnapshotView };

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

export async function snapshotViews(
  db: Kysely<Database>,
  p: { id?: string; sessionId?: string; includeFailed?: boolean; limit?: number },
): Promise<SnapshotView[]> {
  let q = db
    .selectFrom("guest_snapshots as s")
    .leftJoin("plans as p", "p.id", "s.plan_id")
    .leftJoin("executions as r", "r.id", "s.rollback_execution_id")
    .leftJoin("approvals as a", "a.execution_id", "s.rollback_execution_id")
    .selectAll("s")
    .select(["p.goal as plan_goal", "p.outcome as plan_outcome", "r.status as rollback_status", "a.id as rollback_approval_id"]);
  if (p.id) q = q.where("s.id", "=", p.id);
  if (p.sessionId) q = q.where("s.session_id", "=", p.sessionId);
  if (!p.includeFailed && !p.id) q = q.where("s.state", "<>", "failed");
  const rows = await q
    .orderBy("s.node")
    .orderBy("s.vmid")
    .orderBy("s.taken_at", "desc")
    .limit(p.limit ?? 500)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    sessionId: r.session_id,
    planId: r.plan_id,
    planGoal: r.plan_goal ?? null,
    planOutcome: r.plan_outcome ?? null,
    target: r.target,
    node: r.node,
    vmid: r.vmid,
    kind: r.kind,
    name: r.name,
    state: r.state,
    reason: r.reason,
    guestWasRunning: r.guest_was_running,
    sizeBytes: r.size_bytes === null ? null : Number(r.size_bytes),
    executionId: r.execution_id,
    rollback:
      r.rollback_execution_id && r.rollback_status
        ? { executionId: r.rollback_execution_id, status: r.rollback_status, approvalId: r.rollback_approval_id ?? null }
        : null,
    takenAt: iso(r.taken_at)!,
    rolledBackAt: iso(r.rolled_back_at),
    removedAt: iso(r.removed_at),
  }));
}

export async function snapshotView(db: Kysely<Database>, id: string): Promise<SnapshotView | undefined> {
  return (await snapshotViews(db, { id }))[0];
}

// The only module that writes guest_snapshots (migration 080).
//
//   (record) -> taken | failed | unsupported
//   taken --rollback completed--> rolled_back
//   taken | rolled_back --retention--> removed
//
// Invariants:
// - Every state change is one conditional UPDATE naming the states it may
//   leave; a refusal (no row back) is SnapshotTransitionError saying which
//   state was found.
// - Every write appends a snapshot_recorded event to the snapshot's session
//   in the same transaction, so the page sees exactly what was committed.
// - At most one snapshot per guest per plan: the unique partial index of 080
//   (failed attempts excepted) refuses a second.
// Pass a withActor transaction so the audit trail names who did it.
import { type Kysely, sql } from "kysely";
import type { Database, GuestKind, GuestSnapshot, GuestSnapshotState } from "../db/schema.js";
import { DomainError } from "../errors/domain-error.js";
import { sessionEventsAppend } from "../events/session-events.js";
import { snapshotView } from "./snapshot-view.js";

type Db = Kysely<Database>;

export class SnapshotTransitionError extends DomainError {
  override name = "SnapshotTransitionError";
  constructor(snapshotId: string, found: GuestSnapshotState | "missing", attempted: string) {
    super(
      found === "missing" ? "not_found" : "conflict",
      found === "missing"
        ? `snapshot ${snapshotId} does not exist; cannot ${attempted}`
        : `snapshot ${snapshotId} is ${found}; cannot ${attempted}`,
    );
  }
}

async function announce(tx: Db, row: GuestSnapshot, turnId: string | null = null): Promise<GuestSnapshot> {
  const view = await snapshotView(tx, row.id);
  if (view) await sessionEventsAppend(tx, [{ sessionId: row.session_id, turnId, type: "snapshot_recorded", data: { snapshot: view } }]);
  return row;
}

async function refuse(tx: Db, snapshotId: string, attempted: string): Promise<never> {
  const row = await tx.selectFrom("guest_snapshots").select("state").where("id", "=", snapshotId).executeTakeFirst();
  throw new SnapshotTransitionError(snapshotId, row?.state ?? "missing", attempted);
}

export async function snapshotRecord(
  tx: Db,
  p: {
    sessionId: string;
    planId: string;
    turnId?: string | null;
    target: string;
    node: string;
    vmid: number;
    kind: GuestKind;
    name: string;
    state: "taken" | "failed" | "unsupported";
    reason?: string | null;
    guestWasRunning?: boolean | null;
    executionId?: string | null;
  },
): Promise<GuestSnapshot> {
  const row = await tx
    .insertInto("guest_snapshots")
    .values({
      session_id: p.sessionId,
      plan_id: p.planId,
      target: p.target,
      node: p.node,
      vmid: p.vmid,
      kind: p.kind,
      name: p.name,
      state: p.state,
      reason: p.reason ? p.reason.slice(0, 2000) : null,
      guest_was_running: p.guestWasRunning ?? null,
      execution_id: p.executionId ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return announce(tx, row, p.turnId ?? null);
}

/** The snapshot of this guest for this plan, failed attempts left out. */
export async function snapshotForPlanGuest(db: Db, p: { planId: string; node: string; vmid: number }): Promise<GuestSnapshot | undefined> {
  return db
    .selectFrom("guest_snapshots")
    .selectAll()
    .where("plan_id", "=", p.planId)
    .where("node", "=", p.node)
    .where("vmid", "=", p.vmid)
    .where("state", "<>", "failed")
    .executeTakeFirst();
}

export async function snapshotGet(db: Db, id: string): Promise<GuestSnapshot | undefined> {
  return db.selectFrom("guest_snapshots").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Names the step the operator was asked to approve without a safety net. */
export async function snapshotSetWaiver(tx: Db, p: { snapshotId: string; executionId: string }): Promise<GuestSnapshot> {
  const row = await tx
    .updateTable("guest_snapshots")
    .set({ waiver_execution_id: p.executionId })
    .where("id", "=", p.snapshotId)
    .where("state", "in", ["unsupported", "failed"])
    .returningAll()
    .executeTakeFirst();
  return row ? announce(tx, row) : refuse(tx, p.snapshotId, "record a step approved without a safety net");
}

/** Links the rollback step (pending approval) to the snapshot it rolls back to. */
export async function snapshotSetRollback(tx: Db, p: { snapshotId: string; executionId: string }): Promise<GuestSnapshot> {
  const row = await tx
    .updateTable("guest_snapshots")
    .set({ rollback_execution_id: p.executionId })
    .where("id", "=", p.snapshotId)
    .where("state", "in", ["taken", "rolled_back"])
    .returningAll()
    .executeTakeFirst();
  return row ? announce(tx, row) : refuse(tx, p.snapshotId, "roll back to it");
}

export async function snapshotMarkRolledBack(tx: Db, p: { snapshotId: string }): Promise<GuestSnapshot> {
  const row = await tx
    .updateTable("guest_snapshots")
    .set({ state: "rolled_back", rolled_back_at: sql<Date>`now()` })
    .where("id", "=", p.snapshotId)
    .where("state", "=", "taken")
    .returningAll()
    .executeTakeFirst();
  return row ? announce(tx, row) : refuse(tx, p.snapshotId, "mark it rolled back");
}

export async function snapshotMarkRemoved(tx: Db, p: { snapshotId: string }): Promise<GuestSnapshot> {
  const row = await tx
    .updateTable("guest_snapshots")
    .set({ state: "removed", removed_at: sql<Date>`now()` })
    .where("id", "=", p.snapshotId)
    .where("state", "in", ["taken", "rolled_back"])
    .returningAll()
    .executeTakeFirst();
  return row ? announce(tx, row) : refuse(tx, p.snapshotId, "mark it removed");
}

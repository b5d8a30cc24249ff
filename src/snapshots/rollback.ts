// "Roll back <guest> to before this plan": the rollback offered as a
// decided step. Requesting it creates a destructive execution on the
// guest's node (`pct rollback <vmid> nomos-<plan>`, with `--start 1` when the
// guest was running at the snapshot), pending approval with its typed
// confirmation phrase, in the snapshot's session and plan, and links it to
// the snapshot. Once approved, the runner runs it like any approved step:
// observed, audited, and its result told to the agent as a continuation.
//
// Invariants:
// - Nothing here runs anything: the rollback always waits for an operator's
//   approval with the phrase (only an approved plan naming this exact step
//   pre-authorizes it, as for any destructive step, and that path is the
//   gate's, not this one).
// - Only a snapshot still on the guest (taken or rolled_back) can be rolled
//   back to, and only one rollback of it waits at a time.
// - The agent proposes a rollback with request_execution: the same command,
//   the same gate, the same approval.
import type { Kysely } from "kysely";
import { approvalCreate } from "../approvals/approval-create.js";
import { confirmationPhraseFor } from "../assent/gate.js";
import type { Approval, Database, Execution } from "../db/schema.js";
import { DomainError } from "../errors/domain-error.js";
import { executionCreate } from "../executions/lifecycle.js";
import { classifyCommand, riskReasonOf } from "../risk/classify.js";
import { guestRollbackCommand } from "./guest-commands.js";
import { snapshotGet, snapshotSetRollback } from "./snapshot-store.js";

const WAITING = new Set(["pending_approval", "approved", "running"]);

export async function snapshotRollbackRequest(
  tx: Kysely<Database>,
  p: { snapshotId: string; approvalMinutes: number },
): Promise<{ execution: Execution; approval: Approval }> {
  const snap = await snapshotGet(tx, p.snapshotId);
  if (!snap) throw new DomainError("not_found", `snapshot ${p.snapshotId} does not exist`);
  if (snap.state !== "taken" && snap.state !== "rolled_back") {
    throw new DomainError(
      "conflict",
      snap.state === "removed"
        ? `snapshot ${snap.name} of ${snap.target} was removed; there is nothing to roll back to`
        : `there is no snapshot of ${snap.target} to roll back to (${snap.state}${snap.reason ? `: ${snap.reason}` : ""})`,
    );
  }
  if (snap.rollback_execution_id) {
    const previous = await tx.selectFrom("executions").select("status").where("id", "=", snap.rollback_execution_id).executeTakeFirst();
    if (previous && WAITING.has(previous.status)) {
      throw new DomainError("conflict", `a rollback of ${snap.target} to ${snap.name} is already ${previous.status.replace("_", " ")}`);
    }
  }
  const command = guestRollbackCommand(snap, snap.name, snap.guest_was_running === true);
  const classified = classifyCommand(command);
  // The classifier says destructive (rules-system.ts); the rollback is never asked for as less.
  if (classified.risk !== "destructive") throw new Error(`the classifier rated \`${command}\` ${classified.risk}, not destructive`);
  // The approval card goes under the turn that took the snapshot.
  const turnId = snap.execution_id
    ? ((await tx.selectFrom("executions").select("turn_id").where("id", "=", snap.execution_id).executeTakeFirst())?.turn_id ?? null)
    : null;
  const execution = await executionCreate(tx, {
    sessionId: snap.session_id,
    planId: snap.plan_id,
    turnId,
    target: snap.node,
    command,
    description: `Roll back ${snap.target} to before this plan (snapshot ${snap.name})${snap.guest_was_running ? ", then start it" : ""}`,
    risk: "destructive",
    riskReason: riskReasonOf(classified),
    mode: "async",
    status: "pending_approval",
  });
  const approval = await approvalCreate(tx, {
    sessionId: snap.session_id,
    turnId,
    kind: "execution",
    executionId: execution.id,
    confirmationPhrase: confirmationPhraseFor(snap.node, command),
    expiresInMinutes: p.approvalMinutes,
  });
  await snapshotSetRollback(tx, { snapshotId: snap.id, executionId: execution.id });
  return { execution, approval };
}

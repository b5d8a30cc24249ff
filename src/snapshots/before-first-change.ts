// The safety net: before the first config_mutation or destructive step an
// approved plan takes on an existing guest, snapshot the guest on its node.
//
//   step on a guest, inside the window, not read-only
//     -> created under this session (pct_create)?          go, no snapshot
//     -> this plan already has its snapshot of the guest?   go
//     -> unsupported before, and the operator approved a
//        step without it (waiver)?                          go
//     -> `pct status`, then `pct snapshot <vmid> nomos-<plan>`, each an
//        execution (observed, audited, in the transcript), then record:
//          completed                       -> taken, go
//          "snapshot feature is not available" -> unsupported, ask (go, when
//                                     the approved plan marked a step on this
//                                     guest without_snapshot)
//          anything else                   -> failed, ask (tried again next step)
//
// Invariants:
// - At most one snapshot per guest per plan (the record's unique index);
//   guests this session created are never snapshotted (their "before" is
//   nothing).
// - The step never runs silently without its net: when the snapshot could
//   not be taken the caller turns the step into a pending approval saying
//   "no safety net on this guest: <why>" (agent/tools/gated-command.ts).
// - The snapshot runs synchronously, before the step, through the same
//   executions port as any step, so it is observed like one.
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import { withActor } from "../db/with-actor.js";
import type { AgentTarget, ExecutionsPort } from "../executions/executions-port.js";
import { riskReasonOf } from "../risk/classify.js";
import { type Guest, guestSnapshotCommand, guestStatusCommand, guestWasRunning, snapshotUnsupportedReason } from "./guest-commands.js";
import { snapshotNameFor } from "./snapshot-name.js";
import { snapshotForPlanGuest, snapshotRecord } from "./snapshot-store.js";

export type SafetyNet =
  | { ok: true; snapshotId: string | null; note: string | null }
  | { ok: false; snapshotId: string; why: string; unsupported: boolean };

/** The guest a target names, when it is one Nomos can snapshot: a container on a node, or an ssh host the targets file names as a QEMU VM. */
export function guestOf(target: AgentTarget): Guest | undefined {
  if (target.kind === "container" && target.node && target.vmid != null) return { node: target.node, vmid: target.vmid, kind: "lxc" };
  if (target.kind === "ssh" && target.vm) return { node: target.vm.node, vmid: target.vm.vmid, kind: "qemu" };
  return undefined;
}

/** Whether the approved plan has a step on this guest marked without_snapshot (the operator approved that card). */
async function planAcceptsNoNet(db: Kysely<Database>, planId: string, target: AgentTarget): Promise<boolean> {
  const plan = await db.selectFrom("plans").select(["steps", "status"]).where("id", "=", planId).executeTakeFirst();
  if (plan?.status !== "approved") return false;
  const names = new Set([target.name, ...(target.node && target.vmid != null ? [`${target.node}/${target.vmid}`] : [])]);
  return (plan.steps as Array<{ target?: unknown; without_snapshot?: unknown }>).some(
    (s) => s?.without_snapshot === true && typeof s.target === "string" && names.has(s.target),
  );
}

const WAIVED = new Set(["approved", "running", "completed", "failed", "timed_out", "cancelled"]);

export async function safetyNetBeforeChange(
  deps: { db: Kysely<Database>; executions: ExecutionsPort },
  p: { sessionId: string; turnId: string | null; planId: string; target: AgentTarget; signal?: AbortSignal },
): Promise<SafetyNet> {
  const guest = guestOf(p.target);
  if (!guest) return { ok: true, snapshotId: null, note: null };
  if (p.target.createdBySessionId != null && p.target.createdBySessionId === p.sessionId) {
    return { ok: true, snapshotId: null, note: null };
  }
  const existing = await snapshotForPlanGuest(deps.db, { planId: p.planId, node: guest.node, vmid: guest.vmid });
  if (existing && existing.state !== "unsupported") return { ok: true, snapshotId: existing.id, note: null };
  if (existing) {
    const waiver = existing.waiver_execution_id
      ? await deps.db.selectFrom("executions").select("status").where("id", "=", existing.waiver_execution_id).executeTakeFirst()
      : undefined;
    if ((waiver && WAIVED.has(waiver.status)) || (await planAcceptsNoNet(deps.db, p.planId, p.target))) {
      return { ok: true, snapshotId: existing.id, note: `no safety net on this guest: ${existing.reason}` };
    }
    return { ok: false, snapshotId: existing.id, why: existing.reason ?? "its storage cannot snapshot", unsupported: true };
  }

  const actor = `agent:${p.sessionId}`;
  const name = snapshotNameFor(p.planId);
  const step = async (command: string, description: string) => {
    const { risk, reasons } = deps.executions.classify(command);
    const created = await withActor(deps.db, actor, (tx) =>
      deps.executions.create(tx, {
        sessionId: p.sessionId,
        planId: p.planId,
        turnId: p.turnId,
        target: guest.node,
        command,
        description,
        risk,
        riskReason: riskReasonOf({ risk, reasons }),
        mode: "sync",
        status: "approved",
        timeoutS: 600,
        deliveredInline: true,
      }),
    );
    return deps.executions.runInline(created.id, p.signal ? { signal: p.signal } : {});
  };

  const status = await step(guestStatusCommand(guest), `Safety net: is ${p.target.name} running before its snapshot?`);
  const wasRunning = status.status === "completed" ? guestWasRunning(status.stdout) : null;
  const taken = await step(
    guestSnapshotCommand(guest, name),
    `Safety net: snapshot ${name} of ${p.target.name} before this plan's first change`,
  );
  const record = (state: "taken" | "failed" | "unsupported", reason: string | null) =>
    withActor(deps.db, actor, (tx) =>
      snapshotRecord(tx, {
        sessionId: p.sessionId,
        planId: p.planId,
        turnId: p.turnId,
        target: p.target.name,
        ...guest,
        name,
        state,
        reason,
        guestWasRunning: wasRunning,
        executionId: taken.id,
      }),
    );
  if (taken.status === "completed") {
    const row = await record("taken", null);
    return { ok: true, snapshotId: row.id, note: `safety net: snapshot ${name} of ${p.target.name} taken (execution ${taken.id})` };
  }
  const output = [taken.stderr, taken.stdout, taken.error ?? ""].join("\n");
  const unsupported = snapshotUnsupportedReason(output);
  const why =
    unsupported ??
    `\`${taken.command}\` on ${guest.node} ended ${taken.status}${taken.exit_code != null ? ` (exit ${taken.exit_code})` : ""}: ${
      output.trim().slice(0, 500) || "no output"
    }`;
  const row = await record(unsupported ? "unsupported" : "failed", why);
  if (unsupported && (await planAcceptsNoNet(deps.db, p.planId, p.target))) {
    return {
      ok: true,
      snapshotId: row.id,
      note: `no safety net on this guest: ${why} (the approved plan accepted going ahead without one)`,
    };
  }
  return { ok: false, snapshotId: row.id, why, unsupported: unsupported !== null };
}

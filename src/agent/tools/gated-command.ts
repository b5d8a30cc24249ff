// What run and request_execution share: a command on a target, gated by the
// assent window (assent/gate.ts). Invariants:
// - A command the gate does not allow is never run: it becomes a
//   pending_approval execution with its approval, created in one
//   transaction, and runs asynchronously once approved.
// - Nothing here opens or extends an assent window.
// - Before the first change the window's plan makes to an existing guest,
//   its snapshot is taken (snapshots/before-first-change.ts); when it cannot
//   be, the step asks the operator ("no safety net on this guest: <why>")
//   instead of running.
// - run (sync) returns the result in this turn; request_execution (async)
//   returns at once and the result comes back as a continuation.
// - A `step` names the approved plan's step the command serves: a number
//   the plan does not have is refused before anything is created, and the
//   step turns running (plans/plan-steps.ts) in the transaction that
//   creates the execution, when it was pending.
import { approvalCreate } from "../../approvals/approval-create.js";
import { confirmationPhraseFor, type GateDecision, gateDecide, windowCovers } from "../../assent/gate.js";
import { assentWindowCurrent } from "../../assent/window.js";
import { withActor } from "../../db/with-actor.js";
import { executionNote } from "../../executions/execution-note.js";
import { planActiveId, planStepCount, planStepMarkRunning } from "../../plans/plan-steps.js";
import { riskReasonOf } from "../../risk/classify.js";
import { safetyNetBeforeChange } from "../../snapshots/before-first-change.js";
import { snapshotSetWaiver } from "../../snapshots/snapshot-store.js";
import { type ToolCallContext, type ToolOutcome, type ToolRunDeps, toolFail } from "./tool.js";

export async function gatedCommandRun(
  deps: ToolRunDeps,
  ctx: ToolCallContext,
  mode: "sync" | "async",
  input: {
    target: string;
    command: string;
    description?: string | undefined;
    timeout_s?: number | undefined;
    step?: number | undefined;
  },
): Promise<ToolOutcome> {
  const target = await deps.executions.resolveTarget(input.target);
  if (!target) {
    const known = (await deps.executions.listTargets()).map((t) => t.name);
    return toolFail(`target: unknown target "${input.target}"; known targets: ${known.join(", ") || "(none)"}`);
  }
  const { risk, reasons } = deps.executions.classify(input.command);
  const readOnly = risk === "read_only";
  const window = await assentWindowCurrent(deps.db, { sessionId: ctx.sessionId });
  let gate: GateDecision = gateDecide({ window, sessionId: ctx.sessionId, target, risk, command: input.command });
  const servedPlanId =
    input.step !== undefined ? await planActiveId(deps.db, { sessionId: ctx.sessionId, windowPlanId: window.planId }) : null;
  if (input.step !== undefined) {
    if (!servedPlanId) return toolFail("step: this session has no approved, unfinished plan; leave `step` out or propose a plan");
    const count = await planStepCount(deps.db, { planId: servedPlanId });
    if (input.step > count) return toolFail(`step: the approved plan has steps 1 to ${count}; there is no step ${input.step}`);
  }
  const markStep = async (tx: typeof deps.db) => {
    if (servedPlanId && input.step !== undefined)
      await planStepMarkRunning(tx, { planId: servedPlanId, sessionId: ctx.sessionId, turnId: ctx.turnId, step: input.step });
  };
  // The safety net, for a change the window's plan makes on a guest in its scope.
  let waiverSnapshotId: string | null = null;
  let netNote: string | null = null;
  if (!readOnly && window.planId && windowCovers(window, ctx.sessionId, target)) {
    const net = await safetyNetBeforeChange(deps, {
      sessionId: ctx.sessionId,
      turnId: ctx.turnId,
      planId: window.planId,
      target,
      signal: ctx.signal,
    });
    // Stopped while the snapshot ran: nothing more happens in this turn.
    if (ctx.signal.aborted) return toolFail(`Not run: the operator stopped the session while ${target.name} was being snapshotted.`);
    if (net.ok) netNote = net.note;
    else {
      waiverSnapshotId = net.snapshotId;
      gate = {
        action: "ask",
        why: net.unsupported
          ? `no safety net on this guest: ${net.why}. The operator decides whether to change ${target.name} without a snapshot`
          : `no safety net on this guest: its snapshot failed (${net.why}). The operator decides whether to go ahead without one`,
        // A destructive step without its net is confirmed with its phrase, even one the plan pre-authorized.
        confirmationPhrase:
          gate.action === "ask"
            ? gate.confirmationPhrase
            : risk === "destructive"
              ? confirmationPhraseFor(target.name, input.command)
              : null,
      };
    }
  }
  const actor = `agent:${ctx.sessionId}`;
  const description = input.description ?? null;
  const timeoutS = input.timeout_s;
  // What every execution this call creates carries, whatever its gate.
  const step = {
    sessionId: ctx.sessionId,
    planId: window.planId,
    turnId: ctx.turnId,
    target: target.name,
    command: input.command,
    description,
    risk,
    riskReason: riskReasonOf({ risk, reasons }),
    planStep: servedPlanId ? (input.step ?? null) : null,
    ...(timeoutS !== undefined ? { timeoutS } : {}),
  };

  if (gate.action === "ask") {
    // Gated steps run asynchronously once approved: the runner picks them up
    // and the result comes back as a continuation.
    const { execution, approvalId } = await withActor(deps.db, actor, async (tx) => {
      const execution = await deps.executions.create(tx, { ...step, mode: "async", status: "pending_approval" });
      const approval = await approvalCreate(tx, {
        sessionId: ctx.sessionId,
        turnId: ctx.turnId,
        kind: "execution",
        executionId: execution.id,
        confirmationPhrase: gate.confirmationPhrase,
        expiresInMinutes: deps.approvalMinutes,
      });
      if (waiverSnapshotId) await snapshotSetWaiver(tx, { snapshotId: waiverSnapshotId, executionId: execution.id });
      return { execution, approvalId: approval.id };
    });
    const confirm = gate.confirmationPhrase ? ` To approve, the operator must type "${gate.confirmationPhrase}".` : "";
    return {
      content:
        `Not run: ${gate.why}. Execution ${execution.id} (${risk}${reasons.length ? `: ${reasons.join("; ")}` : ""}) awaits the operator's approval ` +
        `(approval ${approvalId}).${confirm} If approved it runs and its result is delivered to you as a system note; ` +
        `you will be re-invoked. Tell the operator what you are waiting for and end your turn.`,
      isError: false,
      readOnly: false,
      executionId: execution.id,
    };
  }

  const execution = await withActor(deps.db, actor, async (tx) => {
    await markStep(tx);
    return deps.executions.create(tx, { ...step, mode, status: "approved", deliveredInline: mode === "sync" });
  });
  const net = netNote ? ` (${netNote})` : "";
  if (mode === "async") {
    return {
      content: `execution ${execution.id} queued on ${target.name} (${risk})${net}. Its result is delivered to you as a system note when it finishes; do not poll for it.`,
      isError: false,
      readOnly,
      executionId: execution.id,
    };
  }
  const done = await deps.executions.runInline(execution.id, { signal: ctx.signal });
  return { content: `${executionNote(done)}${netNote ? `\n(${netNote})` : ""}`, isError: false, readOnly, executionId: done.id };
}

// The session event contract, shared by the server (every emitter) and the
// browser client (which bundles this file with esbuild): each event type on
// GET /api/sessions/:id/events and the shape of its data. Invariants:
// - This is the only list of event types. SESSION_EVENT_TYPES is checked
//   against the SessionEventData map by the compiler, so a type added to one
//   and not the other does not compile; emitters (sessionEventsAppend,
//   EventWriter.emit) are typed by the map, so a wrong payload does not
//   compile. One emitter is SQL, out of the compiler's sight:
//   turns/continuation-queue.ts writes a `message` event whose message is
//   built with jsonb_build_object in MessageView's shape. The client subscribes to
//   SESSION_EVENT_TYPES and renders with an exhaustive switch, so a new type
//   without a renderer does not compile either.
// - No runtime imports: only types cross into the client bundle.
// - The wire shapes of an approval, an execution and a message are declared
//   here and built by their owners (approvals/approval-view.ts,
//   executions/execution-json.ts, sessions/message-view.ts), so events/
//   depends on no domain folder and the folder graph has no cycle.
// - A turn's failure is `turn_failed`, never `error` (that name is the
//   browser's own EventSource connection event). Events stored before the
//   rename keep the type `error`; LEGACY_EVENT_TYPES maps them for replay.
import type { ApprovalKind, ApprovalStatus, Execution, MessageKind, PlanOutcome, PlanStatus, PlanStepStatus, Risk } from "../db/schema.js";

/** An approval as the API and the stream show it; built by approvals/approval-view.ts. */
export interface ApprovalView {
  id: string;
  sessionId: string;
  kind: ApprovalKind;
  status: ApprovalStatus;
  planId: string | null;
  executionId: string | null;
  target: string | null;
  command: string | null;
  risk: Risk | null;
  /** Why the execution got its risk (issue 12). */
  riskReason: string | null;
  /** The execution's description, when it has one. */
  description: string | null;
  goal: string | null;
  /** For a plan approval: what is being approved (destructive steps carry `effect`, in plain words). */
  plan: { goal: string; steps: unknown[] } | null;
  /** For a destructive step: what it does, in plain words ("deletes container 100 and its disks"). */
  effect: string | null;
  confirmationPhrase: string | null;
  decidedBy: string | null;
  decidedVia: string | null;
  createdAt: string;
  expiresAt: string;
  decidedAt: string | null;
}

/** A transcript message as the API and the stream show it; built by sessions/message-view.ts. */
export interface MessageView {
  id: string;
  kind: MessageKind;
  turnId: string | null;
  content: unknown[];
  createdAt: string;
}

/** An execution as the API and the stream show it; built by executions/execution-json.ts. */
export interface ExecutionJson {
  id: string;
  sessionId: string | null;
  planId: string | null;
  target: string;
  command: string;
  description: string | null;
  mode: "sync" | "async";
  risk: Execution["risk"];
  /** The rule that decided the risk, in words. */
  riskReason: string | null;
  status: Execution["status"];
  timeoutS: number;
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  stdoutDroppedBytes: number;
  stderrDroppedBytes: number;
  error: string | null;
  createdAt: string;
  approvedAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
}

/**
 * A guest snapshot Nomos took (or could not take) before a plan's first
 * change; built by snapshots/snapshot-view.ts. `rollback` is the rollback
 * step once requested: its execution and approval.
 */
export interface SnapshotView {
  id: string;
  sessionId: string;
  planId: string;
  planGoal: string | null;
  planOutcome: "verified" | "blocked" | null;
  target: string;
  node: string;
  vmid: number;
  kind: "lxc" | "qemu";
  name: string;
  state: "taken" | "failed" | "unsupported" | "rolled_back" | "removed";
  reason: string | null;
  guestWasRunning: boolean | null;
  sizeBytes: number | null;
  executionId: string | null;
  rollback: { executionId: string; status: Execution["status"]; approvalId: string | null } | null;
  takenAt: string;
  rolledBackAt: string | null;
  removedAt: string | null;
}

export interface PlanStepView {
  title: string;
  target?: string;
  command?: string;
  destructive?: boolean;
  /** The operator, approving the plan, accepts changing this step's guest without a snapshot when it cannot be taken (issue 17). */
  without_snapshot?: boolean;
}

/** One step of a plan's live checklist (plans/plan-steps.ts); `step` counts from 1. */
export interface PlanChecklistStep {
  step: number;
  title: string;
  target: string | null;
  command: string | null;
  status: PlanStepStatus;
  note: string | null;
  startedAt: string | null;
  finishedAt: string | null;
}

/** A plan's checklist with its outcome once reported; built by plans/plan-steps.ts. */
export interface PlanChecklistView {
  planId: string;
  goal: string;
  status: PlanStatus;
  steps: PlanChecklistStep[];
  outcome: PlanOutcome | null;
  summary: string | null;
  needs: string | null;
  finishedAt: string | null;
  /** The plan's tokens and estimated cost so far (model calls made while its window was open). */
  usage: UsageView;
}

/** Tokens a session or a plan used, and what they cost (usage/usage-summary.ts); costUsd null when the model has no price. */
export interface UsageView {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd: number | null;
}

/** Every event type and its data. Add a type here, then its emitter and its renderer: the compiler points at both. */
export interface SessionEventData {
  turn_started: {
    turnId: string;
    kind: "operator" | "continuation";
    reason?: string | null;
    executionIds?: string[];
    coalesced?: string[];
  };
  text_delta: { text: string };
  tool_use: { id: string; name: string; input: unknown };
  tool_result: { toolUseId: string; isError: boolean; content: string; executionId?: string };
  plan_proposed: { planId: string; approvalId: string; goal: string; steps: PlanStepView[] };
  /** A step of the approved plan changed status: the whole checklist, as it is now. */
  plan_updated: PlanChecklistView;
  plan_finished: {
    planId: string | null;
    goal: string | null;
    outcome: "verified" | "blocked";
    summary: string;
    needs: string | null;
    windowClosed: boolean;
    /** The plan's tokens and estimated cost when it finished (absent in events stored before issue 16). */
    usage?: UsageView | null;
  };
  approval_requested: { approval: ApprovalView };
  /** `continue`: whether approving opened or extended the window (absent when an approval expires). */
  approval_decided: { approval: ApprovalView; continue?: boolean };
  execution_updated: { execution: ExecutionJson };
  /**
   * The assent window changed. Opening sends its expiry and scope; closing
   * sends `open: false, expiresAt: null`, why (`reason`: "revoked" for Stop,
   * a close reason otherwise) and, when an actor did it, who (`by`).
   */
  assent_changed: {
    open: boolean;
    expiresAt: string | null;
    scopeTargets?: string[];
    reason?: string;
    by?: string;
  };
  message: { message: MessageView };
  turn_finished: { turnId: string; status: string; error?: string };
  /** A turn could not go on; `message` is shown to the operator. */
  turn_failed: { message: string; reason?: string };
  /** A guest snapshot was taken, failed, could not be taken, was rolled back to or removed (issue 17). */
  snapshot_recorded: { snapshot: SnapshotView };
}

export type SessionEventType = keyof SessionEventData;

/** The names, in the order the page subscribes to them. */
export const SESSION_EVENT_TYPES = [
  "turn_started",
  "text_delta",
  "tool_use",
  "tool_result",
  "plan_proposed",
  "plan_updated",
  "plan_finished",
  "approval_requested",
  "approval_decided",
  "execution_updated",
  "assent_changed",
  "message",
  "turn_finished",
  "turn_failed",
  "snapshot_recorded",
] as const satisfies readonly SessionEventType[];

// The list names every key of the map (the `satisfies` above checks the converse).
type Missing = Exclude<SessionEventType, (typeof SESSION_EVENT_TYPES)[number]>;
const everyTypeListed: [Missing] extends [never] ? true : { missing: Missing } = true;
void everyTypeListed;

/** Names stored by earlier versions, and what they are now. */
export const LEGACY_EVENT_TYPES = { error: "turn_failed" } as const satisfies Record<string, SessionEventType>;

/** One event's type with its data: narrowing on `type` narrows `data`. */
export type SessionEventOf<T extends SessionEventType = SessionEventType> = {
  [K in T]: { type: K; data: SessionEventData[K] };
}[T];

/**
 * A session's state, derived in one place (sessions/session-state.ts):
 * working (a turn runs or waits), needs_approval, finished / blocked (the
 * last plan's outcome), failed (the last turn failed), idle otherwise.
 */
export type SessionState = "idle" | "working" | "needs_approval" | "finished" | "blocked" | "failed";

/**
 * The operator-wide stream (GET /api/events): not stored, derived when a
 * session's events wake it. Each type and its data, as for the session stream.
 */
export interface OperatorEventData {
  session_state: { sessionId: string; state: SessionState; title: string; updatedAt: string; pendingApprovals: number };
}

export type OperatorEventType = keyof OperatorEventData;

export const OPERATOR_EVENT_TYPES = ["session_state"] as const satisfies readonly OperatorEventType[];

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
// - A turn's failure is `turn_failed`, never `error` (that name is the
//   browser's own EventSource connection event). Events stored before the
//   rename keep the type `error`; LEGACY_EVENT_TYPES maps them for replay.
import type { ApprovalView } from "../approvals/approval-view.js";
import type { ExecutionJson } from "../executions/execution-json.js";
import type { MessageView } from "../sessions/message-view.js";

export interface PlanStepView {
  title: string;
  target?: string;
  command?: string;
  destructive?: boolean;
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
  plan_finished: {
    planId: string | null;
    goal: string | null;
    outcome: "verified" | "blocked";
    summary: string;
    needs: string | null;
    windowClosed: boolean;
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
}

export type SessionEventType = keyof SessionEventData;

/** The names, in the order the page subscribes to them. */
export const SESSION_EVENT_TYPES = [
  "turn_started",
  "text_delta",
  "tool_use",
  "tool_result",
  "plan_proposed",
  "plan_finished",
  "approval_requested",
  "approval_decided",
  "execution_updated",
  "assent_changed",
  "message",
  "turn_finished",
  "turn_failed",
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

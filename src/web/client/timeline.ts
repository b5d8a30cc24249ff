// The chat's state, built from the session's transcript and its event
// stream: operator messages and turns in time order, each turn a list of
// parts (streamed text, tool cards, plan cards, approval cards). Pure: the
// page dispatches events here and renders what comes out, so a refresh that
// replays the stream from the start rebuilds exactly the same view.
// Invariant: an event id is applied once (a replayed or resent id is
// ignored), so reconnects can never duplicate text.
import type { SessionEventType, SnapshotView, UsageView } from "../../events/contract.js";

/**
 * An event as the stream sends it. Its type is one of the contract's
 * (events/contract.ts), so the switch in applyEvent must handle every one;
 * its data is read defensively, field by field.
 */
export interface ApiEvent {
  id: string;
  type: SessionEventType;
  turnId: string | null;
  createdAt: string;
  data: Record<string, unknown>;
}

export interface Approval {
  id: string;
  kind: "plan" | "execution";
  status: string;
  planId?: string | null;
  executionId?: string | null;
  target?: string | null;
  command?: string | null;
  risk?: string | null;
  riskReason?: string | null;
  description?: string | null;
  confirmationPhrase?: string | null;
  decidedBy?: string | null;
  plan?: { goal: string; steps: PlanStep[] } | null;
  /** For a destructive step: what it does, in plain words (the server's approval view). */
  effect?: string | null;
}

export interface Execution {
  id: string;
  target: string;
  command: string;
  risk: string;
  status: string;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  error?: string | null;
  /** When it started and finished running (the card's elapsed time). */
  startedAt?: string | null;
  finishedAt?: string | null;
}

export interface PlanStep {
  title: string;
  target?: string;
  command?: string;
  destructive?: boolean;
  /** For a destructive step: what it does, in plain words. */
  effect?: string;
  /** Goes ahead without a safety net when its guest cannot be snapshotted (issue 17). */
  without_snapshot?: boolean;
}

export type Part =
  | { type: "text"; text: string }
  | { type: "tool"; id: string; name: string; input: Record<string, unknown>; result?: ToolResult; at?: string; doneAt?: string }
  | { type: "plan"; planId: string; approvalId: string; goal: string; steps: PlanStep[] }
  | { type: "approval"; approvalId: string }
  | { type: "outcome"; outcome: string; summary: string; needs: string | null; usage?: UsageView | null }
  | { type: "snapshot"; snapshotId: string }
  | { type: "error"; message: string };

export interface ToolResult {
  isError: boolean;
  text: string;
  executionId?: string;
}

export interface Turn {
  turnId: string;
  kind: "operator" | "continuation";
  reason?: string;
  executionIds: string[];
  status: "running" | string;
  at: string;
  parts: Part[];
}

export interface OperatorMessage {
  key: string;
  text: string;
  at: string;
  /** Sent from this page and not yet acknowledged. */
  pending?: boolean;
  /** Sent from this page: a later "message" event for it is the same message. */
  local?: boolean;
}

export interface Timeline {
  operator: OperatorMessage[];
  turns: Turn[];
  approvals: Record<string, Approval>;
  executions: Record<string, Execution>;
  /** Guest snapshots of the session (the safety net, issue 17), by id. */
  snapshots: Record<string, SnapshotView>;
  assent: { open: boolean; expiresAt: string | null; scopeTargets?: string[] };
  /** How long approving opens the window for (NOMOS_ASSENT_MINUTES, from GET /api/sessions/:id). */
  assentMinutes: number;
  lastEventId: string;
  lastAt: string;
}

export const emptyTimeline = (): Timeline => ({
  operator: [],
  turns: [],
  approvals: {},
  executions: {},
  snapshots: {},
  assent: { open: false, expiresAt: null },
  assentMinutes: 30,
  lastEventId: "0",
  lastAt: "",
});

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** Either spelling of a field (events may carry rows as camelCase or snake_case). */
function pick(o: Record<string, unknown>, camel: string): unknown {
  if (camel in o) return o[camel];
  return o[camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)];
}

export function approvalFrom(o: Record<string, unknown>): Approval {
  return {
    id: String(o.id),
    kind: pick(o, "kind") === "plan" ? "plan" : "execution",
    status: String(pick(o, "status") ?? "pending"),
    planId: str(pick(o, "planId")) ?? null,
    executionId: str(pick(o, "executionId")) ?? null,
    target: str(pick(o, "target")) ?? null,
    command: str(pick(o, "command")) ?? null,
    risk: str(pick(o, "risk")) ?? null,
    description: str(pick(o, "description")) ?? null,
    confirmationPhrase: str(pick(o, "confirmationPhrase")) ?? null,
    decidedBy: str(pick(o, "decidedBy")) ?? null,
    plan: (pick(o, "plan") as Approval["plan"]) ?? null,
    effect: str(pick(o, "effect")) ?? null,
  };
}

export function executionFrom(o: Record<string, unknown>): Execution {
  const exit = pick(o, "exitCode");
  return {
    id: String(o.id),
    target: String(pick(o, "target") ?? ""),
    command: String(pick(o, "command") ?? ""),
    risk: String(pick(o, "risk") ?? ""),
    status: String(pick(o, "status") ?? ""),
    exitCode: typeof exit === "number" ? exit : null,
    stdout: String(pick(o, "stdout") ?? ""),
    stderr: String(pick(o, "stderr") ?? ""),
    error: str(pick(o, "error")) ?? null,
    startedAt: str(pick(o, "startedAt")) ?? null,
    finishedAt: str(pick(o, "finishedAt")) ?? null,
  };
}

/** A tool result's content as text: a string, or the text of its content blocks. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((b) => (b && typeof b === "object" && "text" in b ? String((b as { text: unknown }).text) : JSON.stringify(b)))
      .join("\n");
  }
  return content === undefined || content === null ? "" : JSON.stringify(content, null, 2);
}

function turnFor(t: Timeline, e: ApiEvent): Turn {
  const id = e.turnId ?? str(e.data.turnId) ?? "no-turn";
  let turn = t.turns.find((x) => x.turnId === id);
  if (!turn) {
    turn = { turnId: id, kind: "operator", executionIds: [], status: "running", at: e.createdAt, parts: [] };
    t.turns.push(turn);
  }
  return turn;
}

/** Applies one event; returns the same object when the event was already applied. */
export function applyEvent(prev: Timeline, e: ApiEvent): Timeline {
  if (BigInt(e.id) <= BigInt(prev.lastEventId)) return prev;
  const t: Timeline = {
    ...prev,
    turns: prev.turns.map((x) => ({ ...x, parts: [...x.parts] })),
    approvals: { ...prev.approvals },
    executions: { ...prev.executions },
    snapshots: { ...prev.snapshots },
    operator: [...prev.operator],
    lastEventId: e.id,
    // ISO timestamps: a string comparison, not Math.max (which would give NaN).
    // biome-ignore lint/complexity/useMathMinMax: these are strings
    lastAt: e.createdAt > prev.lastAt ? e.createdAt : prev.lastAt,
  };
  const d = e.data;
  switch (e.type) {
    case "turn_started": {
      const turn = turnFor(t, e);
      turn.kind = d.kind === "continuation" ? "continuation" : "operator";
      turn.reason = str(d.reason);
      turn.executionIds = Array.isArray(d.executionIds) ? d.executionIds.map(String) : [];
      turn.status = "running";
      turn.at = e.createdAt;
      break;
    }
    case "text_delta": {
      const turn = turnFor(t, e);
      const last = turn.parts[turn.parts.length - 1];
      const text = str(d.text) ?? "";
      if (last?.type === "text") turn.parts[turn.parts.length - 1] = { type: "text", text: last.text + text };
      else turn.parts.push({ type: "text", text });
      break;
    }
    case "tool_use":
      turnFor(t, e).parts.push({
        type: "tool",
        id: String(d.id),
        name: String(d.name),
        input: (d.input as Record<string, unknown>) ?? {},
        at: e.createdAt,
      });
      break;
    case "tool_result": {
      const result: ToolResult = {
        isError: d.isError === true,
        text: contentText(d.content),
        ...(str(d.executionId) ? { executionId: str(d.executionId) } : {}),
      };
      for (const turn of t.turns) {
        const i = turn.parts.findIndex((p) => p.type === "tool" && p.id === d.toolUseId);
        if (i >= 0) turn.parts[i] = { ...(turn.parts[i] as Extract<Part, { type: "tool" }>), result, doneAt: e.createdAt };
      }
      break;
    }
    case "plan_proposed":
      turnFor(t, e).parts.push({
        type: "plan",
        planId: String(d.planId),
        approvalId: String(d.approvalId),
        goal: String(d.goal ?? ""),
        steps: Array.isArray(d.steps) ? (d.steps as PlanStep[]) : [],
      });
      break;
    case "approval_requested": {
      const a = approvalFrom((d.approval as Record<string, unknown>) ?? {});
      t.approvals[a.id] = { ...t.approvals[a.id], ...a };
      const shown = t.turns.some((x) => x.parts.some((p) => (p.type === "plan" || p.type === "approval") && p.approvalId === a.id));
      if (a.kind !== "plan" && !shown) turnFor(t, e).parts.push({ type: "approval", approvalId: a.id });
      break;
    }
    case "approval_decided": {
      const a = approvalFrom((d.approval as Record<string, unknown>) ?? {});
      const before = t.approvals[a.id];
      t.approvals[a.id] = before ? { ...before, status: a.status, decidedBy: a.decidedBy } : a;
      break;
    }
    case "execution_updated": {
      const x = executionFrom((d.execution as Record<string, unknown>) ?? {});
      t.executions[x.id] = x;
      break;
    }
    case "assent_changed":
      t.assent = {
        open: d.open === true,
        expiresAt: str(d.expiresAt) ?? null,
        ...(Array.isArray(d.scopeTargets) ? { scopeTargets: d.scopeTargets as string[] } : {}),
      };
      break;
    case "message": {
      const m = (d.message as Record<string, unknown>) ?? {};
      if (m.kind === "operator") {
        const text = contentText(m.content);
        const key = `m${String(m.id)}`;
        const local = t.operator.findIndex((o) => o.local && o.text === text);
        if (local >= 0) t.operator[local] = { key, text, at: t.operator[local]!.at };
        else if (!t.operator.some((o) => o.key === key)) t.operator.push({ key, text, at: String(m.createdAt ?? e.createdAt) });
      }
      break;
    }
    case "turn_finished":
      turnFor(t, e).status = str(d.status) ?? "completed";
      break;
    case "turn_failed":
      turnFor(t, e).parts.push({ type: "error", message: str(d.message) ?? "error" });
      break;
    case "plan_finished":
      turnFor(t, e).parts.push({
        type: "outcome",
        outcome: str(d.outcome) ?? "verified",
        summary: str(d.summary) ?? "",
        needs: str(d.needs) ?? null,
        ...(d.usage ? { usage: d.usage as UsageView } : {}),
      });
      break;
    case "snapshot_recorded": {
      const snap = d.snapshot as SnapshotView | undefined;
      if (!snap?.id) break;
      // The card goes where the snapshot was first recorded, before the step
      // it was taken for (that step's card is waiting for its result);
      // later changes update it in place.
      if (!t.snapshots[snap.id]) {
        const parts = turnFor(t, e).parts;
        const last = parts[parts.length - 1];
        const at = last?.type === "tool" && !last.result ? parts.length - 1 : parts.length;
        parts.splice(at, 0, { type: "snapshot", snapshotId: snap.id });
      }
      t.snapshots[snap.id] = snap;
      break;
    }
    case "plan_updated":
      // The checklist follows it (plan-checklist.ts); the transcript shows no card for it.
      break;
    default: {
      // Every type of the contract has a case above (the compiler checks);
      // one unknown to this build of the page is skipped.
      const unknownType: never = e.type;
      void unknownType;
      break;
    }
  }
  return t;
}

export type Entry = { kind: "operator"; message: OperatorMessage } | { kind: "turn"; turn: Turn };

/** Operator messages and turns, in time order (a message before the turn it started). */
export function entries(t: Timeline): Entry[] {
  const all: (Entry & { at: string; order: number })[] = [
    ...t.operator.map((m, i) => ({ kind: "operator" as const, message: m, at: m.at, order: i })),
    ...t.turns.map((turn, i) => ({ kind: "turn" as const, turn, at: turn.at, order: 1000 + i })),
  ];
  return all.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.order - b.order));
}

export function runningTurn(t: Timeline): Turn | undefined {
  return t.turns.find((x) => x.status === "running");
}

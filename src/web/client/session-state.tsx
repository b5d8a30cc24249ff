/** @jsxImportSource hono/jsx/dom */
// Every session's state, live: the chip the session list shows, the
// operator-wide stream (GET /api/events) that keeps the list current
// without polling, and the tab title ("(2) Nomos — approval needed").
// Invariant: states come from the server (sessions/session-state.ts);
// the page only shows them.
import { useEffect } from "hono/jsx/dom";
import { OPERATOR_EVENT_TYPES, type OperatorEventData, type SessionState } from "../../events/contract.js";

export type { SessionState };

const LABEL: Record<SessionState, string> = {
  idle: "idle",
  working: "working",
  needs_approval: "needs approval",
  finished: "finished",
  blocked: "blocked",
  failed: "failed",
};

export function StateChip({ state }: { state: SessionState | undefined }) {
  if (!state || state === "idle") return null;
  return (
    <span class={`state-chip state-${state}`} data-state={state}>
      {LABEL[state]}
    </span>
  );
}

/**
 * Follows GET /api/events: onState for each session_state, onReady when the
 * stream (re)connects, so the caller reloads the list once to cover a gap.
 */
export function useSessionStates(onState: (s: OperatorEventData["session_state"]) => void, onReady: () => void): void {
  useEffect(() => {
    const es = new EventSource("/api/events");
    es.addEventListener("ready", () => onReady());
    const handle = (ev: MessageEvent) => {
      try {
        onState(JSON.parse(ev.data as string) as OperatorEventData["session_state"]);
      } catch {
        // A frame that is not JSON is not ours to show.
      }
    };
    for (const type of OPERATOR_EVENT_TYPES) es.addEventListener(type, handle as EventListener);
    return () => es.close();
  }, []);
}

/** The tab title: pending approvals across sessions first, else the open session's state. */
export function tabTitle(sessions: { id: string; state?: SessionState; pendingApprovals: number }[], current: string | undefined): string {
  const pending = sessions.reduce((n, s) => n + Math.max(0, s.pendingApprovals), 0);
  if (pending > 0) return `(${pending}) Nomos — approval needed`;
  const state = sessions.find((s) => s.id === current)?.state;
  if (state && state !== "idle") return `Nomos — ${LABEL[state]}`;
  return "Nomos";
}

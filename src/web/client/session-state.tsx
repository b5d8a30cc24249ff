/** @jsxImportSource hono/jsx/dom */
// Every session's state, live: the chip the session list shows, the
// operator-wide stream (GET /api/events) that keeps the list current
// without polling (or the open chat's stream, which carries the same
// frames), and the tab title ("(2) Nomos — approval needed").
// Invariant: states come from the server (sessions/session-state.ts);
// the page only shows them.
import { useEffect, useRef } from "hono/jsx/dom";
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

/** Where session_state updates go, from whichever stream carries them. */
export interface SessionStateHandlers {
  onState(s: OperatorEventData["session_state"]): void;
  /** The stream (re)connected: reload the list once to cover a gap. */
  onReady(): void;
}

/** Parses a session_state frame; a frame that is not JSON is not ours to show. */
export function sessionStateFrame(ev: MessageEvent, to: SessionStateHandlers): void {
  try {
    to.onState(JSON.parse(ev.data as string) as OperatorEventData["session_state"]);
  } catch {
    // ignored: see above
  }
}

/**
 * Follows GET /api/events while `own` is true, i.e. while no open chat
 * carries the states for the page: one stream per tab, since browsers allow
 * six HTTP/1.1 connections per origin (the chat's GET /api/events?session=
 * stream carries both; chat.tsx hands its session_state frames here).
 */
export function useSessionStates(to: SessionStateHandlers, own: boolean): void {
  const latest = useRef(to);
  latest.current = to;
  useEffect(() => {
    if (!own) return;
    const es = new EventSource("/api/events");
    es.addEventListener("ready", () => latest.current.onReady());
    const handle = (ev: MessageEvent) => sessionStateFrame(ev, latest.current);
    for (const type of OPERATOR_EVENT_TYPES) es.addEventListener(type, handle as EventListener);
    return () => es.close();
  }, [own]);
}

/** The tab title: pending approvals across sessions first, else the open session's state. */
export function tabTitle(sessions: { id: string; state?: SessionState; pendingApprovals: number }[], current: string | undefined): string {
  const pending = sessions.reduce((n, s) => n + Math.max(0, s.pendingApprovals), 0);
  if (pending > 0) return `(${pending}) Nomos — approval needed`;
  const state = sessions.find((s) => s.id === current)?.state;
  if (state && state !== "idle") return `Nomos — ${LABEL[state]}`;
  return "Nomos";
}

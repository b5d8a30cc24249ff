/** @jsxImportSource hono/jsx/dom */
// The chat header's connection indicator, which tells the truth: "live"
// while the event stream is open, "connecting" before the first answer,
// "reconnecting" for the first tries after a drop, "offline" once Nomos has
// not answered for a while, with "Retry now". The class `conn` marks every
// state but live (tests and styles wait for it to go away).
export type ConnectionState = "connecting" | "live" | "reconnecting" | "offline";

/** After this many failed tries a drop is shown as "offline". */
export const OFFLINE_AFTER_TRIES = 3;

const LABEL: Record<ConnectionState, string> = {
  connecting: "connecting…",
  live: "live",
  reconnecting: "reconnecting…",
  offline: "offline, retrying",
};

export function ConnectionIndicator({ state, onRetry }: { state: ConnectionState; onRetry(): void }) {
  return (
    <span class={`conn-state${state === "live" ? "" : " conn"}`} data-state={state} role="status">
      <i class="dot" aria-hidden="true" />
      <span class="conn-label">{LABEL[state]}</span>
      {state === "offline" && (
        <button type="button" class="btn small link retry" onClick={onRetry}>
          Retry now
        </button>
      )}
    </span>
  );
}

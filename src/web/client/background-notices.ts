/// <reference lib="dom" />
// While the tab is in the background, a browser notification when the open
// session needs the operator (an approval) or its plan finished; clicking it
// brings the tab back. Only when the browser allows notifications (the
// settings page asks); nothing is shown while the tab is visible, since the
// page itself shows it. Fed by the chat's own event stream with the events
// that arrive live (never the history a load replays), so a tab holds one
// stream per session: browsers allow six connections per origin over
// HTTP/1.1, and a second stream per tab once starved a reload of its assets.
// Invariant: one event is one notification. The tag matches the service
// worker's (web/service-worker.js), so a Web Push of the same event replaces
// this one instead of stacking beside it.
import type { SessionEventData } from "../../events/contract.js";
import type { ApiEvent } from "./timeline.js";

const canNotify = () => typeof Notification !== "undefined" && Notification.permission === "granted";

// Event ids already announced by this page.
const announced = new Set<string>();

function show(eventId: string, title: string, body: string, tag: string): void {
  if (announced.has(eventId)) return;
  announced.add(eventId);
  const n = new Notification(title, { body, tag });
  n.onclick = () => {
    window.focus();
    n.close();
  };
}

/** Called with each live event of the open session; shows a notification when the tab is hidden. */
export function backgroundNotice(sessionId: string, sessionTitle: string | undefined, e: ApiEvent): void {
  if (!document.hidden || !canNotify()) return;
  const name = sessionTitle || "Nomos";
  if (e.type === "approval_requested") {
    const { approval } = e.data as unknown as SessionEventData["approval_requested"];
    const what =
      approval.kind === "plan" ? `the plan: ${approval.goal ?? ""}` : `${approval.command ?? "a step"} on ${approval.target ?? ""}`;
    show(e.id, `Approval needed: ${name}`, `Approve ${what}`, `nomos:${sessionId}:approval_requested`);
  } else if (e.type === "plan_finished") {
    const d = e.data as unknown as SessionEventData["plan_finished"];
    const type = d.outcome === "verified" ? "plan_finished" : "plan_blocked";
    show(e.id, `${d.outcome === "verified" ? "Plan finished" : "Plan blocked"}: ${name}`, d.summary, `nomos:${sessionId}:${type}`);
  }
}

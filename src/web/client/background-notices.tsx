/** @jsxImportSource hono/jsx/dom */
/// <reference lib="dom" />
// While the tab is in the background, a browser notification when the open
// session needs the operator (an approval) or its plan finished; clicking it
// brings the tab back. Only when the browser allows notifications (the
// settings page asks); nothing is shown while the tab is visible, since the
// page itself shows it. Its own event stream, starting after the session's
// current last event, so nothing old is announced. The tag matches the
// service worker's (web/service-worker.js), so a Web Push of the same event
// replaces this one instead of stacking beside it.
import { useEffect, useRef, useState } from "hono/jsx/dom";
import type { SessionEventData } from "../../events/contract.js";

const canNotify = () => typeof Notification !== "undefined" && Notification.permission === "granted";

// Event ids already announced by this page: one event is one notification,
// even while a re-render briefly has two streams open.
const announced = new Set<string>();

function show(eventId: string, title: string, body: string, tag: string): void {
  if (eventId !== "" && announced.has(eventId)) return;
  announced.add(eventId);
  const n = new Notification(title, { body, tag });
  n.onclick = () => {
    window.focus();
    n.close();
  };
}

export function BackgroundNotices({ sessionId, title }: { sessionId: string; title: string | undefined }) {
  const [ready, setReady] = useState(false);
  // The title is read when a notice is shown: a renamed session does not reopen the stream.
  const titleNow = useRef(title);
  titleNow.current = title;
  useEffect(() => {
    if (typeof EventSource === "undefined" || typeof Notification === "undefined") return;
    const es = new EventSource(`/api/sessions/${sessionId}/events`);
    es.addEventListener("ready", () => setReady(true));
    const onApproval = (ev: MessageEvent) => {
      if (!document.hidden || !canNotify()) return;
      const { approval } = (JSON.parse(ev.data as string) as { data: SessionEventData["approval_requested"] }).data;
      const what =
        approval.kind === "plan" ? `the plan: ${approval.goal ?? ""}` : `${approval.command ?? "a step"} on ${approval.target ?? ""}`;
      show(ev.lastEventId, `Approval needed: ${titleNow.current ?? "Nomos"}`, `Approve ${what}`, `nomos:${sessionId}:approval_requested`);
    };
    const onFinished = (ev: MessageEvent) => {
      if (!document.hidden || !canNotify()) return;
      const d = (JSON.parse(ev.data as string) as { data: SessionEventData["plan_finished"] }).data;
      const type = d.outcome === "verified" ? "plan_finished" : "plan_blocked";
      show(
        ev.lastEventId,
        `${d.outcome === "verified" ? "Plan finished" : "Plan blocked"}: ${titleNow.current ?? "Nomos"}`,
        d.summary,
        `nomos:${sessionId}:${type}`,
      );
    };
    es.addEventListener("approval_requested", onApproval as EventListener);
    es.addEventListener("plan_finished", onFinished as EventListener);
    return () => {
      es.close();
      setReady(false);
    };
  }, [sessionId]);
  // Invisible; says (to tests, and to anyone inspecting the page) that the stream is connected.
  return <span class="background-notices" hidden data-ready={ready ? "1" : "0"} />;
}

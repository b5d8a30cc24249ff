// What the chat's polite live region says, for events that happened while
// the page watched (never for a replay): a new approval card, a plan to
// approve, a failed turn. A reply itself is announced by its own article
// (aria-live, aria-busy while it streams: chat.tsx), so it is read once,
// when finished, and never piece by piece. Invariant: the region never
// repeats words shown on the page (a command, a reply, an error), so a
// person finds them once and so do the tests' text selectors; it says what
// happened and where to look. Pure: from the timeline after the event.
import type { ApiEvent, Timeline } from "./timeline.js";

export function announcement(t: Timeline, e: ApiEvent): string {
  switch (e.type) {
    case "approval_requested": {
      const a = t.approvals[String((e.data.approval as { id?: string } | undefined)?.id)];
      if (!a || a.kind === "plan") return "";
      const what = a.risk === "destructive" ? "A destructive step" : "A step";
      return `${what}${a.target ? ` on target ${a.target}` : ""} waits for your approval: its card is at the end of the chat.`;
    }
    case "plan_proposed":
      return "Nomos proposes a plan: its card, with Approve and Reject, is at the end of the chat.";
    case "turn_failed":
      return "Nomos could not go on: the reason is at the end of the chat.";
    default:
      return "";
  }
}

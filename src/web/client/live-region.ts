// What the chat's polite live region says, for events that happened while
// the page watched (never for a replay): a reply once its turn finished
// (streamed text is not read piece by piece), a new approval card, a plan
// to approve, a failed turn. Pure: from the timeline after the event.
import type { ApiEvent, Timeline } from "./timeline.js";

const short = (text: string, max = 300) => (text.length > max ? `${text.slice(0, max).replace(/\s+\S*$/, "")}…` : text);

export function announcement(t: Timeline, e: ApiEvent): string {
  switch (e.type) {
    case "turn_finished": {
      const turn = t.turns.find((x) => x.turnId === (e.turnId ?? e.data.turnId));
      const text = (turn?.parts ?? [])
        .flatMap((p) => (p.type === "text" ? [p.text] : []))
        .join(" ")
        .trim();
      return text ? `Nomos replied: ${short(text.replace(/[#*`>|_~]/g, ""))}` : "";
    }
    case "approval_requested": {
      const a = t.approvals[String((e.data.approval as { id?: string } | undefined)?.id)];
      if (!a || a.kind === "plan") return "";
      return `Approval needed${a.target ? ` on ${a.target}` : ""}${a.command ? `: ${short(a.command, 120)}` : ""}.`;
    }
    case "plan_proposed":
      return `Nomos proposes a plan: ${short(String(e.data.goal ?? ""), 160)}. Approve or reject it below.`;
    case "turn_failed":
      return `The turn failed: ${short(String(e.data.message ?? ""))}`;
    default:
      return "";
  }
}

// What a tool card says, in words a person reads: "Ran on typetype",
// "Created container typetype on pve1", "Asked to run on pve1", instead of
// the tool's name. Pure: from the tool's name and input, its result (none
// while it runs) and its execution's status when it has one. A tool this
// build does not know reads as its name in words ("some tool").
import type { Execution, Part } from "./timeline.js";

type ToolPart = Extract<Part, { type: "tool" }>;

export type ToolPhase = "running" | "waiting" | "done" | "failed";

export interface ToolLabel {
  phase: ToolPhase;
  text: string;
}

const EXECUTION_PHASE: Record<string, ToolPhase> = {
  pending_approval: "waiting",
  approved: "running",
  running: "running",
  completed: "done",
  failed: "failed",
  timed_out: "failed",
  cancelled: "failed",
  rejected: "failed",
  lost: "failed",
};

export function toolPhase(part: ToolPart, execution?: Execution): ToolPhase {
  if (execution) {
    if (execution.status === "completed" && execution.exitCode !== null && execution.exitCode !== 0) return "failed";
    return EXECUTION_PHASE[execution.status] ?? "running";
  }
  if (!part.result) return "running";
  if (part.result.isError) return "failed";
  if (/^(\w+ )?not run:/i.test(part.result.text)) return "waiting";
  return "done";
}

const on = (target: string) => (target ? ` on ${target}` : "");

export function toolLabel(part: ToolPart, execution?: Execution): ToolLabel {
  const phase = toolPhase(part, execution);
  const input = part.input;
  const target = String(input.target ?? execution?.target ?? "");
  const pick = (words: Record<ToolPhase, string>) => ({ phase, text: words[phase] });
  switch (part.name) {
    case "run":
    case "request_execution":
      return pick({
        running: execution?.status === "approved" ? `Queued${on(target)}` : `Running${on(target)}`,
        waiting: `Asked to run${on(target)}`,
        done: `Ran${on(target)}`,
        failed: execution?.status === "cancelled" ? `Cancelled${on(target)}` : `Failed${on(target)}`,
      });
    case "pct_create": {
      const what = `container ${String(input.hostname ?? "")}${on(String(input.node ?? ""))}`;
      return pick({
        running: `Creating ${what}`,
        waiting: `Asked to create ${what}`,
        done: `Created ${what}`,
        failed: `Could not create ${what}`,
      });
    }
    case "list_targets":
      return pick({ running: "Listing targets", waiting: "Listing targets", done: "Listed targets", failed: "Could not list targets" });
    case "get_execution_status":
      return pick({
        running: "Checking a step",
        waiting: "Checking a step",
        done: "Checked a step",
        failed: "Could not check a step",
      });
    case "propose_plan":
      return pick({
        running: "Proposing a plan",
        waiting: "Proposing a plan",
        done: "Proposed a plan",
        failed: "Could not propose the plan",
      });
    case "update_plan": {
      // "Marked step 3 done", "Marked steps 2 and 3 done", "Marked step 4 failed, step 5 skipped".
      const steps = Array.isArray(input.steps) ? (input.steps as { step?: unknown; status?: unknown }[]) : [];
      const byStatus = new Map<string, string[]>();
      for (const s of steps) {
        const status = String(s.status ?? "");
        byStatus.set(status, [...(byStatus.get(status) ?? []), String(s.step ?? "?")]);
      }
      const said = [...byStatus].map(([status, ns]) =>
        ns.length === 1 ? `step ${ns[0]} ${status}` : `steps ${ns.slice(0, -1).join(", ")} and ${ns[ns.length - 1]} ${status}`,
      );
      const what = said.length > 0 ? said.join(", ") : "the checklist";
      return pick({ running: `Marking ${what}`, waiting: `Marking ${what}`, done: `Marked ${what}`, failed: `Could not mark ${what}` });
    }
    case "report_outcome":
      return pick({ running: "Reporting", waiting: "Reporting", done: "Reported the outcome", failed: "Could not report the outcome" });
    default: {
      const name = part.name.replace(/_/g, " ");
      const words = name.charAt(0).toUpperCase() + name.slice(1);
      return pick({ running: words, waiting: words, done: words, failed: `${words} failed` });
    }
  }
}

/** "4 s", "2 min 05 s", "1 h 02 min": a running step's elapsed time, or how long a finished one took. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
}

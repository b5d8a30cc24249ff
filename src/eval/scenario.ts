// What an evaluation scenario is: a starting state of the simulated node, the
// operator's request, and a check of the end state. The harness
// (run-scenario.ts) starts the world, plays the operator, and hands the
// checker what it can see afterwards.
//
// Invariant: a checker judges the end state — the simulated containers and
// what the session holds (approvals, executions run) — never the route the
// agent took; any correct route passes, and a wrong end state fails with a
// reason a maintainer can read.
import type { DoublePolicy } from "../model-double/messages-double.js";
import type { SimulatedNode } from "./world/simulated-node.js";

/** What the session shows after the run, read from Nomos's database. */
export interface SessionFacts {
  approvals: Array<{ kind: string; status: string; risk: string | null; command: string | null }>;
  executions: Array<{ target: string; command: string; status: string; exitCode: number | null; risk: string }>;
  /** The agent's last words to the operator. */
  lastAssistantText: string;
}

export interface Verdict {
  ok: boolean;
  /** Why it failed (empty when ok). */
  reasons: string[];
}

export interface ScenarioWorld {
  node: SimulatedNode;
  check(facts: SessionFacts): Verdict;
}

export interface Scenario {
  id: string;
  title: string;
  /** The operator's one request. */
  request: string;
  start(): Promise<ScenarioWorld>;
  /**
   * Scripted routes: the double's own (must pass), a second route to the
   * same end state (must pass too), and a wrong diagnosis that claims
   * success (must fail: the checker reads the end state, not the claim).
   */
  policies: { reference: DoublePolicy; alternate: DoublePolicy; wrong: DoublePolicy };
}

/** Collects failed expectations into a verdict. */
export function verdict(checks: Array<[boolean, string]>): Verdict {
  const reasons = checks.filter(([ok]) => !ok).map(([, why]) => why);
  return { ok: reasons.length === 0, reasons };
}

/** The commands the node received inside container `vmid`, in order. */
export const commandsIn = (node: SimulatedNode, vmid: number) => node.host.log.filter((l) => l.vmid === vmid).map((l) => l.command);

/** The agent stopped and asked: a destructive approval pending/rejected, or its last words ask the operator. */
export function askedOperator(facts: SessionFacts, about: RegExp): boolean {
  const gated = facts.approvals.some((a) => a.kind === "execution" && a.status !== "approved" && about.test(a.command ?? ""));
  const plan = facts.approvals.some((a) => a.kind === "plan" && a.status === "pending");
  return (
    gated || plan || (/\?|confirm|approv|your (go|decision)|before I/i.test(facts.lastAssistantText) && about.test(facts.lastAssistantText))
  );
}

// The gate: may this step run now, or must the operator be asked? A pure
// function of the session's assent window, the step's target and its risk.
//
//   read_only                          -> run, always
//   config_mutation, window covers it  -> run
//   destructive, window covers it and
//     the approved plan pre-authorized
//     this exact (target, command)     -> run
//   destructive otherwise              -> ask, with a typed confirmation phrase
//   anything else                      -> ask
//
// "Covers" means: the window is open and the target is in its scope (the
// plan's targets and the containers created under it, which includes any
// container this session's plans created). Invariant: the
// window state comes from the database (assentWindowCurrent), never from
// anything the model or a client says.
import type { Risk } from "../db/schema.js";
import type { AssentWindowState } from "./window.js";

export type GateDecision = { action: "run"; why: string } | { action: "ask"; why: string; confirmationPhrase: string | null };

const normalizeCommand = (c: string) => c.trim().replace(/\s+/g, " ");

export function gateDecide(p: {
  window: AssentWindowState;
  sessionId: string;
  target: { name: string; node?: string | null; vmid?: number | null; createdBySessionId?: string | null };
  risk: Risk;
  command: string;
}): GateDecision {
  const { window, target, risk } = p;
  if (risk === "read_only") return { action: "run", why: "read-only" };
  const inScope = windowCovers(window, p.sessionId, target);
  if (risk === "config_mutation") {
    if (inScope) return { action: "run", why: "inside the assent window" };
    return {
      action: "ask",
      confirmationPhrase: null,
      why: window.open
        ? `${target.name} is outside the assent window's scope (${window.scopeTargets.join(", ") || "no targets"})`
        : "no assent window is open",
    };
  }
  const preauthorized =
    inScope && window.preauthorized.some((s) => s.target === target.name && normalizeCommand(s.command) === normalizeCommand(p.command));
  if (preauthorized) return { action: "run", why: "pre-authorized by the approved plan" };
  return {
    action: "ask",
    confirmationPhrase: confirmationPhraseFor(target.name, p.command),
    why: "destructive steps need the operator's typed confirmation unless the approved plan names them exactly",
  };
}

/** Whether the open window's scope takes in this target (the plan's targets, and the containers created under it). */
export function windowCovers(
  window: AssentWindowState,
  sessionId: string,
  target: { name: string; node?: string | null; vmid?: number | null; createdBySessionId?: string | null },
): boolean {
  return (
    window.open &&
    (window.scopeTargets.includes(target.name) ||
      (target.createdBySessionId != null && target.createdBySessionId === sessionId) ||
      (target.node != null && target.vmid != null && window.scopeTargets.includes(`${target.node}/${target.vmid}`)))
  );
}

/** The phrase the operator types to confirm a destructive step: short, specific, hard to type by accident. */
export function confirmationPhraseFor(target: string, command: string): string {
  const rollback = /\b(?:pct|qm)\s+rollback\s+(\d+)/.exec(command);
  if (rollback) return `rollback ${rollback[1]}`;
  const destroy = /\bpct\s+destroy\s+(\d+)/.exec(command) ?? /\bqm\s+destroy\s+(\d+)/.exec(command);
  if (destroy) return `destroy ${destroy[1]}`;
  const zfs = /\bzfs\s+destroy\s+(?:-\S+\s+)*(\S+)/.exec(command);
  if (zfs) return `destroy ${zfs[1]}`;
  if (/\b(reboot|shutdown|poweroff|halt)\b/.test(command)) return `reboot ${target}`;
  return `confirm on ${target}`;
}

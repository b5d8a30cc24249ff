// The Proxmox commands of a guest snapshot, as the node runs them: status,
// snapshot, rollback, delsnapshot, for an LXC container (pct) or a QEMU VM
// (qm), and how to read a refusal. Pure. Invariants: every value that
// reaches a command line is a number or a name matching Proxmox's snapshot
// name rule (snapshot-name.ts), so nothing needs quoting; the classifier
// (src/risk) reads these commands as: status read-only, snapshot
// config_mutation, rollback and delsnapshot destructive.
import type { GuestKind } from "../db/schema.js";
import { isValidSnapshotName } from "./snapshot-name.js";

export interface Guest {
  node: string;
  vmid: number;
  kind: GuestKind;
}

const tool = (g: Guest) => (g.kind === "qemu" ? "qm" : "pct");

function checked(g: Guest, name?: string): void {
  if (!Number.isInteger(g.vmid) || g.vmid < 100) throw new Error(`guest vmid ${g.vmid} is not a Proxmox vmid (an integer of at least 100)`);
  if (name !== undefined && !isValidSnapshotName(name))
    throw new Error(`"${name}" is not a valid snapshot name (a letter, then letters, digits, '-' or '_', at most 40)`);
}

export function guestStatusCommand(g: Guest): string {
  checked(g);
  return `${tool(g)} status ${g.vmid}`;
}

export function guestSnapshotCommand(g: Guest, name: string): string {
  checked(g, name);
  return `${tool(g)} snapshot ${g.vmid} ${name}`;
}

/** Rolls back, and starts the guest again when it was running at the snapshot (`--start 1`). */
export function guestRollbackCommand(g: Guest, name: string, start: boolean): string {
  checked(g, name);
  return `${tool(g)} rollback ${g.vmid} ${name}${start ? " --start 1" : ""}`;
}

export function guestDelsnapshotCommand(g: Guest, name: string): string {
  checked(g, name);
  return `${tool(g)} delsnapshot ${g.vmid} ${name}`;
}

/** "status: running" from `pct status` / `qm status`. */
export const guestWasRunning = (stdout: string): boolean => /status:\s*running/.test(stdout);

/**
 * Proxmox's answer when the guest's storage cannot snapshot (a `dir`
 * storage with raw images, for instance): "snapshot feature is not
 * available". Returns that line, or null for any other failure.
 */
export function snapshotUnsupportedReason(output: string): string | null {
  const line = output.split("\n").find((l) => /snapshot feature is not available|does not support snapshots?/i.test(l));
  return line ? line.trim() : null;
}

/** Proxmox's answer when the snapshot is already gone. */
export const snapshotMissing = (output: string): boolean => /snapshot '[^']*' does not exist|no such snapshot/i.test(output);

// The exact text sent to a host to run one command. Invariants:
// - The command runs under `timeout -k <grace> <seconds>`, on the host that
//   runs it (inside the container for a container), so a timeout really ends
//   the remote process even if our channel is gone; exit 124 (or 137 after
//   the grace) means it timed out.
// - A container's command runs as `pct exec <vmid> -- bash -lc '<...>'`, every
//   layer quoted by shellQuote, so no byte of the command is interpreted by
//   any shell but the innermost one.
// - The wrapper first prints `nomos-pid:<pid>` on stderr (the pid of timeout,
//   which forwards SIGTERM to the command): cancelling sends `kill -TERM` to
//   it over a new channel. The runner strips that line from stderr.
import { shellQuote } from "./quote.js";

export const PID_MARKER = "nomos-pid:";
export const KILL_GRACE_S = 5;

export interface RemoteCommand {
  command: string;
  timeoutS: number;
  /** Set for a container target: run inside it through `pct exec`. */
  vmid?: number | null;
}

function wrapped(command: string, timeoutS: number, login: boolean): string {
  const shell = login ? "bash -lc" : "bash -c";
  return `printf '${PID_MARKER}%s\\n' "$$" >&2; exec timeout -k ${KILL_GRACE_S} ${timeoutS} ${shell} ${shellQuote(command)}`;
}

export function buildRemoteCommand(r: RemoteCommand): string {
  if (!Number.isInteger(r.timeoutS) || r.timeoutS < 1) throw new Error(`timeout must be a whole number of seconds, got ${r.timeoutS}`);
  if (r.vmid !== undefined && r.vmid !== null) {
    return `pct exec ${containerId(r.vmid)} -- bash -c ${shellQuote(wrapped(r.command, r.timeoutS, true))}`;
  }
  return wrapped(r.command, r.timeoutS, false);
}

/** The command that cancels a running one, given the pid its wrapper printed. */
export function buildCancelCommand(pid: number, vmid?: number | null): string {
  if (!Number.isInteger(pid) || pid < 2) throw new Error(`not a pid: ${pid}`);
  const kill = `kill -TERM ${pid}`;
  return vmid !== undefined && vmid !== null ? `pct exec ${containerId(vmid)} -- ${kill}` : kill;
}

/** `pct exec N -- bash -lc '<command>'`: the plain form, for commands run without the wrapper. */
export function containerCommand(vmid: number, command: string): string {
  return `pct exec ${containerId(vmid)} -- bash -lc ${shellQuote(command)}`;
}

function containerId(vmid: number): number {
  if (!Number.isInteger(vmid) || vmid < 100 || vmid > 999_999_999) throw new Error(`not a container id: ${vmid}`);
  return vmid;
}

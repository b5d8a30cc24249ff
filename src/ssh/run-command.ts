// Runs one command on a target over the pool: wraps it (timeout, pid marker,
// pct exec), captures capped output, recognises a timeout and carries out a
// cancel. Invariants: the result's text is redacted before it leaves this
// module; a timed-out command was ended by `timeout -k` on the host (and, if
// even that failed, its channel was closed); a cancel sends SIGTERM to the
// remote process and only closes the channel after the grace period.
import type { SshEndpoint, SshPool } from "./connection-pool.js";
import type { Redactor } from "./redact.js";
import { buildCancelCommand, buildRemoteCommand, KILL_GRACE_S, PID_MARKER } from "./remote-command.js";

export interface CommandRequest {
  command: string;
  timeoutS: number;
  vmid?: number | null;
  outputCapBytes: number;
  signal?: AbortSignal;
  redact: Redactor;
}

export interface CommandResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  stdoutDroppedBytes: number;
  stderrDroppedBytes: number;
  timedOut: boolean;
  cancelled: boolean;
  durationMs: number;
}

const MARKER_LINE = new RegExp(`^${PID_MARKER}(\\d+)\\n`);

export async function runCommand(pool: SshPool, endpoint: SshEndpoint, req: CommandRequest): Promise<CommandResult> {
  if (req.signal?.aborted) {
    // Cancelled before it started: it never reaches the host.
    const none = { stdout: "", stderr: "", stdoutDroppedBytes: 0, stderrDroppedBytes: 0 };
    return { ...none, exitCode: null, signal: null, timedOut: false, cancelled: true, durationMs: 0 };
  }
  const remote = buildRemoteCommand({ command: req.command, timeoutS: req.timeoutS, vmid: req.vmid });
  let pid: number | undefined;
  let stderrHead = "";
  const close = new AbortController();
  let cancelled = false;
  let graceTimer: NodeJS.Timeout | undefined;

  const sendKill = () => {
    if (pid === undefined) return;
    pool.exec(endpoint, buildCancelCommand(pid, req.vmid), { outputCapBytes: 1024, hardDeadlineMs: 10_000 }).catch(() => close.abort());
  };
  // Cancel: SIGTERM the remote process (as soon as its pid line arrives), and
  // close the channel only if it has not ended after the grace period.
  const onCancel = () => {
    cancelled = true;
    graceTimer = setTimeout(() => close.abort(), (KILL_GRACE_S + 2) * 1000);
    sendKill();
  };
  req.signal?.addEventListener("abort", onCancel, { once: true });

  try {
    const raw = await pool.exec(endpoint, remote, {
      outputCapBytes: req.outputCapBytes,
      hardDeadlineMs: (req.timeoutS + KILL_GRACE_S + 10) * 1000,
      signal: close.signal,
      onStderr: (chunk) => {
        if (pid !== undefined || stderrHead.length > 64) return;
        stderrHead += chunk.toString("latin1");
        const m = MARKER_LINE.exec(stderrHead);
        if (m) {
          pid = Number(m[1]);
          if (cancelled) sendKill();
        }
      },
    });
    const out = raw.stdout.result();
    const err = raw.stderr.result();
    const timedOut =
      !cancelled &&
      (raw.closedBy === "deadline" || ((raw.exitCode === 124 || raw.exitCode === 137) && raw.durationMs >= req.timeoutS * 1000 - 50));
    return {
      exitCode: raw.exitCode,
      signal: raw.signal,
      stdout: req.redact(out.text),
      stderr: req.redact(err.text.replace(MARKER_LINE, "")),
      stdoutDroppedBytes: out.droppedBytes,
      stderrDroppedBytes: err.droppedBytes,
      timedOut,
      cancelled,
      durationMs: raw.durationMs,
    };
  } finally {
    if (graceTimer) clearTimeout(graceTimer);
    req.signal?.removeEventListener("abort", onCancel);
  }
}

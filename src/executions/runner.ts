// The execution runner: takes approved executions and runs them over SSH.
//
//   approved (async) --NOTIFY nomos_execution_ready / sweep--> claim --> run --> finish
//   approved (sync)  --runInline(id)------------------------> claim --> run --> finish
//
// Invariants:
// - Each execution is claimed exactly once across processes: the claim is
//   one UPDATE over a FOR UPDATE SKIP LOCKED pick (lifecycle.ts).
// - While a command runs, its lease is renewed; a runner that dies stops
//   renewing, and whoever next starts or sweeps marks the execution failed
//   with "may or may not have completed". Nothing is ever re-run silently.
// - A result is recorded even across a short database outage: recording is
//   retried for up to a lease (the row stays running, owned by this runner).
// - A cancel request (NOTIFY nomos_execution_cancel, or seen when renewing
//   the lease) kills the remote process; the execution ends cancelled.
// - LISTEN is the mechanism and the sweep the backstop: a missed NOTIFY
//   delays an execution by at most one sweep interval.
// - stop() is idempotent and waits for the commands in flight to finish.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Db } from "../db/connect.js";
import { retryWhileDbUnavailable } from "../db/pg-errors.js";
import type { Execution } from "../db/schema.js";
import { withActor } from "../db/with-actor.js";
import type { Logger } from "../log/logger.js";
import type { SshPool } from "../ssh/connection-pool.js";
import { SshError } from "../ssh/errors.js";
import type { Redactor } from "../ssh/redact.js";
import { runCommand } from "../ssh/run-command.js";
import type { TargetRegistry } from "../targets/registry.js";
import {
  EXECUTION_CANCEL_CHANNEL,
  type ExecutionOutcome,
  executionClaim,
  executionClaimNext,
  executionFinish,
  executionGet,
  executionMarkLost,
  executionRenewLease,
} from "./lifecycle.js";

export const EXECUTION_READY_CHANNEL = "nomos_execution_ready";
const ACTOR = "system:runner";

export interface ExecutionRunnerOptions {
  db: Db;
  /** Where LISTEN runs (NOMOS_DATABASE_LISTEN_URL); by default db.sql. */
  listen?: Db["sql"];
  registry: TargetRegistry;
  pool: SshPool;
  log: Logger;
  redact: Redactor;
  /** Names this process in runner_owner; unique per process by default. */
  owner?: string;
  leaseMs?: number;
  renewEveryMs?: number;
  sweepEveryMs?: number;
  maxConcurrent?: number;
  outputCapBytes?: number;
  maxTimeoutS?: number;
}

interface InFlight {
  abort: AbortController;
  done: Promise<Execution | undefined>;
}

export class ExecutionRunner {
  readonly owner: string;
  readonly #o: Required<Omit<ExecutionRunnerOptions, "owner">>;
  readonly #inFlight = new Map<string, InFlight>();
  #unlisten: (() => Promise<void>)[] = [];
  #sweepTimer: NodeJS.Timeout | undefined;
  #started = false;
  #stopping: Promise<void> | undefined;
  #draining: Promise<void> | undefined;
  #drainAgain = false;
  /** When the last sweep ran (for /healthz). */
  lastSweepAt: Date | null = null;

  constructor(options: ExecutionRunnerOptions) {
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
    this.#o = {
      leaseMs: 30_000,
      renewEveryMs: 10_000,
      sweepEveryMs: 60_000,
      maxConcurrent: 8,
      outputCapBytes: 256 * 1024,
      maxTimeoutS: 86_400,
      ...options,
      listen: options.listen ?? options.db.sql,
    };
  }

  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    await this.#markLost();
    this.lastSweepAt = new Date();
    const listen = this.#o.listen;
    const ready = await listen.listen(
      EXECUTION_READY_CHANNEL,
      () => this.#drain(),
      () => this.#drain(),
    );
    const cancel = await listen.listen(EXECUTION_CANCEL_CHANNEL, (id) => this.#inFlight.get(id)?.abort.abort());
    this.#unlisten.push(ready.unlisten, cancel.unlisten);
    this.#sweepTimer = setInterval(() => void this.#sweep(), this.#o.sweepEveryMs);
    this.#sweepTimer.unref();
    this.#drain();
  }

  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      if (this.#sweepTimer) clearInterval(this.#sweepTimer);
      await Promise.all(this.#unlisten.map((u) => u().catch(() => {})));
      this.#unlisten = [];
      await this.#draining;
      await Promise.all([...this.#inFlight.values()].map((f) => f.done.catch(() => {})));
    })();
    return this.#stopping;
  }

  /** Claims one approved mode='sync' execution, runs it here and returns its terminal row. */
  async runInline(executionId: string, options: { signal?: AbortSignal } = {}): Promise<Execution> {
    if (this.#stopping) throw new Error("the execution runner is stopping; try again once it has restarted");
    const claimed = await withActor(this.#o.db.kysely, ACTOR, (tx) =>
      executionClaim(tx, { executionId, mode: "sync", owner: this.owner, leaseMs: this.#o.leaseMs }),
    );
    const flight = this.#launch(claimed);
    const onAbort = () => flight.abort.abort();
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const finished = await flight.done;
      return finished ?? (await executionGet(this.#o.db.kysely, { executionId }))!;
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** For /healthz: started, and the sweep has run within three intervals. */
  health(): { ok: boolean; running: number; lastSweepAt: string | null; owner: string } {
    const fresh = this.lastSweepAt !== null && Date.now() - this.lastSweepAt.getTime() < 3 * this.#o.sweepEveryMs;
    return {
      ok: this.#started && !this.#stopping && fresh,
      running: this.#inFlight.size,
      lastSweepAt: this.lastSweepAt?.toISOString() ?? null,
      owner: this.owner,
    };
  }

  /** Executions running in this process now. */
  get running(): number {
    return this.#inFlight.size;
  }

  async #markLost(): Promise<void> {
    const lost = await withActor(this.#o.db.kysely, ACTOR, (tx) => executionMarkLost(tx));
    for (const e of lost)
      this.#o.log.warn({ executionId: e.id, previousOwner: e.runner_owner }, "execution lost with its runner; marked failed, not re-run");
  }

  async #sweep(): Promise<void> {
    if (this.#stopping) return;
    try {
      await this.#markLost();
      this.lastSweepAt = new Date();
    } catch (err) {
      this.#o.log.error({ err }, "execution sweep failed");
    }
    this.#drain();
  }

  /** Claims approved async executions while there is room; coalesces concurrent wake-ups. */
  #drain(): void {
    if (this.#stopping || !this.#started) return;
    if (this.#draining) {
      this.#drainAgain = true;
      return;
    }
    this.#draining = (async () => {
      do {
        this.#drainAgain = false;
        while (!this.#stopping && this.#inFlight.size < this.#o.maxConcurrent) {
          let claimed: Execution | undefined;
          try {
            claimed = await withActor(this.#o.db.kysely, ACTOR, (tx) =>
              executionClaimNext(tx, { owner: this.owner, leaseMs: this.#o.leaseMs }),
            );
          } catch (err) {
            this.#o.log.error({ err }, "claiming an execution failed; the sweep will retry");
            return;
          }
          if (!claimed) break;
          this.#launch(claimed);
        }
      } while (this.#drainAgain && !this.#stopping);
    })().finally(() => {
      this.#draining = undefined;
    });
  }

  #launch(e: Execution): InFlight {
    const abort = new AbortController();
    const flight: InFlight = { abort, done: Promise.resolve(undefined) };
    this.#inFlight.set(e.id, flight);
    flight.done = this.#execute(e, abort).finally(() => {
      this.#inFlight.delete(e.id);
      this.#drain();
    });
    return flight;
  }

  async #execute(e: Execution, abort: AbortController): Promise<Execution | undefined> {
    const log = this.#o.log.child({ executionId: e.id, sessionId: e.session_id, target: e.target });
    let leaseLost = false;
    const renew = setInterval(() => {
      executionRenewLease(this.#o.db.kysely, { executionId: e.id, owner: this.owner, leaseMs: this.#o.leaseMs })
        .then((r) => {
          if (!r) {
            leaseLost = true;
            abort.abort();
          } else if (r.cancelRequested) abort.abort();
        })
        .catch((err: unknown) => log.warn({ err }, "could not renew the execution lease"));
    }, this.#o.renewEveryMs);
    let outcome: ExecutionOutcome;
    try {
      if (e.cancel_requested_at) abort.abort();
      outcome = await this.#outcome(e, abort.signal);
    } finally {
      clearInterval(renew);
    }
    if (leaseLost) {
      log.error("lost the lease while running; another process has already reported this execution");
      return undefined;
    }
    try {
      const finished = await this.#finishRetrying(e.id, outcome, log);
      log.info({ status: finished.status, exitCode: finished.exit_code }, "execution finished");
      return finished;
    } catch (err) {
      log.error({ err }, "could not record the execution's result; recording it failed without its output");
      // Never leave the row running with a live owner: record the failure
      // itself, so the agent and the operator learn the command ran and why
      // its output is missing.
      try {
        return await withActor(this.#o.db.kysely, ACTOR, (tx) =>
          executionFinish(tx, {
            executionId: e.id,
            owner: this.owner,
            outcome: {
              status: "failed",
              exitCode: outcome.exitCode ?? null,
              error: `the command ran${outcome.exitCode != null ? ` (exit ${outcome.exitCode})` : ""} but its result could not be stored: ${this.#o.redact((err as Error).message).slice(0, 500)}`,
            },
          }),
        );
      } catch (again) {
        log.error({ err: again }, "could not record the failure either; the sweep will report the execution lost");
        return undefined;
      }
    }
  }

  /**
   * Records the result; while the database cannot be reached (a restart, a
   * network blip) it keeps trying for up to a lease, so a command that ran
   * is not reported lost for want of a connection. A refusal by the database
   * itself (the row moved on, a value it cannot store) is not retried.
   */
  async #finishRetrying(executionId: string, outcome: ExecutionOutcome, log: Logger): Promise<Execution> {
    return retryWhileDbUnavailable(
      () => withActor(this.#o.db.kysely, ACTOR, (tx) => executionFinish(tx, { executionId, owner: this.owner, outcome })),
      {
        forMs: this.#o.leaseMs,
        onRetry: (err, attempt) =>
          log.warn({ err: (err as Error).message, attempt }, "could not record the execution's result yet; retrying"),
      },
    );
  }

  async #outcome(e: Execution, signal: AbortSignal): Promise<ExecutionOutcome> {
    try {
      const target = await this.#o.registry.resolve(e.target);
      if (!target)
        return {
          status: "failed",
          error: `unknown target "${e.target}": it is not in the targets file and no container has that name`,
        };
      const r = await runCommand(this.#o.pool, target.ssh, {
        command: e.command,
        timeoutS: Math.min(e.timeout_s, this.#o.maxTimeoutS),
        vmid: target.vmid,
        outputCapBytes: this.#o.outputCapBytes,
        signal,
        redact: this.#o.redact,
      });
      const result = {
        exitCode: r.exitCode,
        signal: r.signal,
        stdout: r.stdout,
        stderr: r.stderr,
        stdoutDroppedBytes: r.stdoutDroppedBytes,
        stderrDroppedBytes: r.stderrDroppedBytes,
      };
      if (r.cancelled) return { ...result, status: "cancelled", error: "cancelled" };
      if (r.timedOut)
        return {
          ...result,
          status: "timed_out",
          error: `timed out after ${e.timeout_s} s; the remote process was ended`,
        };
      if (r.exitCode === 0) return { ...result, status: "completed" };
      return {
        ...result,
        status: "failed",
        error: r.exitCode === null ? `ended by signal ${r.signal ?? "unknown"}` : null,
      };
    } catch (err) {
      if (err instanceof SshError) {
        return { status: signal.aborted ? "cancelled" : "failed", error: this.#o.redact(err.message) };
      }
      this.#o.log.error({ err, executionId: e.id }, "unexpected error running an execution");
      return { status: "failed", error: `internal error: ${this.#o.redact((err as Error).message)}` };
    }
  }
}

// The backstop: every NOMOS_SWEEP_SECONDS (and at once after the listener
// reconnects) find what a missed NOTIFY left behind — finished,
// un-continued results of sessions with an open window — and claims whose
// process died before starting the turn, and hand them to the dispatcher.
// Polling is never the mechanism: with a healthy listener the sweep finds
// nothing. Invariant: one sweep runs at a time per process; stop() waits for
// it and is safe to call twice.
import type { Db } from "../db/connect.js";
import { withDeadline } from "../db/pg-errors.js";
import type { Logger } from "../log/logger.js";
import type { ContinuationDispatcher } from "./dispatcher.js";
import { planExecutionsPendingSessions, planExecutionsReclaimExpired } from "./ledger.js";

export type SweepState = {
  ok: boolean;
  lastSweepAt: string | null;
  lastSweepMs: number | null;
  lastFound: number;
  lastError: string | null;
};

export interface SweepOptions {
  db: Db;
  log: Logger;
  dispatcher: ContinuationDispatcher;
  owner: string;
  intervalSeconds: number;
  leaseSeconds?: number;
  /** Sessions looked at per sweep. */
  batch?: number;
}

export class ReconciliationSweep {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private readonly state_: SweepState = {
    ok: true,
    lastSweepAt: null,
    lastSweepMs: null,
    lastFound: 0,
    lastError: null,
  };

  constructor(private readonly o: SweepOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.runNow(), this.o.intervalSeconds * 1000);
    this.timer.unref();
  }

  /** Sweeps now; if a sweep is running, one more follows it. */
  runNow(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.current) {
      this.again = true;
      return this.current;
    }
    // Bounded like a dispatch: one stuck query must not end sweeping for good.
    const deadlineMs = Math.max(30_000, this.o.intervalSeconds * 1000);
    this.current = withDeadline(this.sweep(), deadlineMs, "reconciliation sweep")
      .catch((err: unknown) => {
        this.o.log.error({ err }, "sweep failed");
        Object.assign(this.state_, { ok: false, lastError: (err as Error).message });
      })
      .finally(() => {
        this.current = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          void this.runNow();
        }
      });
    return this.current;
  }

  state(): SweepState {
    return { ...this.state_ };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.current;
  }

  private async sweep(): Promise<void> {
    const started = performance.now();
    try {
      const recovered = await planExecutionsReclaimExpired(this.o.db.kysely, {
        owner: this.o.owner,
        leaseSeconds: this.o.leaseSeconds ?? 30,
      });
      for (const r of recovered) {
        this.o.log.warn({ sessionId: r.sessionId, executions: r.executionIds }, "re-dispatching a lapsed claim");
        await this.o.dispatcher.redeliver(r.sessionId, r.executionIds);
      }
      const sessions = await planExecutionsPendingSessions(this.o.db.kysely, { limit: this.o.batch ?? 1000 });
      for (const sessionId of sessions) this.o.dispatcher.poke(sessionId);
      if (sessions.length > 0) {
        this.o.log.info({ sessions: sessions.length }, "sweep found results no notification delivered");
      }
      Object.assign(this.state_, { ok: true, lastFound: sessions.length + recovered.length, lastError: null });
    } catch (err) {
      this.o.log.error({ err }, "sweep failed");
      Object.assign(this.state_, { ok: false, lastError: (err as Error).message });
    } finally {
      this.state_.lastSweepAt = new Date().toISOString();
      this.state_.lastSweepMs = Math.round((performance.now() - started) * 10) / 10;
    }
  }
}

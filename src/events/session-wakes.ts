// Wakes the session event streams of sessions whose events were committed
// without a NOTIFY of their own (the continuation's claim-and-queue
// statement, continuation/ledger.ts), batched: one `pg_notify` statement
// for every session woken while the previous one was on its way.
//
// Why apart from the commit: PostgreSQL serialises the commits of every
// transaction that sent a NOTIFY on one database-wide lock, held through
// the commit's WAL flush, so a claim that notified waited behind every
// other notifying commit (the runners' terminal updates) and capped the
// event loop's rate (issue 20). A wake-up is only a hint: a stream reads
// everything after its last id when woken, re-reads on its heartbeat and
// after a reconnect (http/session-event-hub.ts), so a wake-up lost with
// the process delays an event, never loses it. Invariant: every wake()
// is followed by a NOTIFY for that session sent after wake() was called.
import type { Db } from "../db/connect.js";
import type { Logger } from "../log/logger.js";
import { SESSION_EVENTS_CHANNEL } from "./session-events.js";

export class SessionWakes {
  private readonly pending = new Set<string>();
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  /** This session's streams should re-read (coalesced with the other wakes in flight). */
  wake(sessionId: string): void {
    this.pending.add(sessionId);
    this.flushing ??= this.flush();
  }

  /** Resolves when every wake so far has been sent (tests and shutdown). */
  async idle(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async flush(): Promise<void> {
    await new Promise((r) => setImmediate(r)); // let the wakes of this tick join
    try {
      while (this.pending.size > 0) {
        const ids = [...this.pending];
        this.pending.clear();
        try {
          await this.db.sql`SELECT pg_notify(${SESSION_EVENTS_CHANNEL}, s) FROM unnest(${ids}::text[]) s`;
        } catch (err) {
          // The streams' heartbeat re-reads; nothing is lost, only late.
          this.log.warn({ err, sessions: ids.length }, "waking session event streams failed; they catch up on their heartbeat");
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }
}

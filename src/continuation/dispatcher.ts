// Turns "these executions finished" into continuation turns.
//
//   notify(executionId) ─┐                     ┌─ claim (ledger.ts: window open? under the
//   poke(sessionId) ─────┼─> pending sessions ─┤   loop guard? one conditional UPDATE)
//   sweep ───────────────┘   (a Set: coalesced) └─> startTurn(notes) -> mark delivered
//
// Invariants:
// - Coalescing: a session is queued at most once. Notifications that arrive
//   while it waits fold into that one entry, and one claim takes every
//   finished result of the session, so results finishing close together
//   ride one continuation turn.
// - Order and concurrency: a session is dispatched by one worker at a time
//   here (and by one process at a time, through the claim); different
//   sessions go in parallel up to `concurrency`. A session poked while being
//   dispatched is dispatched again afterwards, never concurrently.
// - A decision by the operator (extraNotes from onApprovalsSettled) is
//   delivered even with no window open: it is the operator's own act, one
//   turn per click, so it cannot loop; finished results still need a window.
// - Marked before running: the claim commits before the turn is started, so
//   a turn that fails cannot re-trigger itself, and a crash in between
//   leaves a claim with a lease that the sweep hands to another process.
// - One round trip (production, when `turnQueued` is given): the NOTIFY
//   names the session ("<execution id>:<session id>", migration 100), and
//   the claim and the queued turn are one statement
//   (ledger.ts planExecutionsClaimAndQueue); turnQueued then runs the
//   queued turn, and the session's event streams are woken after the
//   commit, batched (events/session-wakes.ts). Without it (tests that supply their own startTurn), the
//   claim and startTurn are two steps, as before.
import { sql } from "kysely";
import type { Db } from "../db/connect.js";
import { withDeadline } from "../db/pg-errors.js";
import { sessionEventsAppend } from "../events/session-events.js";
import { SessionWakes } from "../events/session-wakes.js";
import { executionNote } from "../executions/execution-note.js";
import type { Logger } from "../log/logger.js";
import { planExecutionsClaimAndQueue, planExecutionsClaimForSession } from "./ledger.js";

/**
 * How the agent is re-invoked: Turns.chatWith in production. It must mark
 * the executions delivered (planExecutionsMarkDelivered) in the transaction
 * that queues the turn, so a crash right after cannot deliver them twice.
 */
export type StartContinuationTurn = (params: {
  sessionId: string;
  notes: string[];
  executionIds: string[];
  reason: "executions" | "approval" | "recovered";
}) => Promise<{ turnId: string }>;

/** A continuation turn was queued by the dispatcher's one statement: run it (Turns.queued in production). */
export type ContinuationQueued = (turn: { sessionId: string; turnId: string; executionIds: string[] }) => void;

export interface DispatcherOptions {
  db: Db;
  log: Logger;
  /** This process, as recorded in claimed_by. */
  owner: string;
  /**
   * Given here (tests) or later by start(startTurn) (main.ts: the agent is
   * built after the dispatcher it reports approvals to). Until then pokes
   * wait, coalesced, and nothing is dispatched.
   */
  startTurn?: StartContinuationTurn;
  /** With it, claim and queue are one statement (see the header); given here or by start(). */
  turnQueued?: ContinuationQueued;
  maxContinuations: number;
  /** How long a claim may wait for its turn before another process may take it over. */
  leaseSeconds?: number;
  /** Sessions dispatched at once. */
  concurrency?: number;
  /** How long one dispatch may take before its slot is given up (default: the lease). */
  deadlineMs?: number;
}

interface Pending {
  /** Notes to send even with no execution claimed (e.g. "approved by the operator"). */
  extraNotes: string[];
}

export class ContinuationDispatcher {
  private readonly pending = new Map<string, Pending>();
  private readonly running = new Map<string, Promise<void>>();
  private stopped = false;
  private readonly leaseSeconds: number;
  private readonly concurrency: number;
  private readonly deadlineMs: number;
  private readonly log: Logger;
  private startTurn: StartContinuationTurn | undefined;
  private turnQueued: ContinuationQueued | undefined;
  private readonly wakes: SessionWakes;

  constructor(private readonly o: DispatcherOptions) {
    this.startTurn = o.startTurn;
    this.turnQueued = o.turnQueued;
    this.leaseSeconds = o.leaseSeconds ?? 30;
    this.concurrency = o.concurrency ?? 16;
    this.deadlineMs = o.deadlineMs ?? this.leaseSeconds * 1000;
    this.log = o.log.child({ component: "continuation" });
    this.wakes = new SessionWakes(o.db, this.log);
  }

  /** Begins dispatching (once), with what is already pending. */
  start(startTurn: StartContinuationTurn, turnQueued?: ContinuationQueued): void {
    this.startTurn ??= startTurn;
    this.turnQueued ??= turnQueued;
    this.pump();
  }

  /**
   * An execution finished (from NOTIFY): queue its session. The payload
   * "<execution id>:<session id>" names the session a result waits in;
   * a bare execution id (no result waits, or a sender from before
   * migration 100) is looked up.
   */
  async notify(payload: string): Promise<void> {
    const m = /^([0-9a-f-]{36})(?::([0-9a-f-]{36}))?$/i.exec(payload);
    if (!m) {
      this.log.warn({ payload }, "ignoring a malformed nomos_execution_finished payload");
      return;
    }
    if (m[2]) {
      this.poke(m[2]);
      return;
    }
    const executionId = m[1]!;
    const row = await this.o.db.kysely
      .selectFrom("nomos_plan_executions")
      .select(["session_id", "continued_at"])
      .where("execution_id", "=", executionId)
      .executeTakeFirst();
    if (!row || row.continued_at !== null) return; // not linked to a session, or already continued
    this.poke(row.session_id);
  }

  /** Something may be ready for this session: queue it (coalesced). */
  poke(sessionId: string, extraNotes: string[] = []): void {
    if (this.stopped) return;
    const entry = this.pending.get(sessionId);
    if (entry) entry.extraNotes.push(...extraNotes);
    else this.pending.set(sessionId, { extraNotes: [...extraNotes] });
    this.pump();
  }

  /** Dispatches a claim recovered from a crashed process (already claimed by us). */
  async redeliver(sessionId: string, executionIds: string[]): Promise<void> {
    const notes = await this.notesFor(executionIds);
    await this.turnStarter()({ sessionId, notes, executionIds, reason: "recovered" });
  }

  /** Resolves when nothing is pending or running (tests and shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
    await this.wakes.idle();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.pending.clear();
    await Promise.allSettled([...this.running.values()]);
    await this.wakes.idle();
  }

  private turnStarter(): StartContinuationTurn {
    if (!this.startTurn) throw new Error("the continuation dispatcher has not been started");
    return this.startTurn;
  }

  private pump(): void {
    if (!this.startTurn) return;
    for (const [sessionId, entry] of this.pending) {
      if (this.running.size >= this.concurrency) return;
      if (this.running.has(sessionId)) continue; // runs again when the current dispatch ends
      this.pending.delete(sessionId);
      // A dispatch that hangs (a query that never returns: the unpatched
      // driver did this after a database restart, and a network path that
      // drops packets silently still can) must not hold the session's slot for ever: past the
      // deadline the slot is freed and the sweep retries. A late claim is
      // safe: it carries a lease, and an undelivered lapsed claim is taken over.
      const work = withDeadline(this.dispatch(sessionId, entry), this.deadlineMs, `continuation dispatch for ${sessionId}`)
        .catch((err: unknown) => this.log.error({ err, sessionId }, "continuation dispatch failed"))
        .finally(() => {
          this.running.delete(sessionId);
          this.pump();
        });
      this.running.set(sessionId, work);
    }
  }

  private async dispatch(sessionId: string, entry: Pending): Promise<void> {
    if (this.turnQueued) return this.dispatchInOne(sessionId, entry, this.turnQueued);
    const log = this.log.child({ sessionId });
    const outcome = await planExecutionsClaimForSession(this.o.db, {
      sessionId,
      owner: this.o.owner,
      actor: "system:continuation",
      leaseSeconds: this.leaseSeconds,
      maxContinuations: this.o.maxContinuations,
      countEmpty: entry.extraNotes.length > 0,
    });
    if (outcome.kind === "window_closed" && entry.extraNotes.length > 0) {
      // The operator's decision itself (approved "this step only", rejected):
      // the agent hears it without anyone typing, window or not. Finished
      // results are not claimed without a window; they ride the operator's
      // next message.
      const { turnId } = await this.turnStarter()({ sessionId, notes: entry.extraNotes, executionIds: [], reason: "approval" });
      log.debug({ turnId }, "decision continuation dispatched with no window open");
      return;
    }
    if (outcome.kind === "window_closed" || outcome.kind === "nothing") return;
    if (outcome.kind === "limit_reached") return this.reportLimit(sessionId, outcome.limit);
    const executionIds = outcome.executions.map((e) => e.id);
    const notes = [...entry.extraNotes, ...outcome.executions.map(executionNote)];
    const reason = executionIds.length > 0 ? "executions" : "approval";
    const { turnId } = await this.turnStarter()({ sessionId, notes, executionIds, reason });
    log.debug({ turnId, executions: executionIds.length }, "continuation dispatched");
  }

  /** The one-statement dispatch: claim and queue together, then run the queued turn. */
  private async dispatchInOne(sessionId: string, entry: Pending, turnQueued: ContinuationQueued): Promise<void> {
    const outcome = await planExecutionsClaimAndQueue(this.o.db, {
      sessionId,
      owner: this.o.owner,
      actor: "system:continuation",
      leaseSeconds: this.leaseSeconds,
      maxContinuations: this.o.maxContinuations,
      extraNotes: entry.extraNotes,
    });
    if (outcome.kind === "limit_reached") return this.reportLimit(sessionId, outcome.limit);
    if (outcome.kind !== "queued") return;
    turnQueued({ sessionId, turnId: outcome.turnId, executionIds: outcome.executionIds });
    this.wakes.wake(sessionId); // the note's `message` event, committed without a NOTIFY
    if (this.log.isLevelEnabled("debug"))
      this.log.debug({ sessionId, turnId: outcome.turnId, executions: outcome.executionIds.length }, "continuation queued");
  }

  private async reportLimit(sessionId: string, limit: number): Promise<void> {
    const message =
      `Stopped after ${limit} continuation turns in this assent window (the loop guard). ` +
      "Finished results wait for your next message; approve again to let the agent continue on its own.";
    this.log.warn({ sessionId, limit }, "continuation limit reached; window closed");
    await sessionEventsAppend(this.o.db.kysely, [
      { sessionId, type: "turn_failed", data: { message, reason: "continuation_limit" } },
      { sessionId, type: "assent_changed", data: { open: false, expiresAt: null, reason: "continuation_limit" } },
    ]);
  }

  private async notesFor(executionIds: string[]): Promise<string[]> {
    if (executionIds.length === 0) return [];
    const rows = await this.o.db.kysely
      .selectFrom("executions")
      .selectAll()
      .where("id", "in", executionIds)
      .orderBy(sql`finished_at`)
      .execute();
    return rows.map(executionNote);
  }
}

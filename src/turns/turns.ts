// Turns: the agent's entry points. chat() for an operator message,
// chatWith() for system notes (a continuation), abort() for Stop.
//
// Invariants:
// - The message or notes are persisted, and a turn queued, before chat() or
//   chatWith() returns; the turn runs in the background and streams to the
//   session's events.
// - At most one turn runs per session, across every process: the database's
//   unique partial index is the lock (turnClaimNext). Work arriving
//   meanwhile stays queued; when the running turn ends, its process claims
//   the queue, coalescing everything queued into one turn. Nothing is
//   dropped: a sweep claims queued work whose session has no running turn.
// - A turn ends in one statement with its last writes (turn-store.ts
//   turnEnd: the last model call's usage, its reply, the text not yet
//   stored, the end), which also says whether work is queued; the queue is
//   claimed again only then or when work was queued here meanwhile.
// - A turn cut off by a database outage is resumed once, by a continuation
//   that tells the agent why (resume.ts).
// - Assent is read only here, only from the operator's own text (never from
//   notes, model text or command output); what those words decide is
//   approvals/decide-by-words.ts's: forward assent decides the session's
//   pending approvals (or, with none pending, resumes an approved
//   unfinished plan: assent/plan-resume.ts), a typed phrase approves its
//   destructive step only when the message IS the confirmation
//   (assent/confirmation.ts), "reject" rejects, and a revocation closes the
//   window and stops its running turn.

import { type Kysely, sql } from "kysely";
import type { ApprovalDeps } from "../approvals/decide.js";
import { approvalsDecideByWords } from "../approvals/decide-by-words.js";
import { planResume } from "../assent/plan-resume.js";
import { assentParse } from "../assent/vocabulary.js";
import type { CarriedNotes } from "../continuation/carry.js";
import { planExecutionsMarkDelivered } from "../continuation/ledger.js";
import { isDbUnavailable, isPgError, retryWhileDbUnavailable, toError } from "../db/pg-errors.js";
import type { Database } from "../db/schema.js";
import { withActor } from "../db/with-actor.js";
import { DomainError } from "../errors/domain-error.js";
import { EventWriter } from "../events/event-writer.js";
import type { Logger } from "../log/logger.js";
import { SESSION_MESSAGE_MAX_CHARS, sessionExists } from "../sessions/sessions.js";
import { turnQueueContinuation } from "./continuation-queue.js";
import { messageAppend } from "./messages.js";
import { RESUME_REASON, resumeNote, shouldResume } from "./resume.js";
import type { AgentTurnContext, AgentTurnOutcome } from "./run-turn.js";
import { type SessionStopped, sessionStop } from "./session-stop.js";
import {
  TURN_LEASE_SECONDS,
  turnClaimNext,
  turnEnd,
  turnQueue,
  turnRenewLease,
  turnsInterruptExpired,
  turnsSessionsWaiting,
} from "./turn-store.js";

export interface TurnsDeps {
  db: Kysely<Database>;
  /** Runs one claimed turn (agentTurn bound to its deps). */
  runTurn: (ctx: AgentTurnContext) => Promise<AgentTurnOutcome>;
  /** For decisions made by operator words in chat; onApprovalsSettled is not called for them (the chat turn carries the news). */
  approvals: Omit<ApprovalDeps, "onApprovalsSettled">;
  log: Logger;
  /** This process's name in turns.owner. */
  owner?: string;
  /** How often queued work of idle sessions is swept up (another process died mid-turn). */
  sweepMs?: number;
  /**
   * Notes that wait for the operator's next message (results that finished
   * while no window was open), already claimed; the continuation ledger
   * provides it. Their executions are marked delivered by this turn in the
   * transaction that queues it, so they are never delivered twice.
   */
  carryNotes?: (sessionId: string) => Promise<CarriedNotes>;
  /** LISTEN on a channel (main.ts: db.sql.listen), so Stop reaches a turn another replica runs. */
  listen?: (channel: string, onPayload: (payload: string) => void) => Promise<{ unlisten(): Promise<unknown> }>;
  /** EventWriter text-delta flush interval. */
  flushMs?: number;
}

export class TurnInputError extends DomainError {
  override name = "TurnInputError";
  constructor(message: string) {
    super("bad_request", message, { field: "text" });
  }
}

/** The session does not exist. */
export class TurnSessionNotFoundError extends DomainError {
  override name = "TurnSessionNotFoundError";
  constructor(
    readonly sessionId: string,
    options?: ErrorOptions,
  ) {
    super("not_found", `session ${sessionId} does not exist`, options);
  }
}

export const TURN_ABORT_CHANNEL = "nomos_turn_abort";

/** How long start() waits for the first claims of work left queued (see start). */
const START_CLAIM_WAIT_MS = 2000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Active {
  turnId: string;
  controller: AbortController;
  /** Settles when the session's drain loop (this turn and any claimed after it) ends. */
  done: Promise<void>;
  /** Work was queued while the loop ran: look at the queue once more before leaving. */
  poked: boolean;
  /** Settles once the loop's first claim was tried (start() waits for it: see there). */
  claimTried: Promise<void>;
}

export class Turns {
  private readonly active = new Map<string, Active>();
  private readonly owner: string;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private stopping: Promise<void> | undefined;
  private listening: Promise<{ unlisten(): Promise<unknown> } | undefined> | undefined;

  constructor(private readonly deps: TurnsDeps) {
    this.owner = deps.owner ?? `turns-${process.pid}`;
  }

  /** An operator message: decides what its words decide, persists it, queues a turn. */
  async chat(
    sessionId: string,
    operatorText: string,
    actor: string,
    // Only an admin's typed phrase confirms a destructive step (roles); the caller says whose words these are.
    options: { mayConfirmDestructive: boolean },
  ): Promise<{ turnId: string }> {
    const text = operatorText.trim();
    await this.requireSession(sessionId);
    if (text === "") throw new TurnInputError("text: a message needs some text");
    if (text.length > SESSION_MESSAGE_MAX_CHARS) throw new TurnInputError(`text: at most ${SESSION_MESSAGE_MAX_CHARS} characters`);
    const reading = assentParse(text);
    const notes: string[] = [];
    if (reading.reading === "revoke") {
      // Revoking words are the Stop button typed: everything of the session stops (session-stop.ts).
      const stopped = await this.stopSession(sessionId, actor);
      if (stopped.windowClosed)
        notes.push(`The operator's words ("${reading.phrase}") revoked the assent window: ask before any further change.`);
    }
    const decided = await approvalsDecideByWords(
      { approvals: this.deps.approvals, log: this.deps.log },
      {
        sessionId,
        text,
        reading: reading.reading,
        actor,
        mayConfirmDestructive: options.mayConfirmDestructive,
      },
    );
    notes.push(...decided.notes);
    if (reading.reading === "assent" && decided.pending === 0) {
      const resumed = await withActor(this.deps.db, actor, (tx) =>
        planResume(tx, { sessionId, actor, minutes: this.deps.approvals.assentMinutes }),
      );
      if (resumed) {
        const scope = resumed.window.scopeTargets.join(", ") || "no targets";
        notes.push(
          `The operator's words ("${reading.phrase}") resumed plan ${resumed.planId} ("${resumed.goal}"): the assent window is open again ` +
            `until ${resumed.window.expiresAt?.toISOString()} over ${scope}, with the plan's pre-authorizations. Carry the plan on from where it stopped.`,
        );
      }
    }
    const carried = (await this.deps.carryNotes?.(sessionId)) ?? { notes: [], executionIds: [] };
    notes.push(...carried.notes);
    const { turnId } = await withActor(this.deps.db, actor, async (tx) => {
      const turn = await turnQueue(tx, { sessionId, kind: "operator", input: { text, actor } });
      await planExecutionsMarkDelivered(tx, { executionIds: carried.executionIds, turnId: turn.id });
      await messageAppend(tx, { sessionId, turnId: turn.id, kind: "operator", content: [{ type: "text", text }] });
      if (notes.length > 0) {
        await messageAppend(tx, { sessionId, turnId: turn.id, kind: "system_note", content: [{ type: "text", text: notes.join("\n") }] });
      }
      return { turnId: turn.id };
    });
    this.kick(sessionId);
    return { turnId };
  }

  /** A continuation: system notes (finished executions, decided approvals) after the history. */
  async chatWith(sessionId: string, notes: string[], meta: { executionIds?: string[]; reason?: string } = {}): Promise<{ turnId: string }> {
    const lines = notes.map((n) => n.trim()).filter((n) => n !== "");
    if (!UUID.test(sessionId)) throw new TurnSessionNotFoundError(sessionId);
    if (lines.length === 0) throw new TurnInputError("notes: a continuation needs at least one note");
    // The event loop's last hop, in one round trip (continuation-queue.ts):
    // the turn, its note, the event and the delivery mark on the ledger, so
    // a crash after this commit cannot make the sweep deliver them again.
    const { turnId } = await turnQueueContinuation(this.deps.db, {
      sessionId,
      actor: "system:continuation",
      notes: lines,
      executionIds: meta.executionIds ?? [],
      reason: meta.reason ?? null,
    }).catch((err: unknown) => {
      if (isPgError(err, "foreign_key_violation")) throw new TurnSessionNotFoundError(sessionId);
      throw err;
    });
    this.kick(sessionId);
    return { turnId };
  }

  /**
   * A continuation turn was queued for the session by another module's
   * statement (the event loop's one-statement claim and queue): run it here,
   * as chatWith would have.
   */
  queued(sessionId: string): void {
    this.kick(sessionId);
  }

  private async requireSession(sessionId: string): Promise<void> {
    if (!UUID.test(sessionId) || !(await sessionExists(this.deps.db, { sessionId }))) throw new TurnSessionNotFoundError(sessionId);
  }

  /**
   * Stop, everything of the session: closes the window, cancels its queued
   * turns and its queued or running executions, aborts the running turn
   * (and a pct_create in it), and leaves one marker in the transcript.
   */
  stopSession(sessionId: string, actor: string): Promise<SessionStopped> {
    return sessionStop({ db: this.deps.db, turns: this }, { sessionId, actor });
  }

  /**
   * Aborts the session's running turn, keeping its partial reply. A
   * turn in this process stops at once; one running in another replica is
   * told through NOTIFY nomos_turn_abort (when listen is wired).
   */
  async abort(sessionId: string): Promise<void> {
    this.abortLocal(sessionId);
    if (this.deps.listen && UUID.test(sessionId)) {
      await sql`SELECT pg_notify(${TURN_ABORT_CHANNEL}, ${sessionId})`.execute(this.deps.db);
    }
  }

  private abortLocal(sessionId: string): void {
    this.active.get(sessionId)?.controller.abort(new Error("stopped by the operator"));
  }

  /** Starts the sweep and the Stop listener; resolves once listening. */
  async start(): Promise<void> {
    if (this.timer || this.stopped) return;
    if (this.deps.listen) {
      this.listening = this.deps
        .listen(TURN_ABORT_CHANNEL, (sessionId) => this.abortLocal(sessionId))
        .catch((err: unknown) => {
          this.deps.log.error({ err }, "could not LISTEN for Stop from other replicas; Stop reaches this process's turns only");
          return undefined;
        });
    }
    // Work a dead process left queued is claimed before start() returns
    // (bounded: a database that does not answer does not hold up startup),
    // so it runs as it was queued, before the event loop, started next,
    // queues anything new behind it.
    const swept = this.sweep();
    this.timer = setInterval(() => void this.sweep(), this.deps.sweepMs ?? 15_000);
    this.timer.unref();
    await this.listening;
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([swept, new Promise<void>((r) => (bound = setTimeout(r, START_CLAIM_WAIT_MS)))]);
    clearTimeout(bound);
  }

  /** Stops taking work, aborts running turns (they end 'aborted') and waits for them. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.stopped = true;
      if (this.timer) clearInterval(this.timer);
      this.timer = undefined;
      const listening = await this.listening;
      await listening?.unlisten().catch(() => {});
      for (const a of this.active.values()) a.controller.abort(new Error("the service is stopping"));
      await Promise.all([...this.active.values()].map((a) => a.done));
    })();
    return this.stopping;
  }

  /** Settles when no turn of the session runs in this process (tests, shutdown). */
  async idle(sessionId: string): Promise<void> {
    for (let a = this.active.get(sessionId); a; a = this.active.get(sessionId)) await a.done;
  }

  /** Resolves once each session it kicked has tried its first claim. */
  private async sweep(): Promise<void> {
    try {
      await turnsInterruptExpired(this.deps.db);
      const tried: Promise<void>[] = [];
      for (const sessionId of await turnsSessionsWaiting(this.deps.db)) tried.push(this.kick(sessionId));
      await Promise.all(tried);
    } catch (err) {
      this.deps.log.error({ err }, "turn sweep failed; retrying on the next sweep");
    }
  }

  /** Runs the session's queued work here unless this process already runs a turn for it. */
  private kick(sessionId: string): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const running = this.active.get(sessionId);
    if (running) {
      running.poked = true;
      return running.claimTried;
    }
    const controller = new AbortController();
    let tried!: () => void;
    const claimTried = new Promise<void>((r) => {
      tried = r;
    });
    const entry: Active = { turnId: "", controller, done: Promise.resolve(), poked: false, claimTried };
    this.active.set(sessionId, entry);
    entry.done = this.drain(sessionId, entry, tried).finally(() => {
      tried();
      if (this.active.get(sessionId) === entry) this.active.delete(sessionId);
    });
    return claimTried;
  }

  private async drain(sessionId: string, entry: Active, tried: () => void): Promise<void> {
    try {
      for (;;) {
        if (this.stopped) return;
        entry.poked = false;
        const claimed = await turnClaimNext(this.deps.db, { sessionId, owner: this.owner }).finally(tried);
        if (!claimed) {
          if (entry.poked) continue;
          return;
        }
        entry.turnId = claimed.turn.id;
        entry.controller = new AbortController();
        const reason = (claimed.turn.input as { reason?: string } | null)?.reason;
        const more = await this.runOne(sessionId, claimed.turn.id, reason, entry.controller.signal);
        // Claim again only when there is something to claim: work queued
        // here meanwhile (poked) or anywhere before the turn's end (more).
        if (!more && !entry.poked) return;
      }
    } catch (err) {
      this.deps.log.error({ err, sessionId }, "turn scheduling failed; the sweep will retry");
    }
  }

  /** Runs one claimed turn to its end; resolves with whether the session has work queued after it. */
  private async runOne(sessionId: string, turnId: string, reason: string | undefined, signal: AbortSignal): Promise<boolean> {
    const log = this.deps.log.child({ sessionId, turnId });
    const writer = new EventWriter(this.deps.db, sessionId, turnId, this.deps.flushMs);
    // The heartbeat keeps the lease while a long step runs; a turn whose lease
    // was taken (declared lost by another process) stops here. The turn's
    // signal is aborted by Stop (signal) or by the lease's loss: one
    // controller and one listener, not AbortSignal.any (about 20 µs of CPU
    // a turn on Node 20, issue 20).
    const turnAbort = new AbortController();
    const onStop = () => turnAbort.abort(signal.reason);
    if (signal.aborted) onStop();
    else signal.addEventListener("abort", onStop, { once: true });
    const heartbeat = setInterval(
      () => {
        turnRenewLease(this.deps.db, { turnId })
          .then((alive) => {
            if (!alive) turnAbort.abort(new Error("this turn's lease was lost"));
          })
          .catch((err: unknown) => log.warn({ err }, "could not renew the turn's lease"));
      },
      (TURN_LEASE_SECONDS * 1000) / 4,
    );
    heartbeat.unref();
    let outcome: AgentTurnOutcome;
    let resume = false;
    /** The turn failed with err: its outcome, and its turn_failed event's data. */
    const crashed = (err: unknown, iterations: number) => {
      const error = toError(err);
      log.error({ err: error }, "turn crashed");
      outcome = { status: signal.aborted ? "aborted" : "failed", iterations, error: error.message };
      resume = shouldResume({ err, aborted: signal.aborted, reason });
      return { message: `the turn failed: ${error.message}` };
    };
    try {
      outcome = await this.deps.runTurn({
        sessionId,
        turnId,
        signal: turnAbort.signal,
        writer,
        onIteration: async (iterations) => {
          if (!(await turnRenewLease(this.deps.db, { turnId, iterations }))) turnAbort.abort(new Error("this turn's lease was lost"));
        },
      });
    } catch (err) {
      await writer.emit("turn_failed", crashed(err, 0)).catch(() => {});
    }
    clearInterval(heartbeat);
    signal.removeEventListener("abort", onStop);
    const end = { turnId, sessionId, iterations: outcome!.iterations, actor: `system:${this.owner}` };
    let ended: { queuedAfter: boolean } | undefined;
    const events = await writer.takeRest();
    if (writer.failed) log.error({ err: writer.failed }, "some of the turn's streamed events could not be stored");
    const last = outcome!.last;
    if (last) {
      // The common end: the turn's last reply, its usage, the text not yet
      // stored and the end, in one statement under the agent's name. If it
      // fails, the turn ends failed, as when the reply's own write failed.
      try {
        ended = await turnEnd(this.deps.db, {
          ...end,
          status: "completed",
          actor: last.actor,
          events,
          usage: last.usage,
          reply: last.reply,
        });
      } catch (err) {
        events.push({ sessionId, turnId, type: "turn_failed", data: crashed(err, outcome!.iterations) });
      }
    }
    if (!ended) {
      const status = outcome!.status === "aborted" && this.stopped ? "interrupted" : outcome!.status;
      // A database restart must not leave the turn running (and its session
      // blocked) until the lease runs out: the end is retried meanwhile. Its
      // last events go with it; if they are what fails, the end goes alone.
      const finish = (withEvents: boolean) =>
        retryWhileDbUnavailable(
          () => turnEnd(this.deps.db, { ...end, status, error: outcome.error ?? null, ...(withEvents ? { events } : {}) }),
          {
            forMs: (TURN_LEASE_SECONDS * 1000) / 2,
            onRetry: (err, attempt) => log.warn({ err: (err as Error).message, attempt }, "could not record the turn's end yet; retrying"),
          },
        );
      ended = await finish(true).catch((err: unknown) => {
        if (events.length === 0 || isDbUnavailable(err)) throw err;
        log.error({ err }, "could not store the turn's last events");
        return finish(false);
      });
    }
    log.info({ status: outcome!.status, iterations: outcome!.iterations }, "turn finished");
    if (resume && !this.stopped) return (await this.resume(sessionId, outcome!.error ?? "", log)) || ended.queuedAfter;
    return ended.queuedAfter;
  }

  /** Queues the continuation that resumes a turn cut off by a database outage (resume.ts). */
  private async resume(sessionId: string, error: string, log: Logger): Promise<boolean> {
    try {
      await retryWhileDbUnavailable(
        () =>
          turnQueueContinuation(this.deps.db, {
            sessionId,
            actor: `system:${this.owner}`,
            notes: [resumeNote(error)],
            executionIds: [],
            reason: RESUME_REASON,
          }),
        { forMs: (TURN_LEASE_SECONDS * 1000) / 2 },
      );
      log.warn({ error }, "turn cut off by a database outage; resuming it");
      return true;
    } catch (err) {
      log.error({ err }, "could not queue the resume of a turn cut off by a database outage; the session waits for the operator");
      return false;
    }
  }
}

// Writes one turn's events as they happen, without a row and a NOTIFY per
// token: consecutive text_delta events are coalesced into one row, flushed
// every flushMs or as soon as any other event arrives (so order is kept:
// text streamed before a tool_use is stored before it), or handed to the
// turn's last statement (takeRest). Invariant: after flush() resolves,
// every event emitted before it is stored and notified.
// Payloads are typed by events/contract.ts.
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import type { SessionEventData, SessionEventType } from "./contract.js";
import { type NewSessionEvent, sessionEventsAppend } from "./session-events.js";

export class EventWriter {
  private pendingText = "";
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private failure: Error | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly sessionId: string,
    private readonly turnId: string | null,
    // A few rows per second per turn (issue 20): each flush is a row, its
    // NOTIFY and a wake-up of every stream of the session.
    private readonly flushMs = 250,
  ) {}

  /** Streams a piece of assistant text (coalesced with its neighbours). */
  text(delta: string): void {
    if (delta === "") return;
    this.pendingText += delta;
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
  }

  /** Any other event: stored after the text before it. */
  emit<T extends Exclude<SessionEventType, "text_delta">>(type: T, data: SessionEventData[T]): Promise<void> {
    const event = { sessionId: this.sessionId, turnId: this.turnId, type, data } as NewSessionEvent;
    return this.enqueue([...this.takeText(), event]);
  }

  flush(): Promise<void> {
    return this.enqueue(this.takeText());
  }

  /**
   * The turn's end: waits until everything already on its way is stored and
   * hands back the text not stored yet, for the caller to store in its own
   * last statement (turns/turn-store.ts turnEnd) instead of one of its own.
   */
  async takeRest(): Promise<NewSessionEvent[]> {
    await this.chain;
    return this.takeText();
  }

  /** The first write that failed, if any (its events are lost; the turn's end still stores the rest). */
  get failed(): Error | undefined {
    return this.failure;
  }

  private takeText(): NewSessionEvent[] {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pendingText === "") return [];
    const text = this.pendingText;
    this.pendingText = "";
    return [{ sessionId: this.sessionId, turnId: this.turnId, type: "text_delta", data: { text } }];
  }

  private enqueue(events: NewSessionEvent[]): Promise<void> {
    const next = this.chain.then(async () => {
      if (this.failure) throw this.failure;
      if (events.length > 0) await sessionEventsAppend(this.db, events);
    });
    // Keep the chain alive after a failure, but remember it for the caller.
    this.chain = next.catch((err: Error) => {
      this.failure ??= err;
    });
    return next;
  }
}

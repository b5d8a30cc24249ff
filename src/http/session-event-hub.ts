// One LISTEN per process for the session event streams. Every open SSE
// stream subscribes here for its session; a NOTIFY on nomos_session_events
// (payload: the session id, sent once per transaction by sessionEventsAppend)
// wakes that session's streams, which then read everything after the last id
// they sent. Invariants:
// - One LISTEN however many browsers are connected, on the process's one
//   LISTEN connection (main.ts; application_name nomos-listener).
// - A wake-up is never lost between a stream's read and its wait: a
//   subscription remembers a wake that arrives while it is reading.
// - After a reconnect of the LISTEN connection (NOTIFYs may have been missed
//   meanwhile) every stream is woken to re-read; the heartbeat re-reads too.
// - The operator-wide stream (routes/operator-events.ts) hears every
//   session's wake-up through onAnySession (null: "any session may have
//   changed", after a reconnect).
import type { Sql } from "../db/connect.js";
import { SESSION_EVENTS_CHANNEL } from "../events/session-events.js";
import type { Logger } from "../log/logger.js";

export type WaitResult = "woken" | "timeout" | "stopped";

export class Subscription {
  private pending = false;
  private release: ((r: WaitResult) => void) | undefined;

  constructor(
    readonly sessionId: string,
    private readonly onClose: (s: Subscription) => void,
  ) {}

  /** Resolves when woken (at once if woken since the last wait), after ms, or when the hub stops. */
  wait(ms: number, signal?: AbortSignal): Promise<WaitResult> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve("woken");
    }
    return new Promise((resolve) => {
      const done = (r: WaitResult) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.release = undefined;
        resolve(r);
      };
      const onAbort = () => done("stopped");
      const timer = setTimeout(() => done("timeout"), ms);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.release = done;
    });
  }

  wake(result: WaitResult = "woken"): void {
    if (this.release) {
      this.pending = false;
      this.release(result);
    } else if (result === "woken") this.pending = true;
  }

  close(): void {
    this.onClose(this);
    this.release?.("stopped");
  }
}

export class SessionEventHub {
  private readonly subs = new Map<string, Set<Subscription>>();
  private readonly anySubs = new Set<(sessionId: string | null) => void>();
  private listening: { unlisten(): Promise<void> } | undefined;
  private starting: Promise<void> | undefined;
  private stopped = false;
  private lastConnectedAt: Date | undefined;

  /** sql: the process's LISTEN connection (main.ts: connect(listenUrl, { max: 1, applicationName: "nomos-listener" })). */
  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
  ) {}

  start(): Promise<void> {
    this.starting ??= (async () => {
      this.listening = await this.sql.listen(
        SESSION_EVENTS_CHANNEL,
        (sessionId) => this.wakeSession(sessionId),
        () => {
          // Called on the first LISTEN and after every reconnect.
          this.lastConnectedAt = new Date();
          this.wakeAll();
        },
      );
      this.log.info({ channel: SESSION_EVENTS_CHANNEL }, "event stream listener connected");
    })();
    return this.starting;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.starting?.catch(() => {});
    for (const set of this.subs.values()) for (const s of set) s.wake("stopped");
    await this.listening?.unlisten().catch(() => {});
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  subscribe(sessionId: string): Subscription {
    const sub = new Subscription(sessionId, (s) => {
      const set = this.subs.get(s.sessionId);
      set?.delete(s);
      if (set?.size === 0) this.subs.delete(s.sessionId);
    });
    let set = this.subs.get(sessionId);
    if (!set) {
      set = new Set();
      this.subs.set(sessionId, set);
    }
    set.add(sub);
    return sub;
  }

  /** Calls back with the session id of every wake-up (null after a reconnect: any); returns the unsubscribe. */
  onAnySession(callback: (sessionId: string | null) => void): () => void {
    this.anySubs.add(callback);
    return () => this.anySubs.delete(callback);
  }

  /** For /healthz: is the LISTEN connection up, and how many streams are open. */
  health() {
    const streams = [...this.subs.values()].reduce((n, s) => n + s.size, 0);
    return { ok: this.listening !== undefined && !this.stopped, streams, connectedAt: this.lastConnectedAt };
  }

  private wakeSession(sessionId: string): void {
    for (const s of this.subs.get(sessionId) ?? []) s.wake();
    for (const cb of this.anySubs) cb(sessionId);
  }

  private wakeAll(): void {
    for (const set of this.subs.values()) for (const s of set) s.wake();
    for (const cb of this.anySubs) cb(null);
  }
}

// The event loop's ear: LISTENs on nomos_execution_finished and hands each
// execution id to the dispatcher. It rides the process's one LISTEN
// connection (main.ts: connect(listenUrl, { max: 1, applicationName:
// LISTEN_APPLICATION_NAME }), so the patched driver and the capped backoff
// of db/connect.ts apply), which every other channel shares too: the
// runner's ready and cancel, Turns' Stop, the session event streams.
// postgres.js re-establishes a dropped LISTEN connection by itself and calls
// onlisten again; every (re)connect triggers an immediate sweep, because
// NOTIFYs sent while we were away are gone. Invariant: state() counts the
// LISTENs that took effect, for /healthz; stop() unlistens once and leaves
// the shared connection to its owner.
import type { Sql } from "../db/connect.js";
import type { Logger } from "../log/logger.js";

export const EXECUTION_FINISHED_CHANNEL = "nomos_execution_finished";

/** The application_name of the process's one LISTEN connection (DESIGN.md; tests find it by this name). */
export const LISTEN_APPLICATION_NAME = "nomos-listener";

export type ListenerState = {
  ok: boolean;
  connected: boolean;
  connectedSince: string | null;
  connects: number;
  lastDisconnectAt: string | null;
};

export interface ListenerOptions {
  /** The process's LISTEN connection (postgres.js opens one connection for all its listens). */
  sql: Sql;
  log: Logger;
  onFinished(executionId: string): void;
  /** Called on the first LISTEN and after every reconnect. */
  onConnected(): void;
}

export class ExecutionFinishedListener {
  private unlisten: (() => Promise<void>) | undefined;
  private connected = false;
  private connectedSince: Date | null = null;
  private lastDisconnectAt: Date | null = null;
  private connects = 0;
  private stopping: Promise<void> | undefined;

  constructor(private readonly options: ListenerOptions) {}

  async start(): Promise<void> {
    const log = this.options.log;
    const listening = await this.options.sql.listen(
      EXECUTION_FINISHED_CHANNEL,
      (payload) => this.options.onFinished(payload),
      () => {
        this.connected = true;
        this.connectedSince = new Date();
        this.connects += 1;
        if (this.connects > 1) log.info({ connects: this.connects }, "LISTEN connection re-established");
        this.options.onConnected();
      },
    );
    this.unlisten = listening.unlisten;
  }

  state(): ListenerState {
    return {
      ok: this.connected,
      connected: this.connected,
      connectedSince: this.connectedSince?.toISOString() ?? null,
      connects: this.connects,
      lastDisconnectAt: this.lastDisconnectAt?.toISOString() ?? null,
    };
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.connected) this.lastDisconnectAt = new Date();
      this.connected = false;
      await this.unlisten?.().catch(() => {});
    })();
    return this.stopping;
  }
}

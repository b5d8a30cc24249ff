// The event loop's ear: a dedicated PostgreSQL connection (application_name
// nomos-listener) that LISTENs on nomos_execution_finished and hands each
// execution id to the dispatcher. postgres.js re-establishes a dropped
// LISTEN connection by itself, with backoff, and calls onlisten again; every
// (re)connect triggers an immediate sweep, because NOTIFYs sent while we
// were away are gone. Invariant: state() tells the truth about the
// connection, for /healthz.
import postgres from "postgres";
import type { Logger } from "../log/logger.js";

export const EXECUTION_FINISHED_CHANNEL = "nomos_execution_finished";

export type ListenerState = {
  ok: boolean;
  connected: boolean;
  connectedSince: string | null;
  connects: number;
  lastDisconnectAt: string | null;
};

export interface ListenerOptions {
  url: string;
  log: Logger;
  onFinished(executionId: string): void;
  /** Called on the first LISTEN and after every reconnect. */
  onConnected(): void;
}

export class ExecutionFinishedListener {
  private sql: postgres.Sql | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private connected = false;
  private connectedSince: Date | null = null;
  private lastDisconnectAt: Date | null = null;
  private connects = 0;
  private stopping: Promise<void> | undefined;

  constructor(private readonly options: ListenerOptions) {}

  async start(): Promise<void> {
    const log = this.options.log;
    this.sql = postgres(this.options.url, {
      max: 1,
      connection: { application_name: "nomos-listener" },
      onnotice: () => {},
      onclose: () => {
        if (this.connected) log.warn("LISTEN connection lost; reconnecting");
        this.connected = false;
        this.lastDisconnectAt = new Date();
      },
    });
    const listening = await this.sql.listen(
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
      this.connected = false;
      await this.unlisten?.().catch(() => {});
      await this.sql?.end({ timeout: 5 });
    })();
    return this.stopping;
  }
}

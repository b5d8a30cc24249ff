// Starts the operator's side of a process: the session event hub (on the
// process's LISTEN connection) and the HTTP server for the API and the page.
// main.ts builds the app from the hub (createApp's deps stay in main.ts, the
// composition root). Invariant: stop() is idempotent and first ends the
// event streams, so the server's close() is not kept waiting by them, then
// closes the server.
import { serve } from "@hono/node-server";
import type { Sql } from "../db/connect.js";
import type { Logger } from "../log/logger.js";
import { SessionEventHub } from "./session-event-hub.js";

export interface StartedHttp {
  /** The port listened on (PORT=0 picks one). */
  port: number;
  stop(): Promise<void>;
}

export async function startHttp(p: {
  log: Logger;
  host: string;
  port: number;
  /** The process's LISTEN connection (the event streams' wake-ups). */
  listen: Sql;
  app: (events: SessionEventHub) => { fetch: Parameters<typeof serve>[0]["fetch"] };
}): Promise<StartedHttp> {
  const events = new SessionEventHub(p.listen, p.log);
  await events.start();
  const app = p.app(events);
  let server: ReturnType<typeof serve>;
  try {
    server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
      const s = serve({ fetch: app.fetch, hostname: p.host, port: p.port }, () => resolve(s));
      s.once("error", reject);
    });
  } catch (err) {
    await events.stop();
    throw err;
  }
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : p.port;
  let stopping: Promise<void> | undefined;
  return {
    port,
    stop() {
      stopping ??= (async () => {
        try {
          await events.stop();
        } finally {
          await new Promise<void>((resolve) => {
            server.close(() => resolve());
            // Event streams never end on their own: cut idle keep-alives so close() returns.
            (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
          });
        }
      })();
      return stopping;
    },
  };
}

// The composition root: the only module that reads the environment, builds
// the services and wires them together. Start-up order: configuration,
// logger, database (embedded when DATABASE_URL is unset), migrations, HTTP.
// Shutdown (SIGINT/SIGTERM) runs in reverse: stop taking requests, let work
// in flight finish, close the pool, stop the embedded database.
import { serve } from "@hono/node-server";
import { ConfigError, loadConfig } from "./config/env.js";
import { migrate } from "./db/migrate.js";
import { openDatabase } from "./db/open.js";
import { operatorEnsureFirst } from "./auth/operators.js";
import { connect } from "./db/connect.js";
import { portsNotWired } from "./http/api-deps.js";
import { createApp } from "./http/app.js";
import { SessionEventHub } from "./http/session-event-hub.js";
import { createLogger, type Logger } from "./log/logger.js";

type Stop = () => Promise<void>;

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger({ level: config.log.level, format: config.log.format });
  const stops: Stop[] = [];
  const shutdown = shutdownOnce(log, stops);
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  // A crash still drains and, above all, stops the embedded database, which
  // would otherwise outlive us and block the next start.
  process.on("uncaughtException", (err) => {
    log.fatal({ err }, "uncaught exception");
    void shutdown("uncaught exception", 1);
  });
  process.on("unhandledRejection", (err) => {
    log.fatal({ err }, "unhandled promise rejection");
    void shutdown("unhandled rejection", 1);
  });

  try {
    const opened = await openDatabase(config, log);
    stops.push(() => opened.close());
    const { db } = opened;
    const migrated = await migrate(db.sql);
    log.info(
      { applied: migrated.applied.map((m) => m.file), alreadyApplied: migrated.alreadyApplied, source: opened.source },
      "database ready",
    );

    // ── issue 6: operators, the event stream's LISTEN, the API and the page ──
    const firstOperator = await operatorEnsureFirst(db.kysely, config.admin);
    if (firstOperator) log.info({ username: firstOperator.username }, "first operator created from NOMOS_ADMIN_USER");
    const eventsDb = connect(opened.url, { max: 1, applicationName: "nomos-events" });
    stops.push(() => eventsDb.close());
    const events = new SessionEventHub(eventsDb.sql, log);
    await events.start();
    // Replaced by the integrator with Turns/approvalDecide/assentWindowRevoke and executionCancel.
    const notWired = portsNotWired("the agent");
    const notices = config.model.apiKey
      ? []
      : ["No model key is set: the agent cannot answer. Set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a proxy), then restart Nomos."];

    const app = createApp({
      log,
      health: {
        database: async () => {
          const started = performance.now();
          await db.sql`SELECT 1`;
          return { ok: true, latencyMs: Math.round((performance.now() - started) * 10) / 10 };
        },
        events: () => events.health(),
      },
      api: { db: db.kysely, agent: notWired, executions: notWired, events, apiToken: config.apiToken, notices },
    });
    const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
      const s = serve({ fetch: app.fetch, hostname: config.http.host, port: config.http.port }, () => resolve(s));
      s.once("error", reject);
    });
    stops.push(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          // Event streams never end on their own: cut idle keep-alives so close() returns.
          (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
        }),
    );
    // Stops run in reverse: this one first, so open event streams end and
    // the server's close() is not kept waiting by them.
    stops.push(() => events.stop());
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : config.http.port;
    log.info({ url: `http://${config.http.host}:${port}` }, "Nomos is listening");
  } catch (err) {
    log.fatal({ err }, `start-up failed: ${(err as Error).message}`);
    await shutdown("start-up failure", 1);
  }
}

function shutdownOnce(log: Logger, stops: Stop[]) {
  let started = false;
  return async (reason: string, code = 0): Promise<void> => {
    if (started) return;
    started = true;
    log.info({ reason }, "shutting down");
    for (const stop of [...stops].reverse()) {
      try {
        await stop();
      } catch (err) {
        log.error({ err }, "error while shutting down");
        code = code || 1;
      }
    }
    log.info("stopped");
    process.exit(code);
  };
}

await main();

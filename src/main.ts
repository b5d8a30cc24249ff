// The composition root: the only module that reads the environment, builds
// the services and wires them together. Start-up order: configuration,
// logger, database (embedded when DATABASE_URL is unset), migrations, HTTP.
// Shutdown (SIGINT/SIGTERM) runs in reverse: stop taking requests, let work
// in flight finish, close the pool, stop the embedded database.
import { serve } from "@hono/node-server";
import { ConfigError, loadConfig } from "./config/env.js";
import { migrate } from "./db/migrate.js";
import { openDatabase } from "./db/open.js";
import { createApp } from "./http/app.js";
import { createLogger, type Logger } from "./log/logger.js";
import { ExecutionRunner } from "./executions/runner.js";
import { SshPool } from "./ssh/connection-pool.js";
import { sshHostKeyRefusalRecord } from "./ssh/host-key-refusals.js";
import { makeRedactor } from "./ssh/redact.js";
import { TargetRegistry } from "./targets/registry.js";
import { loadTargetsFile } from "./targets/targets-file.js";

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

    // ─── executions over SSH (issue 3): targets, SSH pool, runner ─────────
    // A bad targets file throws here and stops start-up, naming entry and field.
    const fileTargets = config.targetsFile ? await loadTargetsFile(config.targetsFile) : [];
    const registry = new TargetRegistry({ db: db.kysely, fileTargets });
    await registry.sync();
    const redact = makeRedactor(config.executions.secrets);
    const sshPool = new SshPool({
      log: log.child({ component: "ssh" }),
      connectTimeoutMs: config.executions.connectTimeoutS * 1000,
      onHostKeyRefused: (refusal) => sshHostKeyRefusalRecord(db.kysely, "system:runner", refusal),
    });
    stops.push(() => sshPool.stop());
    const runner = new ExecutionRunner({
      db,
      registry,
      pool: sshPool,
      log: log.child({ component: "runner" }),
      redact,
      sweepEveryMs: config.sweepSeconds * 1000,
      outputCapBytes: config.executions.outputCapBytes,
      maxTimeoutS: config.executions.maxTimeoutS,
    });
    await runner.start();
    stops.push(() => runner.stop());
    log.info({ targets: fileTargets.map((t) => t.name) }, "execution runner started");
    // ─── end of issue 3 wiring ─────────────────────────────────────────────

    const app = createApp({
      log,
      health: {
        database: async () => {
          const started = performance.now();
          await db.sql`SELECT 1`;
          return { ok: true, latencyMs: Math.round((performance.now() - started) * 10) / 10 };
        },
        executionRunner: () => runner.health(),
      },
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

// The composition root: the only module that builds the service's parts and
// wires them together; it reads the environment once, through
// config/env.ts's loadConfig.
//
// Start-up order: configuration, logger, database (embedded when
// DATABASE_URL is unset), migrations, first operator, then the parts of the
// event loop from the bottom up, each started by the module of its concept
// and each returning its (idempotent) stop: startExecutions (targets, SSH
// pool, runner), startAgent (turns, approvals; it reports decided approvals
// to the dispatcher, which queues them until startEventLoop starts it with
// the agent's turns), startEventLoop (dispatcher, sweep, listener),
// startNotifications (the notifier: outbox -> ntfy, webhook, Web Push), and last
// startHttp (event streams, the API and the page). One LISTEN connection
// (application_name nomos-listener) serves every channel of the process.
// Shutdown (SIGINT/SIGTERM) runs the same list in reverse: stop taking
// requests, end event streams, stop listening, let turns and commands in
// flight finish or abort, close the pools, stop the embedded database.

import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { startAgent } from "./agent/start-agent.js";
import { approvalsSettledNotes } from "./approvals/settled-notes.js";
import { operatorCount, operatorEnsureFirst } from "./auth/operators.js";
import { setupCodeNew } from "./auth/setup-code.js";
import { ConfigError, loadConfig } from "./config/env.js";
import { carryPendingResults } from "./continuation/carry.js";
import { ContinuationDispatcher } from "./continuation/dispatcher.js";
import { startEventLoop } from "./continuation/event-loop.js";
import { ListenCheckError, listenSelfCheck } from "./continuation/listen-check.js";
import { LISTEN_APPLICATION_NAME } from "./continuation/listener.js";
import { connect } from "./db/connect.js";
import { EmbeddedPostgresError } from "./db/embedded.js";
import { openDatabase } from "./db/open.js";
import { migrateAsOwner, rolePowers } from "./db/service-role.js";
import { DEMO_NOTICE } from "./demo/demo-notice.js";
import { startExecutions } from "./executions/start-executions.js";
import { createApp } from "./http/app.js";
import { publicOriginFrom } from "./http/public-origin.js";
import { startHttp } from "./http/start-http.js";
import { createLogger } from "./log/logger.js";
import { startNotifications } from "./notifications/start-notifications.js";
import { type Stop, shutdownOnce } from "./shutdown.js";
import { SnapshotRetention } from "./snapshots/retention.js";

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
  /** This process, as recorded in claims and leases (runner_owner, claimed_by, turns.owner). */
  const owner = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;

  try {
    const opened = await openDatabase(config, log);
    stops.push(() => opened.close());
    const { db } = opened;
    const migrated = await migrateAsOwner({ serviceSql: db.sql, ownerUrl: config.databaseOwnerUrl, log });
    log.info(
      { applied: migrated.applied.map((m) => m.file), alreadyApplied: migrated.alreadyApplied, source: opened.source },
      "database ready",
    );
    const powers = await rolePowers(db.sql);
    if (powers.superuser || powers.ownsAudit) {
      log.warn(
        { role: powers.role, superuser: powers.superuser },
        "the service's database role could rewrite the audit trail (it owns audit.events or is a superuser); " +
          "run the service as a role in nomos_service and migrations with NOMOS_DATABASE_OWNER_URL (docs/reliability.md)",
      );
    }
    // LISTEN on a direct connection when DATABASE_URL goes through a
    // transaction pooler; Nomos refuses to start deaf (listen-check.ts).
    const listenUrl = config.databaseListenUrl ?? opened.url;
    // One LISTEN connection serves every channel of this process.
    const listenDb = connect(listenUrl, { max: 1, applicationName: LISTEN_APPLICATION_NAME });
    stops.push(() => listenDb.close());
    await listenSelfCheck({ notify: db.sql, listen: listenDb.sql });
    const firstOperator = await operatorEnsureFirst(db.kysely, config.admin);
    if (firstOperator) log.info({ username: firstOperator.username }, "first operator created from NOMOS_ADMIN_USER");
    // No operator yet: the page's first-operator form needs this code, which
    // only this log shows (issue 14: a web page cannot claim the instance).
    const setupCode = (await operatorCount(db.kysely)) === 0 ? setupCodeNew() : undefined;
    const publicOrigin = publicOriginFrom({
      publicUrl: config.publicUrl,
      host: config.http.host,
      port: config.http.port,
      trustProxy: config.trustProxy,
    });

    // ── executions over SSH: targets, the SSH pool, the runner ──────────────
    const executions = await startExecutions({ config, db, listen: listenDb.sql, log, owner });
    stops.push(executions.stop);
    // Nomos's own guest snapshots: rollbacks that finished, and retention (issue 17).
    const snapshotRetention = new SnapshotRetention({
      db: db.kysely,
      executions: executions.port,
      log: log.child({ component: "snapshots" }),
      keepDays: config.snapshots.keepDays,
      keepPerGuest: config.snapshots.keepPerGuest,
      everyMs: config.sweepSeconds * 1000,
    });
    snapshotRetention.start();
    stops.push(() => snapshotRetention.stop());

    // ── the agent: turns, tools, approvals, the assent window ───────────────
    // Button decisions are events too: once none is pending, the agent hears
    // them as a continuation (with any results that waited). The dispatcher
    // queues them until the event loop starts it, below.
    const dispatcher = new ContinuationDispatcher({ db, log, owner, maxContinuations: config.maxContinuations });
    const agent = await startAgent({
      config,
      db: db.kysely,
      log,
      owner,
      executions: executions.port,
      onApprovalsSettled: async (sessionId) => dispatcher.poke(sessionId, await approvalsSettledNotes(db.kysely, { sessionId })),
      carryNotes: carryPendingResults({ db, owner }),
      listen: (channel, onPayload) => listenDb.sql.listen(channel, onPayload),
    });
    stops.push(agent.stop);

    // ── the event loop: NOTIFY -> listener -> claim -> continuation turn ────
    const eventLoop = await startEventLoop({
      db,
      listen: listenDb.sql,
      log,
      owner,
      dispatcher,
      startTurn: ({ sessionId, notes, executionIds, reason }) => agent.turns.chatWith(sessionId, notes, { executionIds, reason }),
      turnQueued: ({ sessionId }) => agent.turns.queued(sessionId),
      sweepSeconds: config.sweepSeconds,
    });
    stops.push(eventLoop.stop);

    // ── notifications: outbox -> NOTIFY -> notifier -> ntfy, webhook, Web Push
    const notifications = await startNotifications({
      config,
      db: db.kysely,
      listen: listenDb.sql,
      log,
      owner,
      publicOrigin: () => publicOrigin.url,
    });
    stops.push(notifications.stop);

    // ── the operator's side: event streams, the API and the page ────────────
    const notices = [
      ...(config.demo ? [DEMO_NOTICE] : []),
      ...(config.model.apiKey || config.model.authToken
        ? []
        : [
            "No model key is set: the agent cannot answer. Set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a proxy), then restart Nomos.",
          ]),
    ];
    const http = await startHttp({
      log,
      host: config.http.host,
      port: config.http.port,
      listen: listenDb.sql,
      app: (events) =>
        createApp({
          log,
          publicOrigin,
          health: {
            database: async () => {
              const started = performance.now();
              await db.sql`SELECT 1`;
              return { ok: true, latencyMs: Math.round((performance.now() - started) * 10) / 10 };
            },
            listener: () => eventLoop.listenerState(),
            sweep: () => eventLoop.sweepState(),
            executionRunner: () => executions.runner.health(),
            notifier: () => ({ ok: true, ...notifications.notifier.state() }),
            events: () => events.health(),
          },
          api: {
            db: db.kysely,
            turns: agent.turns,
            approvals: agent.approvalDeps,
            events,
            apiToken: config.apiToken,
            assentMinutes: config.assentMinutes,
            approvalMinutes: config.approvalMinutes,
            notices,
            setupCode,
          },
        }),
    });
    stops.push(http.stop);
    const port = http.port;
    // PORT=0 picks a port: the default public URL names the one we got.
    if (!config.publicUrl && config.http.port === 0) publicOrigin.url.port = String(port);
    log.info({ url: `http://${config.http.host}:${port}`, publicUrl: publicOrigin.url.origin, owner }, "Nomos is listening");
    if (setupCode) {
      log.warn(
        { setupCode, url: publicOrigin.url.origin },
        `no operator yet: open ${publicOrigin.url.origin} and enter the setup code ${setupCode} (or run npm run create-operator)`,
      );
    }
  } catch (err) {
    // A refusal that already says what and how to fix it needs no stack.
    if (err instanceof EmbeddedPostgresError || err instanceof ListenCheckError) log.fatal(`start-up failed: ${err.message}`);
    else log.fatal({ err }, `start-up failed: ${(err as Error).message}`);
    await shutdown("start-up failure", 1);
  }
}

await main();

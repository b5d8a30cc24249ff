// The HTTP application: middleware, routes, error handling. It receives what
// it needs (logger, health checks, and the API's deps in api-deps.ts: the
// database, Turns, what deciding an approval needs) and imports no pool or
// global; main.ts builds it, tests call app.request(...)
// in-process. Without `api` only /healthz is served (the Foundation's tests).
//
// Order of the guards: a Host that is not ours is refused (421) before any
// route runs (public-origin.ts); then for /api: body limit, cross-site
// refusal (state-changing requests), the public auth routes, requireOperator
// for the rest, and each route's requireRole (auth/roles.ts).
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Logger } from "../log/logger.js";
import type { ApiDeps } from "./api-deps.js";
import { type AuthEnv, requireOperator } from "./auth-middleware.js";
import { refuseCrossSite } from "./csrf.js";
import { HttpError } from "./http-error.js";
import { onError } from "./on-error.js";
import { type PublicOrigin, publicOriginFrom, refuseForeignHost } from "./public-origin.js";
import { requestLog } from "./request-log.js";
import { approvalRoutes } from "./routes/approvals.js";
import { authRoutes } from "./routes/auth.js";
import { eventRoutes } from "./routes/events.js";
import { executionRoutes } from "./routes/executions.js";
import { type HealthChecks, healthRoutes } from "./routes/health.js";
import { notificationRoutes } from "./routes/notifications.js";
import { operatorEventRoutes } from "./routes/operator-events.js";
import { operatorRoutes } from "./routes/operators.js";
import { serviceWorkerRoutes } from "./routes/service-worker.js";
import { sessionExportRoutes } from "./routes/session-export.js";
import { sessionRoutes } from "./routes/sessions.js";
import { snapshotRoutes } from "./routes/snapshots.js";
import { webRoutes } from "./routes/web.js";

export interface AppDeps {
  log: Logger;
  health: HealthChecks;
  /** Largest request body accepted, in bytes. */
  maxBodyBytes?: number;
  /** Where operators reach us; by default http://127.0.0.1:8080 (loopback names accepted). */
  publicOrigin?: PublicOrigin;
  /** The API and the page; absent, only /healthz is served. */
  api?: Omit<ApiDeps, "log" | "publicOrigin">;
}

export function createApp(deps: AppDeps) {
  const log = deps.log.child({ component: "http" });
  const maxBodyBytes = deps.maxBodyBytes ?? 1024 * 1024;
  const publicOrigin = deps.publicOrigin ?? publicOriginFrom({ host: "127.0.0.1", port: 8080 });
  const app = new Hono<AuthEnv>();
  app.use(requestLog(log));
  app.use(refuseForeignHost(publicOrigin));
  app.use(
    "/api/*",
    bodyLimit({
      maxSize: maxBodyBytes,
      onError: () => {
        throw new HttpError("payload_too_large", `request body is larger than ${maxBodyBytes} bytes`);
      },
    }),
  );
  app.route("/", healthRoutes(deps.health));
  if (deps.api) {
    const api: ApiDeps = { ...deps.api, log, publicOrigin };
    app.use("/api/*", refuseCrossSite(publicOrigin));
    app.route("/", authRoutes(api));
    app.use("/api/*", requireOperator(api));
    app.route("/", sessionRoutes(api));
    app.route("/", snapshotRoutes(api));
    app.route("/", eventRoutes(api));
    app.route("/", operatorEventRoutes(api));
    app.route("/", sessionExportRoutes(api));
    app.route("/", approvalRoutes(api));
    app.route("/", executionRoutes(api));
    app.route("/", notificationRoutes(api));
    app.route("/", operatorRoutes(api));
    app.route("/", serviceWorkerRoutes({ log }));
    app.route("/", webRoutes({ log }));
  }
  app.notFound((c) => c.json({ error: { code: "not_found", message: `no route for ${c.req.method} ${c.req.path}` } }, 404));
  app.onError(onError(log));
  return app;
}

export type App = ReturnType<typeof createApp>;

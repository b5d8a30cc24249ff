// The HTTP application: middleware, routes, error handling. It receives what
// it needs (logger, health checks, and the API's ports in api-deps.ts) and
// imports no pool or global; main.ts builds it, tests call app.request(...)
// in-process. Without `api` only /healthz is served (the Foundation's tests).
//
// Order of the /api guards: body limit, cross-site refusal (state-changing
// requests), then the public auth routes, then requireOperator for the rest.
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { refuseCrossSite } from "../auth/csrf.js";
import { type AuthEnv, requireOperator } from "../auth/middleware.js";
import type { Logger } from "../log/logger.js";
import type { ApiDeps } from "./api-deps.js";
import { HttpError } from "./http-error.js";
import { onError } from "./on-error.js";
import { requestLog } from "./request-log.js";
import { approvalRoutes } from "./routes/approvals.js";
import { authRoutes } from "./routes/auth.js";
import { eventRoutes } from "./routes/events.js";
import { executionRoutes } from "./routes/executions.js";
import { type HealthChecks, healthRoutes } from "./routes/health.js";
import { sessionRoutes } from "./routes/sessions.js";
import { webRoutes } from "./routes/web.js";

export interface AppDeps {
  log: Logger;
  health: HealthChecks;
  /** Largest request body accepted, in bytes. */
  maxBodyBytes?: number;
  /** The API and the page; absent, only /healthz is served. */
  api?: Omit<ApiDeps, "log">;
}

export function createApp(deps: AppDeps) {
  const log = deps.log.child({ component: "http" });
  const maxBodyBytes = deps.maxBodyBytes ?? 1024 * 1024;
  const app = new Hono<AuthEnv>();
  app.use(requestLog(log));
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
    const api: ApiDeps = { ...deps.api, log };
    app.use("/api/*", refuseCrossSite());
    app.route("/", authRoutes(api));
    app.use("/api/*", requireOperator(api));
    app.route("/", sessionRoutes(api));
    app.route("/", eventRoutes(api));
    app.route("/", approvalRoutes(api));
    app.route("/", executionRoutes(api));
    app.route("/", webRoutes({ log }));
  }
  app.notFound((c) => c.json({ error: { code: "not_found", message: `no route for ${c.req.method} ${c.req.path}` } }, 404));
  app.onError(onError(log));
  return app;
}

export type App = ReturnType<typeof createApp>;

// The HTTP application: middleware, routes, error handling. It receives what
// it needs (logger, health checks, and later the services) and imports no
// pool or global; main.ts builds it, tests call app.request(...) in-process.
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Logger } from "../log/logger.js";
import { HttpError } from "./http-error.js";
import { onError } from "./on-error.js";
import { requestLog } from "./request-log.js";
import { type HealthChecks, healthRoutes } from "./routes/health.js";

export interface AppDeps {
  log: Logger;
  health: HealthChecks;
  /** Largest request body accepted, in bytes. */
  maxBodyBytes?: number;
}

export function createApp(deps: AppDeps) {
  const log = deps.log.child({ component: "http" });
  const maxBodyBytes = deps.maxBodyBytes ?? 1024 * 1024;
  const app = new Hono();
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
  app.notFound((c) =>
    c.json({ error: { code: "not_found", message: `no route for ${c.req.method} ${c.req.path}` } }, 404),
  );
  app.onError(onError(log));
  return app;
}

export type App = ReturnType<typeof createApp>;

// Request logging: one line per request, after it is answered, with method,
// path, status and duration. The event stream's long-lived requests log when
// they start too, so an open stream is visible while it lasts.
import type { MiddlewareHandler } from "hono";
import type { Logger } from "../log/logger.js";

export function requestLog(log: Logger): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const ms = Math.round((performance.now() - started) * 10) / 10;
    const line = { method: c.req.method, path: c.req.path, status: c.res.status, ms };
    if (c.res.status >= 500) log.error(line, "request");
    else log.info(line, "request");
  };
}

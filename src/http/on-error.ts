// The one error handler. HttpError answers as itself; a DomainError (the
// domain's refusals, errors/domain-error.ts) answers its kind as the
// status of the same name, with its message and field; hono's own
// HTTPException (malformed JSON, body limit) keeps its status with a JSON
// body; a ZodError that escaped a handler is a 400 naming the field;
// anything else is logged with its stack and answered with a bare 500, so
// internals never reach the client.
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { ZodError } from "zod";
import { DomainError } from "../errors/domain-error.js";
import type { Logger } from "../log/logger.js";
import { HttpError } from "./http-error.js";
import { zodIssueMessage } from "./validate.js";

export function onError(log: Logger) {
  return (err: Error, c: Context) => {
    if (err instanceof HttpError) return c.json(err.toJSON(), err.status);
    if (err instanceof DomainError) {
      const e = new HttpError(err.kind, err.message, err.field, { cause: err });
      return c.json(e.toJSON(), e.status);
    }
    if (err instanceof ZodError) {
      const first = err.issues[0];
      const e = new HttpError("bad_request", first ? zodIssueMessage(first) : "invalid input", first?.path.join("."));
      return c.json(e.toJSON(), 400);
    }
    if (err instanceof HTTPException) {
      const status = err.status;
      const code = status === 413 ? "payload_too_large" : status === 401 ? "unauthorized" : "bad_request";
      return c.json({ error: { code, message: err.message || "bad request" } }, status);
    }
    log.error({ err, method: c.req.method, path: c.req.path }, "unhandled error in request");
    return c.json({ error: { code: "internal", message: "internal error; the server log has details" } }, 500);
  };
}

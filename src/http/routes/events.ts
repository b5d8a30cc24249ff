// GET /api/sessions/:id/events: the session's event stream (SSE), every
// event of every turn, operator and continuation alike. Each SSE id is the
// session_events row id, so a reconnect with Last-Event-ID (or ?after= for
// an EventSource's first connect) resumes exactly after the last event the
// browser got: no gap, no duplicate, whichever process serves it and even in
// the middle of a turn. Without either, the stream starts after the
// session's newest event.
//
// The loop: read everything after `after` (in pages), send it, then wait for
// the hub to say the session has more (a NOTIFY, from any process) or for
// the heartbeat interval; a heartbeat comment keeps proxies from closing an
// idle stream and also re-reads, so a missed NOTIFY costs at most one
// interval, never an event. Each message's data is
// {id, type, turnId, createdAt, data}.
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { z } from "zod";
import { sessionEventsAfter, sessionEventsLastId } from "../../events/session-events.js";
import { sessionExists } from "../../sessions/sessions.js";
import type { ApiDeps } from "../api-deps.js";
import type { AuthEnv } from "../auth-middleware.js";
import { HttpError, notFound } from "../http-error.js";
import { validate } from "../validate.js";
import { idParam } from "./ids.js";

const PAGE = 500;
/** An event id is a bigint identity: digits, at most 2^63 - 1 (a larger one reached PostgreSQL as a raw error). */
const INT8_MAX = 9_223_372_036_854_775_807n;
const isEventId = (v: string) => /^\d{1,19}$/.test(v) && BigInt(v) <= INT8_MAX;
const EVENT_ID_MESSAGE = "must be an event id (digits, at most 9223372036854775807)";

export function eventRoutes(deps: ApiDeps) {
  const heartbeatMs = deps.heartbeatMs ?? 15_000;
  return new Hono<AuthEnv>().get(
    "/api/sessions/:id/events",
    validate("param", idParam),
    validate("query", z.object({ after: z.string().refine(isEventId, EVENT_ID_MESSAGE).optional() })),
    async (c) => {
      const { id: sessionId } = c.req.valid("param");
      const header = c.req.header("last-event-id");
      if (header !== undefined && !isEventId(header)) {
        throw new HttpError("bad_request", `header.last-event-id: ${EVENT_ID_MESSAGE}`, "header.last-event-id");
      }
      if (!(await sessionExists(deps.db, { sessionId }))) throw notFound("session", sessionId);
      if (deps.events.isStopped) throw new HttpError("unavailable", "the server is shutting down; reconnect shortly");
      // Subscribe before the first read: a NOTIFY in between is remembered.
      const sub = deps.events.subscribe(sessionId);
      let after = header ?? c.req.valid("query").after ?? (await sessionEventsLastId(deps.db, { sessionId }));
      const log = deps.log.child({ sessionId });
      log.info({ after }, "event stream opened");
      c.header("X-Accel-Buffering", "no");
      c.header("Cache-Control", "no-cache, no-transform");
      return streamSSE(
        c,
        async (stream) => {
          const stop = new AbortController();
          stream.onAbort(() => stop.abort());
          try {
            await stream.writeSSE({ event: "ready", data: JSON.stringify({ after }), retry: 2000 });
            while (!stop.signal.aborted) {
              const events = await sessionEventsAfter(deps.db, { sessionId, afterId: after, limit: PAGE });
              for (const e of events) {
                if (stop.signal.aborted) break;
                await stream.writeSSE({
                  id: e.id,
                  event: e.type,
                  data: JSON.stringify({ id: e.id, type: e.type, turnId: e.turnId, createdAt: e.createdAt, data: e.data }),
                });
                after = e.id;
              }
              if (events.length === PAGE) continue;
              const woke = await sub.wait(heartbeatMs, stop.signal);
              if (woke === "stopped") break;
              if (woke === "timeout") await stream.write(": heartbeat\n\n");
            }
          } finally {
            sub.close();
            log.info({ after }, "event stream closed");
          }
        },
        async (err) => {
          log.error({ err }, "event stream failed");
        },
      );
    },
  );
}

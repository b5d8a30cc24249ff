// GET /api/sessions/:id/events: the session's event stream (SSE), every
// event of every turn, operator and continuation alike. Frames, ids and
// where a stream starts are session-event-frames.ts's: a reconnect resumes
// exactly after the last event the browser got, no gap, no duplicate,
// whichever process serves it and even in the middle of a turn.
//
// The loop: read everything after `after` (in pages), send it, then wait for
// the hub to say the session has more (a NOTIFY, from any process) or for
// the heartbeat interval; a heartbeat comment keeps proxies from closing an
// idle stream and also re-reads, so a missed NOTIFY costs at most one
// interval, never an event. The page itself uses GET /api/events?session=,
// which carries the same frames and the session list's states in one
// stream (operator-events.ts).
import { Hono } from "hono";
import { z } from "zod";
import { sessionEventsLastId } from "../../events/session-events.js";
import { sessionExists } from "../../sessions/sessions.js";
import type { ApiDeps } from "../api-deps.js";
import type { AuthEnv } from "../auth-middleware.js";
import { HttpError, notFound } from "../http-error.js";
import { afterQuery, resumeAfter, sendSessionEventsAfter } from "../session-event-frames.js";
import { sseResponse } from "../sse-response.js";
import { validate } from "../validate.js";
import { idParam } from "./ids.js";

export function eventRoutes(deps: ApiDeps) {
  const heartbeatMs = deps.heartbeatMs ?? 15_000;
  return new Hono<AuthEnv>().get(
    "/api/sessions/:id/events",
    validate("param", idParam),
    validate("query", z.object({ after: afterQuery })),
    async (c) => {
      const { id: sessionId } = c.req.valid("param");
      const resume = resumeAfter(c, c.req.valid("query").after);
      if (!(await sessionExists(deps.db, { sessionId }))) throw notFound("session", sessionId);
      if (deps.events.isStopped) throw new HttpError("unavailable", "the server is shutting down; reconnect shortly");
      // Subscribe before the first read: a NOTIFY in between is remembered.
      const sub = deps.events.subscribe(sessionId);
      let after = resume ?? (await sessionEventsLastId(deps.db, { sessionId }));
      const log = deps.log.child({ sessionId });
      log.info({ after }, "event stream opened");
      return sseResponse(c, { log, failed: "event stream failed" }, async (stream, signal) => {
        try {
          await stream.writeSSE({ event: "ready", data: JSON.stringify({ after }), retry: 2000 });
          while (!signal.aborted) {
            after = await sendSessionEventsAfter(stream, deps.db, { sessionId, after, signal });
            const woke = await sub.wait(heartbeatMs, signal);
            if (woke === "stopped") break;
            if (woke === "timeout") await stream.write(": heartbeat\n\n");
          }
        } finally {
          sub.close();
          log.info({ after }, "event stream closed");
        }
      });
    },
  );
}

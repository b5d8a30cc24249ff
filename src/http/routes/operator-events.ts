// GET /api/events: the operator-wide stream (SSE), so the session list
// follows every session live without polling. Each message is
// `session_state` {sessionId, state, title, updatedAt, pendingApprovals}
// (events/contract.ts's OperatorEventData), sent when a session's state,
// title or pending count may have changed.
//
// With ?session=<id> (and ?after= or Last-Event-ID, as on the session's own
// stream) the same stream also carries that session's events, framed as
// GET /api/sessions/:id/events frames them (session-event-frames.ts). The
// page opens only this one stream per tab: browsers allow six HTTP/1.1
// connections per origin, and two streams per tab left a fourth tab waiting.
//
// How: the hub (session-event-hub.ts) hears the NOTIFY every session event
// sends; the sessions it names are re-read with sessions/session-state.ts,
// and those whose state differs from what this stream last sent are sent.
// Nothing is stored: after `ready` (and after any reconnect) the page reads
// GET /api/sessions once, then follows this stream. A LISTEN reconnect
// (NOTIFYs may have been lost) re-reads every session and the watched
// session's events; so does the heartbeat, so a missed NOTIFY costs at most
// one interval, never an event.
import { Hono } from "hono";
import { z } from "zod";
import type { OperatorEventData } from "../../events/contract.js";
import { sessionEventsLastId } from "../../events/session-events.js";
import { sessionStates } from "../../sessions/session-state.js";
import { sessionExists } from "../../sessions/sessions.js";
import type { ApiDeps } from "../api-deps.js";
import type { AuthEnv } from "../auth-middleware.js";
import { HttpError, notFound } from "../http-error.js";
import { afterQuery, resumeAfter, sendSessionEventsAfter } from "../session-event-frames.js";
import { sseResponse } from "../sse-response.js";
import { validate } from "../validate.js";
import { uuidParam } from "./ids.js";

/** The hub key of operator-wide streams: no session id looks like it. */
const ANY = "*";

export function operatorEventRoutes(deps: ApiDeps) {
  const heartbeatMs = deps.heartbeatMs ?? 15_000;
  return new Hono<AuthEnv>().get(
    "/api/events",
    validate("query", z.object({ session: uuidParam.optional(), after: afterQuery })),
    async (c) => {
      const { session: watched, after: afterParam } = c.req.valid("query");
      const resume = watched ? resumeAfter(c, afterParam) : undefined;
      if (watched && !(await sessionExists(deps.db, { sessionId: watched }))) throw notFound("session", watched);
      if (deps.events.isStopped) throw new HttpError("unavailable", "the server is shutting down; reconnect shortly");
      // Read before subscribing is safe: the first round reads everything after it.
      let after = watched ? (resume ?? (await sessionEventsLastId(deps.db, { sessionId: watched }))) : "0";
      // Subscribe before anything is read: a wake-up in between is remembered.
      const sub = deps.events.subscribe(ANY);
      const dirty = new Set<string>();
      let everything = false;
      let watchedDirty = true;
      const off = deps.events.onAnySession((sessionId) => {
        if (sessionId === null) everything = true;
        else dirty.add(sessionId);
        if (sessionId === null || sessionId === watched) watchedDirty = true;
        sub.wake();
      });
      const log = deps.log.child({ stream: "operator", sessionId: watched });
      return sseResponse(c, { log, failed: "operator event stream failed" }, async (stream, signal) => {
        const sent = new Map<string, string>();
        try {
          const keyOf = (s: { state: string; title: string; pendingApprovals: number }) => `${s.state}|${s.title}|${s.pendingApprovals}`;
          // The baseline: what the page's GET /api/sessions shows; re-reads send what differs from it.
          for (const s of await sessionStates(deps.db)) sent.set(s.sessionId, keyOf(s));
          await stream.writeSSE({ event: "ready", data: JSON.stringify(watched ? { after } : {}), retry: 2000 });
          while (!signal.aborted) {
            if (watched && watchedDirty) {
              watchedDirty = false;
              after = await sendSessionEventsAfter(stream, deps.db, { sessionId: watched, after, signal });
            }
            if (everything || dirty.size > 0) {
              const ids = everything ? undefined : [...dirty];
              everything = false;
              dirty.clear();
              for (const s of await sessionStates(deps.db, ids ? { sessionIds: ids } : {})) {
                const data: OperatorEventData["session_state"] = {
                  sessionId: s.sessionId,
                  state: s.state,
                  title: s.title,
                  updatedAt: s.updatedAt.toISOString(),
                  pendingApprovals: s.pendingApprovals,
                };
                const key = keyOf(s);
                // A re-read of every session sends only what changed; a woken session is sent as it is now.
                if (!ids && sent.get(s.sessionId) === key) continue;
                sent.set(s.sessionId, key);
                await stream.writeSSE({ event: "session_state", data: JSON.stringify(data) });
              }
            }
            const woke = await sub.wait(heartbeatMs, signal);
            if (woke === "stopped") break;
            if (woke === "timeout") {
              await stream.write(": heartbeat\n\n");
              everything = true;
              watchedDirty = true;
            }
          }
        } finally {
          off();
          sub.close();
        }
      });
    },
  );
}

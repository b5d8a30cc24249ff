// GET /api/events: the operator-wide stream (SSE), so the session list
// follows every session live without polling. Each message is
// `session_state` {sessionId, state, title, updatedAt, pendingApprovals}
// (events/contract.ts's OperatorEventData), sent when a session's state,
// title or pending count may have changed.
//
// How: the hub (session-event-hub.ts) hears the NOTIFY every session event
// sends; the sessions it names are re-read with sessions/session-state.ts,
// and those whose state differs from what this stream last sent are sent.
// Nothing is stored: after `ready` (and after any reconnect) the page reads
// GET /api/sessions once, then follows this stream. A LISTEN reconnect
// (NOTIFYs may have been lost) re-reads every session; so does the
// heartbeat, so a missed NOTIFY costs at most one interval.
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { OperatorEventData } from "../../events/contract.js";
import { sessionStates } from "../../sessions/session-state.js";
import type { ApiDeps } from "../api-deps.js";
import type { AuthEnv } from "../auth-middleware.js";
import { HttpError } from "../http-error.js";

/** The hub key of operator-wide streams: no session id looks like it. */
const ANY = "*";

export function operatorEventRoutes(deps: ApiDeps) {
  const heartbeatMs = deps.heartbeatMs ?? 15_000;
  return new Hono<AuthEnv>().get("/api/events", async (c) => {
    if (deps.events.isStopped) throw new HttpError("unavailable", "the server is shutting down; reconnect shortly");
    // Subscribe before anything is read: a wake-up in between is remembered.
    const sub = deps.events.subscribe(ANY);
    const dirty = new Set<string>();
    let everything = false;
    const off = deps.events.onAnySession((sessionId) => {
      if (sessionId === null) everything = true;
      else dirty.add(sessionId);
      sub.wake();
    });
    const log = deps.log.child({ stream: "operator" });
    c.header("X-Accel-Buffering", "no");
    c.header("Cache-Control", "no-cache, no-transform");
    return streamSSE(
      c,
      async (stream) => {
        const stop = new AbortController();
        stream.onAbort(() => stop.abort());
        const sent = new Map<string, string>();
        try {
          const keyOf = (s: { state: string; title: string; pendingApprovals: number }) => `${s.state}|${s.title}|${s.pendingApprovals}`;
          // The baseline: what the page's GET /api/sessions shows; re-reads send what differs from it.
          for (const s of await sessionStates(deps.db)) sent.set(s.sessionId, keyOf(s));
          await stream.writeSSE({ event: "ready", data: "{}", retry: 2000 });
          while (!stop.signal.aborted) {
            const woke = await sub.wait(heartbeatMs, stop.signal);
            if (woke === "stopped") break;
            if (woke === "timeout") {
              await stream.write(": heartbeat\n\n");
              everything = true;
            }
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
        } finally {
          off();
          sub.close();
        }
      },
      async (err) => {
        log.error({ err }, "operator event stream failed");
      },
    );
  });
}

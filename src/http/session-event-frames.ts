// How a session's events go out as SSE frames, for both streams that carry
// them: GET /api/sessions/:id/events (DESIGN.md) and GET /api/events?session=
// (the page's one stream per tab). Invariants: each frame's SSE id is the
// session_events row id and its data is {id, type, turnId, createdAt, data},
// so a reconnect with Last-Event-ID (or ?after= on an EventSource's first
// connect) resumes exactly after the last event the browser got; without
// either, a stream starts after the session's newest event.
import type { Context } from "hono";
import type { SSEStreamingApi } from "hono/streaming";
import type { Kysely } from "kysely";
import { z } from "zod";
import type { Database } from "../db/schema.js";
import { sessionEventsAfter } from "../events/session-events.js";
import { HttpError } from "./http-error.js";

/** Events read and sent per round trip. */
const PAGE = 500;
/** An event id is a bigint identity: digits, at most 2^63 - 1 (a larger one reached PostgreSQL as a raw error). */
const INT8_MAX = 9_223_372_036_854_775_807n;
const isEventId = (v: string) => /^\d{1,19}$/.test(v) && BigInt(v) <= INT8_MAX;
const EVENT_ID_MESSAGE = "must be an event id (digits, at most 9223372036854775807)";

/** `?after=`: the event id to resume after. */
export const afterQuery = z.string().refine(isEventId, EVENT_ID_MESSAGE).optional();

/**
 * Where a stream resumes: Last-Event-ID (a reconnect), else ?after=; undefined
 * means "after the session's newest event" (sessionEventsLastId, read once
 * the stream has subscribed). A malformed header is a 400 naming it.
 */
export function resumeAfter(c: Context, after: string | undefined): string | undefined {
  const header = c.req.header("last-event-id");
  if (header !== undefined && !isEventId(header)) {
    throw new HttpError("bad_request", `header.last-event-id: ${EVENT_ID_MESSAGE}`, "header.last-event-id");
  }
  return header ?? after;
}

/** Sends every event of the session after `after`, page by page; returns the id of the last one sent. */
export async function sendSessionEventsAfter(
  stream: SSEStreamingApi,
  db: Kysely<Database>,
  p: { sessionId: string; after: string; signal: AbortSignal },
): Promise<string> {
  let after = p.after;
  for (;;) {
    const events = await sessionEventsAfter(db, { sessionId: p.sessionId, afterId: after, limit: PAGE });
    for (const e of events) {
      if (p.signal.aborted) return after;
      await stream.writeSSE({
        id: e.id,
        event: e.type,
        data: JSON.stringify({ id: e.id, type: e.type, turnId: e.turnId, createdAt: e.createdAt, data: e.data }),
      });
      after = e.id;
    }
    if (events.length < PAGE || p.signal.aborted) return after;
  }
}

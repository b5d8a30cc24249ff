// The session event stream: ids from session_events, a start after the
// newest event by default, ?after= and Last-Event-ID resume with no gap and
// no duplicate (also mid-turn, and across two processes on two pools), one
// LISTEN connection per process, heartbeats, and clear 400/404s.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionEventsAppend } from "../src/events/session-events.js";
import { type ApiHarness, browser, loginCookie, startApi } from "./helpers/api-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";
import { SseReader } from "./helpers/sse-reader.js";
import { appendEvents, makeTurn } from "./helpers/web-factories.js";

const t = useTestDatabase();
let a: ApiHarness;
let aPool: ReturnType<typeof t.connect>;
let bPool: ReturnType<typeof t.connect>;
let b: ApiHarness;
let reqA: ReturnType<typeof browser>;
let reqB: ReturnType<typeof browser>;
const readers: SseReader[] = [];

beforeAll(async () => {
  // Two "processes": separate pools, separate LISTEN connections, separate apps.
  aPool = t.connect({ applicationName: "nomos-a" });
  bPool = t.connect({ applicationName: "nomos-b" });
  a = await startApi(aPool, t.url);
  // Heartbeats every 15 s (the default): within the tests, only a NOTIFY wakes a stream.
  b = await startApi(bPool, t.url);
  reqA = browser(a.app, await loginCookie(a.app, t.db));
  reqB = browser(b.app, await loginCookie(b.app, t.db));
});
afterAll(async () => {
  await Promise.all(readers.map((r) => r.close()));
  await a.close();
  await b.close();
});

async function open(req: ReturnType<typeof browser>, sessionId: string, opts: { after?: string; lastEventId?: string } = {}) {
  const q = opts.after !== undefined ? `?after=${opts.after}` : "";
  const res = await req(`/api/sessions/${sessionId}/events${q}`, {
    headers: opts.lastEventId !== undefined ? { "last-event-id": opts.lastEventId } : {},
  });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const reader = new SseReader(res);
  readers.push(reader);
  const ready = await reader.next();
  expect(ready.event).toBe("ready");
  return reader;
}

const deltas = (from: number, to: number): ["text_delta", { text: string }][] =>
  Array.from({ length: to - from + 1 }, (_, i) => ["text_delta", { text: `d${from + i} ` }]);

const texts = (msgs: { data: string }[]) => msgs.map((m) => (JSON.parse(m.data) as { data: { text: string } }).data.text);

describe("the event stream", () => {
  it("starts after the session's newest event by default, and sends new ones with their row ids", async () => {
    const s = await makeSession(t.db.kysely);
    const turn = await makeTurn(t.db.kysely, { session_id: s.id });
    await appendEvents(t.db.kysely, s.id, turn.id, deltas(1, 3));
    const reader = await open(reqA, s.id);
    const ids = await appendEvents(t.db.kysely, s.id, turn.id, [
      ["text_delta", { text: "fresh" }],
      ["turn_finished", { turnId: turn.id, status: "completed" }],
    ]);
    const got = await reader.events(2);
    expect(got.map((m) => m.id)).toEqual(ids);
    expect(got.map((m) => m.event)).toEqual(["text_delta", "turn_finished"]);
    expect(JSON.parse(got[0]!.data)).toMatchObject({ id: ids[0], type: "text_delta", turnId: turn.id, data: { text: "fresh" } });
  });

  it("?after=0 replays the whole session in order", async () => {
    const s = await makeSession(t.db.kysely);
    await appendEvents(t.db.kysely, s.id, null, deltas(1, 4));
    const reader = await open(reqA, s.id, { after: "0" });
    expect(texts(await reader.events(4))).toEqual(["d1 ", "d2 ", "d3 ", "d4 "]);
  });

  it("a refresh mid-turn resumes by Last-Event-ID with no gap and no duplicate", async () => {
    const s = await makeSession(t.db.kysely);
    const turn = await makeTurn(t.db.kysely, { session_id: s.id });
    const first = await open(reqA, s.id);
    await appendEvents(t.db.kysely, s.id, turn.id, deltas(1, 5));
    const seen = await first.events(3);
    await first.close(); // the browser refreshes after d3; d4, d5 were sent or not, it did not see them
    await appendEvents(t.db.kysely, s.id, turn.id, deltas(6, 8)); // the turn keeps streaming meanwhile
    const second = await open(reqA, s.id, { lastEventId: seen[2]!.id! });
    await appendEvents(t.db.kysely, s.id, turn.id, deltas(9, 9));
    const rest = await second.events(6);
    expect([...texts(seen), ...texts(rest)]).toEqual(deltas(1, 9).map(([, d]) => d.text));
  });

  it("Last-Event-ID wins over ?after (a reconnecting EventSource keeps its first URL)", async () => {
    const s = await makeSession(t.db.kysely);
    const ids = await appendEvents(t.db.kysely, s.id, null, deltas(1, 3));
    const reader = await open(reqA, s.id, { after: "0", lastEventId: ids[1]! });
    expect(texts(await reader.events(1))).toEqual(["d3 "]);
  });

  it("an event written by one process reaches a stream served by another, and resume works across them", async () => {
    const s = await makeSession(t.db.kysely);
    const turn = await makeTurn(t.db.kysely, { session_id: s.id });
    const onB = await open(reqB, s.id);
    // Written through A's pool, as the agent in process A would.
    await sessionEventsAppend(aPool.kysely, [
      { sessionId: s.id, turnId: turn.id, type: "turn_started", data: { turnId: turn.id, kind: "continuation" } },
    ]);
    await appendEvents(aPool.kysely, s.id, turn.id, deltas(1, 4));
    const fromB = await onB.events(3);
    expect(fromB[0]!.event).toBe("turn_started");
    await onB.close();
    // The browser reconnects and the load balancer sends it to process A.
    const onA = await open(reqA, s.id, { lastEventId: fromB[2]!.id! });
    await appendEvents(bPool.kysely, s.id, turn.id, deltas(5, 5));
    expect(texts(await onA.events(3))).toEqual(["d3 ", "d4 ", "d5 "]);
  });

  it("heartbeats keep an idle stream open", async () => {
    const c = await startApi(t.db, t.url, { heartbeatMs: 100 });
    try {
      const s = await makeSession(t.db.kysely);
      const reader = await open(browser(c.app, await loginCookie(c.app, t.db)), s.id);
      const m = await reader.next();
      expect(m.comment).toBe("heartbeat");
      const ids = await appendEvents(t.db.kysely, s.id, null, deltas(1, 1));
      expect((await reader.events(1))[0]!.id).toBe(ids[0]);
      await reader.close();
    } finally {
      await c.close();
    }
  });

  it("serves every stream of a process from one LISTEN connection", async () => {
    const s1 = await makeSession(t.db.kysely);
    const s2 = await makeSession(t.db.kysely);
    await open(reqA, s1.id);
    await open(reqA, s2.id);
    await open(reqB, s1.id);
    const rows = await t.db.sql<{ n: string }[]>`
      SELECT count(*) AS n FROM pg_stat_activity
       WHERE datname = current_database() AND application_name = 'nomos-events'`;
    expect(Number(rows[0]!.n)).toBe(2);
    expect(a.hub.health()).toMatchObject({ ok: true });
  });

  it("keeps streaming after the LISTEN connection is cut: it reconnects and re-reads", async () => {
    const s = await makeSession(t.db.kysely);
    const reader = await open(reqA, s.id);
    await t.db.sql`
      SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE datname = current_database() AND application_name = 'nomos-events'`;
    // Written while process A's listener may be down: the reconnect wakes the stream to re-read.
    const ids = await appendEvents(t.db.kysely, s.id, null, deltas(1, 2));
    const got = await reader.events(2);
    expect(got.map((m) => m.id)).toEqual(ids);
  });

  it("400 for a malformed Last-Event-ID or ?after; 404 for an unknown session", async () => {
    const s = await makeSession(t.db.kysely);
    const bad = await reqA(`/api/sessions/${s.id}/events`, { headers: { "last-event-id": "abc" } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { field: "header.last-event-id" } });
    const badAfter = await reqA(`/api/sessions/${s.id}/events?after=-1`);
    expect(await badAfter.json()).toMatchObject({ error: { field: "query.after" } });
    const missing = await reqA("/api/sessions/00000000-0000-4000-8000-000000000000/events");
    expect(missing.status).toBe(404);
  });
});

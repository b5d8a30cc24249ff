// Each session's state (issue 16), derived in one place
// (sessions/session-state.ts): the rule itself, the state in GET
// /api/sessions and GET /api/sessions/:id, and the operator-wide stream
// GET /api/events sending session_state when a session's events say its
// state may have changed, from another process's write too (the NOTIFY).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionStateOf } from "../src/sessions/session-state.js";
import { type ApiHarness, browser, loginCookie, startApi } from "./helpers/api-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";
import { SseReader } from "./helpers/sse-reader.js";
import { appendEvents, makeApproval, makePlan, makeTurn } from "./helpers/web-factories.js";

const t = useTestDatabase();
let h: ApiHarness;
let req: ReturnType<typeof browser>;
const readers: SseReader[] = [];
const db = () => t.db.kysely;

beforeAll(async () => {
  h = await startApi(t.db, t.url);
  req = browser(h.app, await loginCookie(h.app, t.db));
});
afterAll(async () => {
  await Promise.all(readers.map((r) => r.close()));
  await h.close();
});

const facts = {
  turnActive: false,
  pendingApprovals: 0,
  lastPlanOutcome: null,
  lastPlanFinishedAt: null,
  lastTurnStatus: null,
  lastTurnFinishedAt: null,
} as const;

describe("the rule", () => {
  it("working, then needs approval, then failed after the outcome, then finished or blocked, else idle", () => {
    const t0 = new Date("2026-01-01T10:00:00Z");
    const t1 = new Date("2026-01-01T11:00:00Z");
    expect(sessionStateOf(facts)).toBe("idle");
    expect(sessionStateOf({ ...facts, turnActive: true, pendingApprovals: 1 })).toBe("working");
    expect(sessionStateOf({ ...facts, pendingApprovals: 2, lastPlanOutcome: "verified", lastPlanFinishedAt: t0 })).toBe("needs_approval");
    expect(
      sessionStateOf({
        ...facts,
        lastPlanOutcome: "verified",
        lastPlanFinishedAt: t0,
        lastTurnStatus: "completed",
        lastTurnFinishedAt: t1,
      }),
    ).toBe("finished");
    expect(sessionStateOf({ ...facts, lastPlanOutcome: "blocked", lastPlanFinishedAt: t0 })).toBe("blocked");
    expect(sessionStateOf({ ...facts, lastTurnStatus: "failed", lastTurnFinishedAt: t0 })).toBe("failed");
    expect(
      sessionStateOf({ ...facts, lastPlanOutcome: "verified", lastPlanFinishedAt: t1, lastTurnStatus: "failed", lastTurnFinishedAt: t0 }),
    ).toBe("finished");
    expect(
      sessionStateOf({ ...facts, lastPlanOutcome: "verified", lastPlanFinishedAt: t0, lastTurnStatus: "failed", lastTurnFinishedAt: t1 }),
    ).toBe("failed");
  });
});

describe("states on the API", () => {
  it("GET /api/sessions and GET /api/sessions/:id carry each session's state", async () => {
    const idle = await makeSession(db());
    const waiting = await makeSession(db());
    await makeApproval(db(), { session_id: waiting.id, kind: "plan", plan_id: (await makePlan(db(), { session_id: waiting.id })).id });
    const working = await makeSession(db());
    await makeTurn(db(), { session_id: working.id, status: "running" });
    const done = await makeSession(db());
    await makePlan(db(), { session_id: done.id, status: "approved", outcome: "verified", outcome_summary: "ok", finished_at: new Date() });
    const { sessions } = (await (await req("/api/sessions")).json()) as { sessions: { id: string; state: string }[] };
    const stateOf = (id: string) => sessions.find((s) => s.id === id)?.state;
    expect([stateOf(idle.id), stateOf(waiting.id), stateOf(working.id), stateOf(done.id)]).toEqual([
      "idle",
      "needs_approval",
      "working",
      "finished",
    ]);
    const one = (await (await req(`/api/sessions/${waiting.id}`)).json()) as { state: string; usage: unknown; plan: unknown };
    expect(one).toMatchObject({
      state: "needs_approval",
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: null },
      plan: null,
    });
  });
});

describe("GET /api/events", () => {
  it("sends session_state when another session gets a pending approval, written by another connection", async () => {
    const watched = await makeSession(db(), { title: "other session" });
    const res = await req("/api/events");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const reader = new SseReader(res);
    readers.push(reader);
    expect((await reader.next()).event).toBe("ready");

    // Another "process": its own pool writes the approval and its event (the NOTIFY wakes this stream).
    const other = t.connect({ applicationName: "nomos-other" });
    try {
      const plan = await makePlan(other.kysely, { session_id: watched.id });
      const approval = await makeApproval(other.kysely, { session_id: watched.id, kind: "plan", plan_id: plan.id });
      await appendEvents(other.kysely, watched.id, null, [["approval_requested", { approval: { id: approval.id } }]]);
    } finally {
      await other.close();
    }
    const m = await reader.next();
    expect(m.event).toBe("session_state");
    expect(JSON.parse(m.data)).toMatchObject({
      sessionId: watched.id,
      state: "needs_approval",
      title: "other session",
      pendingApprovals: 1,
      updatedAt: expect.stringMatching(/^\d{4}-/),
    });
  });
  it("with ?session= also carries that session's events, resuming after ?after= or Last-Event-ID", async () => {
    const watched = await makeSession(db(), { title: "watched" });
    const [first] = await appendEvents(db(), watched.id, null, [["text_delta", { text: "before the stream" }]]);
    const res = await req(`/api/events?session=${watched.id}&after=0`);
    expect(res.status).toBe(200);
    const reader = new SseReader(res);
    readers.push(reader);
    expect(await reader.next()).toMatchObject({ event: "ready", data: JSON.stringify({ after: "0" }) });
    // What happened before the stream, after ?after=, comes first, framed as the session's own stream frames it.
    const m = await reader.next();
    expect(m).toMatchObject({ event: "text_delta", id: first });
    expect(JSON.parse(m.data)).toMatchObject({ id: first, type: "text_delta", turnId: null, data: { text: "before the stream" } });

    // Then the session's new events and every session's state, live, on the one stream.
    const plan = await makePlan(db(), { session_id: watched.id });
    const approval = await makeApproval(db(), { session_id: watched.id, kind: "plan", plan_id: plan.id });
    const [requested] = await appendEvents(db(), watched.id, null, [["approval_requested", { approval: { id: approval.id } }]]);
    const live = [await reader.next(), await reader.next()];
    expect(live.map((x) => x.event).sort()).toEqual(["approval_requested", "session_state"]);
    expect(live.find((x) => x.event === "approval_requested")?.id).toBe(requested);
    expect(JSON.parse(live.find((x) => x.event === "session_state")!.data)).toMatchObject({
      sessionId: watched.id,
      state: "needs_approval",
    });

    // A reconnect names the last event it got and hears nothing twice.
    const again = await req(`/api/events?session=${watched.id}`, { headers: { "last-event-id": first! } });
    const resumed = new SseReader(again);
    readers.push(resumed);
    expect((await resumed.next()).event).toBe("ready");
    expect(await resumed.next()).toMatchObject({ event: "approval_requested", id: requested });
  });

  it("refuses an unknown session and a malformed ?after= or Last-Event-ID, naming what is wrong", async () => {
    const missing = "00000000-0000-4000-8000-000000000000";
    const gone = await req(`/api/events?session=${missing}`);
    expect(gone.status).toBe(404);
    expect(await gone.text()).toContain(missing);
    const s = await makeSession(db());
    const badAfter = await req(`/api/events?session=${s.id}&after=soon`);
    expect(badAfter.status).toBe(400);
    expect(await badAfter.text()).toContain("after");
    const badHeader = await req(`/api/events?session=${s.id}`, { headers: { "last-event-id": "-1" } });
    expect(badHeader.status).toBe(400);
    expect(await badHeader.text()).toContain("last-event-id");
    const badSession = await req("/api/events?session=nope");
    expect(badSession.status).toBe(400);
    expect(await badSession.text()).toContain("session");
  });
});

// Every /api route of DESIGN.md in-process: shapes, 201/202/200, 400 naming
// the field, 401, 404 for unknown ids, 409 for decided approvals, 413 for
// oversized bodies, and that chatting, deciding, Stop and cancelling run the
// real domain (Turns, approvalDecide, the lifecycle) as the operator: the
// database says what happened.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executionApprove, executionClaim, executionFinish } from "../src/executions/lifecycle.js";
import { type ApiHarness, browser, loginCookie, startApi } from "./helpers/api-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeExecution, makeSession } from "./helpers/factories.js";
import { appendEvents, makeApproval, makeAssentWindow, makeDestroyApproval, makePlan, makeTurn } from "./helpers/web-factories.js";

const t = useTestDatabase();
let h: ApiHarness;
let req: ReturnType<typeof browser>;
const UNKNOWN = "00000000-0000-4000-8000-000000000000";

beforeAll(async () => {
  h = await startApi(t.db, t.url);
  req = browser(h.app, await loginCookie(h.app, t.db));
});
afterAll(async () => {
  await h.close();
});

const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;

describe("sessions", () => {
  it("POST creates one (201 {id}), owned by the operator, audited under their name", async () => {
    const res = await req("/api/sessions", { method: "POST", body: { title: "Nginx box" } });
    expect(res.status).toBe(201);
    const { id } = await json<{ id: string }>(res);
    const row = await t.db.kysely.selectFrom("sessions").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
    expect(row.title).toBe("Nginx box");
    const audit = await t.db.kysely.selectFrom("audit.events").select("actor").where("row_key", "=", id).executeTakeFirstOrThrow();
    expect(audit.actor).toBe("operator:alice");
  });

  it("POST without a body makes a 'New session'; a bad title is a 400 naming body.title", async () => {
    const res = await req("/api/sessions", { method: "POST", body: {} });
    expect(res.status).toBe(201);
    const bad = await req("/api/sessions", { method: "POST", body: { title: 42 } });
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ error: { code: "bad_request", field: "body.title" } });
  });

  it("GET lists newest first", async () => {
    const a = await makeSession(t.db.kysely, { title: "older", created_at: new Date(Date.now() - 60_000) });
    const b = await makeSession(t.db.kysely, { title: "newer", created_at: new Date(Date.now() + 60_000) });
    const { sessions } = await json<{ sessions: { id: string; title: string }[] }>(await req("/api/sessions"));
    const ids = sessions.map((s) => s.id);
    expect(ids[0]).toBe(b.id);
    expect(ids.indexOf(b.id)).toBeLessThan(ids.indexOf(a.id));
  });

  it("GET one: transcript, assent window, lastEventId", async () => {
    const s = await makeSession(t.db.kysely);
    await t.db.kysely
      .insertInto("messages")
      .values([
        { session_id: s.id, kind: "operator", content: [{ type: "text", text: "hello" }] },
        { session_id: s.id, kind: "assistant", content: [{ type: "text", text: "hi there" }] },
      ])
      .execute();
    const ids = await appendEvents(t.db.kysely, s.id, null, [["text_delta", { text: "hi there" }]]);
    const window = await makeAssentWindow(t.db.kysely, { session_id: s.id });
    const body = await json<{
      id: string;
      lastEventId: string;
      assent: { open: boolean; expiresAt: string };
      messages: { kind: string; content: unknown }[];
    }>(await req(`/api/sessions/${s.id}`));
    expect(body.id).toBe(s.id);
    expect(body.lastEventId).toBe(ids[0]);
    expect(body.assent).toMatchObject({ open: true, expiresAt: window.expires_at.toISOString() });
    expect(body.messages.map((m) => m.kind)).toEqual(["operator", "assistant"]);
    expect(body.messages[0]!.content).toEqual([{ type: "text", text: "hello" }]);
  });

  it("GET one: an expired window reads as closed; unknown id 404; malformed id 400", async () => {
    const s = await makeSession(t.db.kysely);
    await t.db.kysely
      .insertInto("assent_windows")
      .values({
        session_id: s.id,
        opened_by: "operator:alice",
        opened_at: new Date(Date.now() - 120_000),
        expires_at: new Date(Date.now() - 60_000),
      })
      .execute();
    const body = await json<{ assent: unknown; lastEventId: string }>(await req(`/api/sessions/${s.id}`));
    expect(body.assent).toMatchObject({ open: false, expiresAt: null });
    expect(body.lastEventId).toBe("0");
    const missing = await req(`/api/sessions/${UNKNOWN}`);
    expect(missing.status).toBe(404);
    expect(await json(missing)).toMatchObject({ error: { code: "not_found", message: `session ${UNKNOWN} does not exist` } });
    const bad = await req("/api/sessions/not-a-uuid");
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ error: { field: "path.id" } });
  });

  it("401 without login on every route", async () => {
    const s = await makeSession(t.db.kysely);
    for (const [method, path] of [
      ["GET", "/api/sessions"],
      ["POST", "/api/sessions"],
      ["GET", `/api/sessions/${s.id}`],
      ["POST", `/api/sessions/${s.id}/messages`],
      ["GET", `/api/sessions/${s.id}/events`],
      ["DELETE", `/api/sessions/${s.id}/assent`],
      ["GET", "/api/approvals"],
      ["POST", `/api/approvals/${UNKNOWN}`],
      ["GET", `/api/executions/${UNKNOWN}`],
      ["POST", `/api/executions/${UNKNOWN}/cancel`],
    ] as const) {
      const res = await h.app.request(path, { method });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
  });
});

describe("messages", () => {
  it("202 {turnId}: the agent is asked to chat as the operator; the session is named after the words", async () => {
    const s = await makeSession(t.db.kysely, { title: "New session" });
    const res = await req(`/api/sessions/${s.id}/messages`, { method: "POST", body: { text: "  install nginx on web1  " } });
    expect(res.status).toBe(202);
    const { turnId } = await json<{ turnId: string }>(res);
    expect(turnId).toMatch(/^[0-9a-f-]{36}$/);
    await h.turns.idle(s.id);
    const turn = await t.db.kysely.selectFrom("turns").selectAll().where("id", "=", turnId).executeTakeFirstOrThrow();
    expect(turn).toMatchObject({ session_id: s.id, kind: "operator", input: { text: "install nginx on web1", actor: "operator:alice" } });
    const said = await t.db.kysely
      .selectFrom("messages")
      .select("content")
      .where("turn_id", "=", turnId)
      .where("kind", "=", "operator")
      .executeTakeFirstOrThrow();
    expect(said.content).toEqual([{ type: "text", text: "install nginx on web1" }]);
    const row = await t.db.kysely.selectFrom("sessions").select("title").where("id", "=", s.id).executeTakeFirstOrThrow();
    expect(row.title).toBe("install nginx on web1");
  });

  it("400 naming body.text for empty or missing text; 404 for an unknown session; 413 over the body limit", async () => {
    const s = await makeSession(t.db.kysely);
    const empty = await req(`/api/sessions/${s.id}/messages`, { method: "POST", body: { text: "   " } });
    expect(empty.status).toBe(400);
    expect(await json(empty)).toMatchObject({ error: { field: "body.text" } });
    const missing = await req(`/api/sessions/${s.id}/messages`, { method: "POST", body: {} });
    expect(await json(missing)).toMatchObject({ error: { field: "body.text" } });
    const unknown = await req(`/api/sessions/${UNKNOWN}/messages`, { method: "POST", body: { text: "hi" } });
    expect(unknown.status).toBe(404);
    const huge = await req(`/api/sessions/${s.id}/messages`, { method: "POST", body: { text: "x".repeat(2_000_000) } });
    expect(huge.status).toBe(413);
  });
});

describe("approvals", () => {
  it("GET filters by session and status, with the plan or the execution it decides", async () => {
    const s = await makeSession(t.db.kysely);
    const plan = await makePlan(t.db.kysely, { session_id: s.id });
    const x = await makeExecution(t.db.kysely, { session_id: s.id, command: "pct destroy 105", risk: "destructive" });
    const a1 = await makeApproval(t.db.kysely, { session_id: s.id, kind: "plan", plan_id: plan.id });
    const a2 = await makeApproval(t.db.kysely, {
      session_id: s.id,
      kind: "execution",
      execution_id: x.id,
      confirmation_phrase: "destroy 105",
      status: "rejected",
      decided_at: new Date(),
    });
    const all = await json<{ approvals: Record<string, unknown>[] }>(await req(`/api/approvals?session=${s.id}`));
    expect(all.approvals.map((a) => a.id)).toEqual([a1.id, a2.id]);
    expect(all.approvals[0]).toMatchObject({
      kind: "plan",
      status: "pending",
      planId: plan.id,
      plan: { goal: plan.goal, steps: plan.steps },
    });
    expect(all.approvals[1]).toMatchObject({
      kind: "execution",
      executionId: x.id,
      target: "pve1",
      command: "pct destroy 105",
      risk: "destructive",
      confirmationPhrase: "destroy 105",
    });
    const pending = await json<{ approvals: { id: string }[] }>(await req(`/api/approvals?session=${s.id}&status=pending`));
    expect(pending.approvals.map((a) => a.id)).toEqual([a1.id]);
    const bad = await req("/api/approvals?status=maybe");
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ error: { field: "query.status" } });
  });

  it("POST approves through the agent as the operator, by button, and answers the decided approval", async () => {
    const s = await makeSession(t.db.kysely);
    const plan = await makePlan(t.db.kysely, { session_id: s.id });
    const a = await makeApproval(t.db.kysely, { session_id: s.id, kind: "plan", plan_id: plan.id });
    const res = await req(`/api/approvals/${a.id}`, { method: "POST", body: { decision: "approve" } });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ id: a.id, status: "approved", decidedBy: "operator:alice", decidedVia: "button" });
    // approvalDecide ran: approving the plan opened the session's window, in the operator's name.
    const window = await t.db.kysely.selectFrom("assent_windows").selectAll().where("session_id", "=", s.id).executeTakeFirstOrThrow();
    expect(window).toMatchObject({ opened_by: "operator:alice", closed_at: null, plan_id: plan.id });
    const again = await req(`/api/approvals/${a.id}`, { method: "POST", body: { decision: "reject" } });
    expect(again.status).toBe(409);
  });

  it("a destructive step needs its typed phrase: 400 naming body.confirmation without it; rejecting needs none", async () => {
    const s = await makeSession(t.db.kysely);
    const a = await makeDestroyApproval(t.db.kysely, s.id, 105);
    const b = await makeDestroyApproval(t.db.kysely, s.id, 106);
    for (const confirmation of [undefined, "destroy 106", "DESTROY 105"]) {
      const res = await req(`/api/approvals/${a.id}`, { method: "POST", body: { decision: "approve", confirmation } });
      expect(res.status).toBe(400);
      expect(await json(res)).toMatchObject({
        error: { field: "body.confirmation", message: expect.stringContaining('type "destroy 105"') },
      });
    }
    const still = await t.db.kysely.selectFrom("approvals").select("status").where("id", "=", a.id).executeTakeFirstOrThrow();
    expect(still.status).toBe("pending");
    const ok = await req(`/api/approvals/${a.id}`, { method: "POST", body: { decision: "approve", confirmation: "destroy 105" } });
    expect(ok.status).toBe(200);
    expect(await json(ok)).toMatchObject({ status: "approved", decidedBy: "operator:alice" });
    const approved = await t.db.kysely
      .selectFrom("executions")
      .select("status")
      .where("id", "=", a.execution_id!)
      .executeTakeFirstOrThrow();
    expect(approved.status).not.toBe("pending_approval");
    const rejected = await req(`/api/approvals/${b.id}`, { method: "POST", body: { decision: "reject" } });
    expect(await json(rejected)).toMatchObject({ status: "rejected" });
  });

  it("400 naming body.decision; 404 for an unknown approval", async () => {
    const bad = await req(`/api/approvals/${UNKNOWN}`, { method: "POST", body: { decision: "maybe" } });
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ error: { field: "body.decision" } });
    const missing = await req(`/api/approvals/${UNKNOWN}`, { method: "POST", body: { decision: "approve" } });
    expect(missing.status).toBe(404);
  });
});

describe("Stop", () => {
  it("DELETE /api/sessions/:id/assent stops everything of the session through the agent, as the operator", async () => {
    const s = await makeSession(t.db.kysely);
    await makeAssentWindow(t.db.kysely, { session_id: s.id });
    const res = await req(`/api/sessions/${s.id}/assent`, { method: "DELETE" });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({
      assent: { open: false, expiresAt: null, scopeTargets: [], continuations: 0 },
      stopped: "Stopped by alice: nothing was running. The assent window is closed: nothing runs on its own, and every change asks again.",
    });
    const window = await t.db.kysely.selectFrom("assent_windows").selectAll().where("session_id", "=", s.id).executeTakeFirstOrThrow();
    expect(window.close_reason).toBe("revoked");
    const marker = await t.db.kysely
      .selectFrom("messages")
      .select("content")
      .where("session_id", "=", s.id)
      .where("kind", "=", "system_note")
      .executeTakeFirstOrThrow();
    expect(marker.content).toEqual([{ type: "text", text: expect.stringMatching(/^Stopped by alice: nothing was running\./) }]);
    expect((await req(`/api/sessions/${UNKNOWN}/assent`, { method: "DELETE" })).status).toBe(404);
  });
});

describe("executions", () => {
  it("GET one with its result; 404 unknown; 400 malformed", async () => {
    const s = await makeSession(t.db.kysely);
    const x = await makeExecution(t.db.kysely, { session_id: s.id, command: "uptime" });
    // Through the lifecycle, as the runner would: approve, claim, finish.
    await executionApprove(t.db.kysely, { executionId: x.id });
    await executionClaim(t.db.kysely, { executionId: x.id, mode: x.mode, owner: "t", leaseMs: 60_000 });
    await executionFinish(t.db.kysely, {
      executionId: x.id,
      owner: "t",
      outcome: { status: "completed", exitCode: 0, stdout: " 10:00 up 3 days" },
    });
    const body = await json(await req(`/api/executions/${x.id}`));
    expect(body).toMatchObject({
      id: x.id,
      sessionId: s.id,
      target: "pve1",
      command: "uptime",
      risk: "read_only",
      status: "completed",
      exitCode: 0,
      stdout: " 10:00 up 3 days",
      stderr: "",
      riskReason: x.risk_reason,
      timeoutS: x.timeout_s,
    });
    expect((await req(`/api/executions/${UNKNOWN}`)).status).toBe(404);
    expect((await req("/api/executions/123")).status).toBe(400);
  });

  it("POST cancel cancels through the lifecycle as the operator; 409 once terminal", async () => {
    const x = await makeExecution(t.db.kysely, { command: "sleep 100" });
    const res = await req(`/api/executions/${x.id}/cancel`, { method: "POST" });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ status: "cancelled", error: "cancelled by operator:alice", timeoutS: x.timeout_s });
    const audit = await t.db.kysely
      .selectFrom("audit.events")
      .select("actor")
      .where("row_key", "=", x.id)
      .orderBy("id", "desc")
      .executeTakeFirstOrThrow();
    expect(audit.actor).toBe("operator:alice");
    expect((await req(`/api/executions/${x.id}/cancel`, { method: "POST" })).status).toBe(409);
  });
});

describe("a process without the agent wired in", () => {
  it("answers acting routes with 503 saying so, while reading keeps working", async () => {
    const own = await startApi(t.db, t.url, {}, { withoutAgent: true });
    try {
      const r = browser(own.app, await loginCookie(own.app, t.db));
      const s = await makeSession(t.db.kysely);
      const res = await r(`/api/sessions/${s.id}/messages`, { method: "POST", body: { text: "hello" } });
      expect(res.status).toBe(503);
      expect(await json(res)).toMatchObject({
        error: { code: "unavailable", message: expect.stringMatching(/^the agent is not running/) },
      });
      expect((await r(`/api/sessions/${s.id}`)).status).toBe(200);
    } finally {
      await own.close();
    }
  });
});

describe("the session list", () => {
  it("counts pending approvals and knows the last activity", async () => {
    const s = await makeSession(t.db.kysely, { created_at: new Date(Date.now() + 3600_000) });
    const turn = await makeTurn(t.db.kysely, { session_id: s.id });
    await appendEvents(t.db.kysely, s.id, turn.id, [["turn_started", { turnId: turn.id, kind: "operator" }]]);
    const plan = await makePlan(t.db.kysely, { session_id: s.id });
    await makeApproval(t.db.kysely, { session_id: s.id, kind: "plan", plan_id: plan.id });
    const { sessions } = await json<{ sessions: { id: string; pendingApprovals: number }[] }>(await req("/api/sessions"));
    expect(sessions.find((x) => x.id === s.id)).toMatchObject({ pendingApprovals: 1 });
  });
});

// GET /api/sessions/:id/export?format=md|json (issue 16), in-process over a
// session the real agent worked (the SDK against the Messages API double,
// the host scripted): the JSON parses and holds every execution of the
// session with its target, command, risk, status and exit code, the plan
// with its step statuses and outcome, every approval with who decided it;
// the Markdown says the same for a person. Viewers may read it; a format
// other than md or json is a 400 naming `format`; an unknown id is a 404.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scriptedPolicy } from "../src/model-double/messages-double.js";
import type { SessionExport } from "../src/sessions/session-export.js";
import { type ApiHarness, browser, loginCookie, startApi } from "./helpers/api-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeNodeTarget } from "./helpers/db-executions-port.js";

const t = useTestDatabase();
let h: ApiHarness;
let req: ReturnType<typeof browser>;
let viewer: ReturnType<typeof browser>;
let sessionId: string;
const UNKNOWN = "00000000-0000-4000-8000-000000000000";

beforeAll(async () => {
  h = await startApi(t.db, t.url);
  req = browser(h.app, await loginCookie(h.app, t.db));
  viewer = browser(h.app, await loginCookie(h.app, t.db, "vera", "correct horse battery", "viewer"));
  await makeNodeTarget(t.db.kysely, "pve1");
  sessionId = await workedSession();
});
afterAll(async () => {
  await h.close();
});

const db = () => t.db.kysely;

/** A session in which the agent proposed a plan, ran its steps after approval, asked for a destroy (rejected) and reported. */
async function workedSession(): Promise<string> {
  const created = (await (await req("/api/sessions", { method: "POST", body: { title: "Nginx on pve1" } })).json()) as { id: string };
  const id = created.id;
  h.double.setPolicy(
    scriptedPolicy([
      {
        content: [
          {
            type: "tool_use",
            name: "propose_plan",
            input: {
              goal: "nginx serves the site on pve1",
              steps: [
                { title: "Install nginx", target: "pve1", command: "apt-get install -y nginx" },
                { title: "Check it is active", target: "pve1", command: "systemctl is-active nginx" },
              ],
            },
          },
        ],
      },
      { content: [{ type: "text", text: "Here is the plan." }] },
      { content: [{ type: "tool_use", name: "run", input: { target: "pve1", command: "apt-get install -y nginx", step: 1 } }] },
      { content: [{ type: "tool_use", name: "run", input: { target: "pve1", command: "systemctl is-active nginx", step: 2 } }] },
      { content: [{ type: "tool_use", name: "run", input: { target: "pve1", command: "pct destroy 105" } }] },
      {
        content: [
          {
            type: "tool_use",
            name: "update_plan",
            input: {
              steps: [
                { step: 1, status: "done" },
                { step: 2, status: "done", note: "active" },
              ],
            },
          },
          { type: "tool_use", name: "report_outcome", input: { outcome: "verified", summary: "nginx is active on pve1" } },
        ],
      },
      { content: [{ type: "text", text: "Done: nginx runs." }] },
    ]),
  );
  await req(`/api/sessions/${id}/messages`, { method: "POST", body: { text: "set up nginx on pve1" } });
  await h.turns.idle(id);
  const plan = await db()
    .selectFrom("approvals")
    .select("id")
    .where("session_id", "=", id)
    .where("kind", "=", "plan")
    .executeTakeFirstOrThrow();
  expect((await req(`/api/approvals/${plan.id}`, { method: "POST", body: { decision: "approve" } })).status).toBe(200);
  await req(`/api/sessions/${id}/messages`, { method: "POST", body: { text: "carry on" } });
  await h.turns.idle(id);
  const destroy = await db()
    .selectFrom("approvals")
    .select("id")
    .where("session_id", "=", id)
    .where("status", "=", "pending")
    .executeTakeFirstOrThrow();
  expect((await req(`/api/approvals/${destroy.id}`, { method: "POST", body: { decision: "reject" } })).status).toBe(200);
  return id;
}

describe("the session export", () => {
  it("JSON: parses and holds every execution, the plan's checklist and outcome, every approval, the usage", async () => {
    const res = await viewer(`/api/sessions/${sessionId}/export?format=json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="nomos-nginx-on-pve1-\d{4}-\d{2}-\d{2}\.json"$/);
    const doc = JSON.parse(await res.text()) as SessionExport;

    const rows = await db().selectFrom("executions").selectAll().where("session_id", "=", sessionId).orderBy("created_at").execute();
    expect(rows.length).toBe(3);
    expect(doc.executions.map((e) => e.id)).toEqual(rows.map((r) => r.id));
    expect(doc.executions.map((e) => [e.target, e.command, e.risk, e.status, e.exitCode, e.planStep])).toEqual([
      ["pve1", "apt-get install -y nginx", "config_mutation", "completed", 0, 1],
      ["pve1", "systemctl is-active nginx", expect.any(String), "completed", 0, 2],
      ["pve1", "pct destroy 105", "destructive", "rejected", null, null],
    ]);
    expect(doc.executions[0]).toMatchObject({ stdout: "ok\n", stderr: "", riskReason: expect.any(String) });
    expect(doc.executions[0]!.durationMs).toBeGreaterThanOrEqual(0);

    expect(doc.session).toMatchObject({ id: sessionId, title: "Nginx on pve1", state: "finished" });
    expect(doc.plans).toHaveLength(1);
    expect(doc.plans[0]).toMatchObject({
      goal: "nginx serves the site on pve1",
      status: "approved",
      outcome: "verified",
      summary: "nginx is active on pve1",
    });
    expect(doc.plans[0]!.steps.map((s) => [s.step, s.status, s.note])).toEqual([
      [1, "done", null],
      [2, "done", "active"],
    ]);
    expect(doc.approvals.map((a) => [a.kind, a.status, a.decidedBy, a.decidedVia])).toEqual([
      ["plan", "approved", "operator:alice", "button"],
      ["execution", "rejected", "operator:alice", "button"],
    ]);
    expect(doc.approvals.every((a) => a.decidedAt !== null)).toBe(true);
    expect(doc.messages.filter((m) => m.kind === "operator")).toHaveLength(2);
    expect(doc.usage.inputTokens).toBeGreaterThan(0);
    expect(doc.plans[0]!.usage.outputTokens).toBeGreaterThan(0);
  });

  it("Markdown: the plan, every command with its target, risk and exit code, and the approvals with who and when", async () => {
    const res = await req(`/api/sessions/${sessionId}/export?format=md`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/markdown/);
    expect(res.headers.get("content-disposition")).toMatch(/filename="nomos-nginx-on-pve1-.*\.md"/);
    const md = await res.text();
    expect(md).toMatch(/^# Nginx on pve1\n/);
    expect(md).toContain("1. [x] Install nginx (on pve1) · done");
    expect(md).toContain("**Outcome: verified**");
    for (const command of ["apt-get install -y nginx", "systemctl is-active nginx", "pct destroy 105"]) expect(md).toContain(command);
    expect(md).toContain("- Status: completed, exit code 0");
    expect(md).toContain("- Risk: destructive");
    expect(md).toMatch(/plan "nginx serves the site on pve1" — approved by operator:alice via button at \d{4}-/);
    expect(md).toMatch(/`pct destroy 105` on pve1 \(destructive\) — rejected by operator:alice via button at \d{4}-/);
    expect(md).toContain("## Transcript");
    expect(md).toContain("Done: nginx runs.");
  });

  it("a format other than md or json is a 400 naming format; an unknown session is a 404", async () => {
    const bad = await req(`/api/sessions/${sessionId}/export?format=pdf`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: "bad_request", field: "query.format" } });
    expect((await req(`/api/sessions/${UNKNOWN}/export?format=json`)).status).toBe(404);
    expect((await req(`/api/sessions/${UNKNOWN}/export`)).status).toBe(404);
  });
});

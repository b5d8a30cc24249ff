// Roles against routes (src/auth/roles.ts): every route of the app,
// enumerated from app.routes, is called as a viewer, an operator and an
// admin; a role below the route's is refused with 403 naming the role
// needed, and one at or above it gets past the check. A route this file has
// no expectation for fails the test, so a new route must say who may call it.
// Destructive confirmations are an admin's by button and by chat words.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OperatorRole } from "../src/db/schema.js";
import { type ApiHarness, browser, loginCookie, startApi } from "./helpers/api-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeExecution, makeSession } from "./helpers/factories.js";
import { makeApproval, makeDestroyApproval, makePendingExecutionApproval, makePlan } from "./helpers/web-factories.js";

const t = useTestDatabase();
let h: ApiHarness;
const as: Partial<Record<OperatorRole, ReturnType<typeof browser>>> = {};
let ids: { session: string; approval: string; execution: string };

/** The least role each route needs; "login" = any operator, "public" = nobody. */
const NEEDS: Record<string, OperatorRole | "public"> = {
  "GET /api/snapshots": "viewer",
  "GET /api/sessions/:id/snapshots": "viewer",
  // Asks for the rollback (a destructive approval); only an admin can then confirm it.
  "POST /api/snapshots/:id/rollback": "operator",
  "GET /api/me": "public",
  "POST /api/setup": "public",
  "POST /api/login": "public",
  "POST /api/logout": "public",
  "POST /api/tokens": "viewer",
  "GET /api/sessions": "viewer",
  "GET /api/sessions/:id": "viewer",
  "GET /api/sessions/:id/events": "viewer",
  "GET /api/sessions/:id/export": "viewer",
  "GET /api/events": "viewer",
  "GET /api/approvals": "viewer",
  "GET /api/executions/:id": "viewer",
  "POST /api/sessions": "operator",
  "POST /api/sessions/:id/messages": "operator",
  "DELETE /api/sessions/:id/assent": "operator",
  "PATCH /api/sessions/:id": "operator",
  "DELETE /api/sessions/:id": "operator",
  "POST /api/approvals/:id": "operator",
  "POST /api/executions/:id/cancel": "operator",
  // Issue 16: each operator's own notification settings; a destination is set by an operator.
  "GET /api/notifications/channels": "viewer",
  "PUT /api/notifications/channels/:kind": "operator",
  "DELETE /api/notifications/channels/:kind": "operator",
  "GET /api/notifications/vapid-public-key": "viewer",
  "POST /api/notifications/push-subscriptions": "operator",
  "DELETE /api/notifications/push-subscriptions": "viewer",
  "POST /api/notifications/test": "operator",
  "GET /api/notifications/deliveries": "viewer",
  // Operator management is an admin's (src/http/routes/operators.ts).
  "GET /api/operators": "admin",
  "POST /api/operators": "admin",
  "PATCH /api/operators/:id": "admin",
  "DELETE /api/operators/:id": "admin",
};

beforeAll(async () => {
  h = await startApi(t.db, t.url, { heartbeatMs: 50 });
  // The first operator created is an admin whatever is asked: make the admin first.
  as.admin = browser(h.app, await loginCookie(h.app, t.db, "ada", "tangerine orbit kettle", "admin"));
  as.operator = browser(h.app, await loginCookie(h.app, t.db, "olga", "tangerine orbit kettle", "operator"));
  as.viewer = browser(h.app, await loginCookie(h.app, t.db, "vic", "tangerine orbit kettle", "viewer"));
  ids = await makePendingExecutionApproval(t.db.kysely);
});
afterAll(async () => {
  await h.close();
});

function apiRoutes() {
  const out = new Map<string, { method: string; path: string }>();
  for (const r of h.app.routes) {
    if (r.method === "ALL" || !r.path.startsWith("/api/")) continue;
    out.set(`${r.method} ${r.path}`, { method: r.method, path: r.path });
  }
  return out;
}

const fill = (path: string) =>
  path.replace(":id", path.startsWith("/api/approvals") ? ids.approval : path.startsWith("/api/executions") ? ids.execution : ids.session);

const bodyFor = (key: string) =>
  key === "POST /api/sessions/:id/messages"
    ? { text: "hello" }
    : key === "POST /api/approvals/:id"
      ? { decision: "reject" }
      : key === "POST /api/tokens"
        ? { days: 1 }
        : key === "PATCH /api/sessions/:id"
          ? { title: "Renamed" }
          : {};

describe("each role against each route", () => {
  it("every route has an expectation here", () => {
    expect([...apiRoutes().keys()].sort()).toEqual(Object.keys(NEEDS).sort());
  });

  for (const role of ["viewer", "operator", "admin"] as const) {
    it(`as ${role}: refused with 403 naming the role below the route's, let through at or above it`, async () => {
      // Logout last: it ends this browser's login.
      const routes = [...apiRoutes()].sort(([a], [b]) => Number(a === "POST /api/logout") - Number(b === "POST /api/logout"));
      for (const [key, r] of routes) {
        const needed = NEEDS[key]!;
        const res = await as[role]!(fill(r.path), {
          method: r.method,
          ...(r.method === "GET" ? {} : { body: bodyFor(key) }),
          ...(key.endsWith("/events") ? { headers: { "last-event-id": "0" } } : {}),
        });
        const below =
          needed !== "public" && ["viewer", "operator", "admin"].indexOf(role) < ["viewer", "operator", "admin"].indexOf(needed);
        if (below) {
          expect(res.status, `${role} ${key}`).toBe(403);
          expect(await res.json()).toMatchObject({
            error: { code: "forbidden", message: expect.stringMatching(new RegExp(`needs the ${needed} role; you are an? ${role}`)) },
          });
        } else {
          expect(res.status, `${role} ${key}`).not.toBe(403);
          await res.body?.cancel();
        }
      }
    });
  }
});

describe("destructive confirmations are an admin's", () => {
  beforeAll(async () => {
    // The role tests above logged every browser out.
    as.admin = browser(h.app, await loginCookie(h.app, t.db, "ada", "tangerine orbit kettle"));
    as.operator = browser(h.app, await loginCookie(h.app, t.db, "olga", "tangerine orbit kettle"));
  });

  it("by button: an operator may reject one but not confirm it; an admin confirms it", async () => {
    const s = await makeSession(t.db.kysely);
    const a = await makeDestroyApproval(t.db.kysely, s.id, 105);
    const b = await makeDestroyApproval(t.db.kysely, s.id, 106);
    const refused = await as.operator!(`/api/approvals/${a.id}`, {
      method: "POST",
      body: { decision: "approve", confirmation: "destroy 105" },
    });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      error: { message: "confirming a destructive step needs the admin role; you are an operator" },
    });
    const rejected = await as.operator!(`/api/approvals/${b.id}`, { method: "POST", body: { decision: "reject" } });
    expect(await rejected.json()).toMatchObject({ status: "rejected", decidedBy: "operator:olga" });
    const confirmed = await as.admin!(`/api/approvals/${a.id}`, {
      method: "POST",
      body: { decision: "approve", confirmation: "destroy 105" },
    });
    expect(await confirmed.json()).toMatchObject({ status: "approved", decidedBy: "operator:ada", decidedVia: "button" });
  });

  it("an operator approves plans and non-destructive steps, and the decision records who made it", async () => {
    const s = await makeSession(t.db.kysely);
    const plan = await makePlan(t.db.kysely, { session_id: s.id });
    const a = await makeApproval(t.db.kysely, { session_id: s.id, kind: "plan", plan_id: plan.id });
    const res = await as.operator!(`/api/approvals/${a.id}`, { method: "POST", body: { decision: "approve" } });
    expect(await res.json()).toMatchObject({ status: "approved", decidedBy: "operator:olga" });
    const audit = await t.db.kysely
      .selectFrom("audit.events")
      .select("actor")
      .where("table_name", "=", "approvals")
      .where("row_key", "=", a.id)
      .where("operation", "=", "UPDATE")
      .executeTakeFirstOrThrow();
    expect(audit.actor).toBe("operator:olga");
  });

  it("by chat words: the author's role decides whether the typed phrase confirms a destructive step", async () => {
    const s = await makeSession(t.db.kysely);
    const x = await makeExecution(t.db.kysely, { session_id: s.id, command: "pct destroy 105", risk: "destructive" });
    const a = await makeApproval(t.db.kysely, {
      session_id: s.id,
      kind: "execution",
      execution_id: x.id,
      confirmation_phrase: "destroy 105",
    });
    const status = async () =>
      (await t.db.kysely.selectFrom("approvals").select("status").where("id", "=", a.id).executeTakeFirstOrThrow()).status;
    expect((await as.operator!(`/api/sessions/${s.id}/messages`, { method: "POST", body: { text: "destroy 105" } })).status).toBe(202);
    await h.turns.idle(s.id);
    expect(await status()).toBe("pending");
    expect((await as.admin!(`/api/sessions/${s.id}/messages`, { method: "POST", body: { text: "destroy 105" } })).status).toBe(202);
    await h.turns.idle(s.id);
    expect(await status()).toBe("approved");
  });

  it("/api/me tells the page the role, so it can hide what the role cannot do", async () => {
    expect(await (await as.operator!("/api/me")).json()).toMatchObject({ operator: { username: "olga", role: "operator" } });
  });
});

// Operator management over the API (src/http/routes/operators.ts and
// src/auth/operator-accounts.ts), in-process on real PostgreSQL: an admin
// lists, adds, re-roles and removes operators; bad input is a 400 naming the
// field; a taken username is a 409; nobody below admin gets in; the last
// admin can be neither demoted nor removed, even by two admins at once (a
// demotion waits for one in flight and counts the admins it left); an
// admin cannot remove themself; a role change holds on the very next
// request; a removed operator's cookie stops working while their sessions
// stay; the audit trail names the admin who did each change.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withActor } from "../src/db/with-actor.js";
import { type ApiHarness, browser, loginCookie, ORIGIN, startApi } from "./helpers/api-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";
import { until } from "./helpers/notify-receivers.js";

const t = useTestDatabase();
const TOKEN = "an-api-token-for-operator-admin-0123";
const PASSWORD = "tangerine orbit kettle";
let h: ApiHarness;
let ada: ReturnType<typeof browser>;

interface OperatorView {
  id: string;
  username: string;
  role: string;
  createdAt: string;
  lastLoginAt: string | null;
}

const byToken = (path: string, init: { method?: string; body?: unknown } = {}) =>
  h.app.request(path, {
    method: init.method ?? "GET",
    headers: {
      authorization: `Bearer ${TOKEN}`,
      origin: ORIGIN,
      ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });

async function list(as: ReturnType<typeof browser> = ada): Promise<OperatorView[]> {
  const res = await as("/api/operators");
  expect(res.status).toBe(200);
  return ((await res.json()) as { operators: OperatorView[] }).operators;
}

const idOf = async (username: string) =>
  (await t.db.kysely.selectFrom("operators").select("id").where("username", "=", username).executeTakeFirstOrThrow()).id;

async function add(username: string, role: string) {
  const res = await ada("/api/operators", { method: "POST", body: { username, password: PASSWORD, role } });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as { operator: OperatorView }).operator;
}

beforeAll(async () => {
  h = await startApi(t.db, t.url, { apiToken: TOKEN }, { withoutAgent: true });
  ada = browser(h.app, await loginCookie(h.app, t.db, "ada", PASSWORD, "admin"));
});
afterAll(async () => {
  await h.close();
});

describe("operator management", () => {
  it("lists operators with their role, creation and last login", async () => {
    const [me] = await list();
    expect(me).toMatchObject({ username: "ada", role: "admin" });
    expect(Date.parse(me!.createdAt)).not.toBeNaN();
    expect(Date.parse(me!.lastLoginAt!)).not.toBeNaN();
    expect(JSON.stringify(me)).not.toContain("password");
  });

  it("adds an operator who can then log in with the role given", async () => {
    const created = await add("vera", "viewer");
    expect(created).toMatchObject({ username: "vera", role: "viewer", lastLoginAt: null });
    const vera = browser(h.app, await loginCookie(h.app, t.db, "vera", PASSWORD));
    expect(await (await vera("/api/me")).json()).toMatchObject({ operator: { username: "vera", role: "viewer" } });
    expect((await list()).find((o) => o.username === "vera")!.lastLoginAt).not.toBeNull();
  });

  it("refuses bad input naming the field, and a taken username with 409", async () => {
    const cases: [unknown, string][] = [
      [{ username: "no spaces", password: PASSWORD, role: "viewer" }, "body.username"],
      // The name NOMOS_API_TOKEN's caller acts under: an operator of that name would share its audit lines.
      [{ username: "api-token", password: PASSWORD, role: "viewer" }, "body.username"],
      [{ username: "zed", password: "short", role: "viewer" }, "body.password"],
      [{ username: "zed", password: "password123", role: "viewer" }, "body.password"],
      [{ username: "zed", password: PASSWORD, role: "root" }, "body.role"],
      [{ username: "zed", password: PASSWORD }, "body.role"],
    ];
    for (const [body, field] of cases) {
      const res = await ada("/api/operators", { method: "POST", body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      const json = (await res.json()) as { error: { message: string; field?: string } };
      expect(json.error.message, JSON.stringify(body)).toMatch(new RegExp(`^${field.replace(".", "\\.")}: `));
    }
    const weak = await ada("/api/operators", { method: "POST", body: { username: "zed", password: "password123", role: "viewer" } });
    expect(((await weak.json()) as { error: { message: string } }).error.message).toMatch(/too easy to guess/);
    const taken = await ada("/api/operators", { method: "POST", body: { username: "ada", password: PASSWORD, role: "viewer" } });
    expect(taken.status).toBe(409);
    expect(await taken.json()).toMatchObject({ error: { code: "conflict", message: "body.username: ada is already taken" } });
    const badRole = await ada(`/api/operators/${await idOf("ada")}`, { method: "PATCH", body: { role: "owner" } });
    expect(await badRole.json()).toMatchObject({ error: { message: expect.stringMatching(/^body\.role: /) } });
    const badId = await ada("/api/operators/not-a-uuid", { method: "DELETE" });
    expect(await badId.json()).toMatchObject({ error: { message: expect.stringMatching(/^path\.id: /) } });
    const gone = await ada("/api/operators/00000000-0000-4000-8000-000000000000", { method: "PATCH", body: { role: "viewer" } });
    expect(gone.status).toBe(404);
  });

  it("refuses a viewer and an operator with 403", async () => {
    await add("otto", "operator");
    const otto = browser(h.app, await loginCookie(h.app, t.db, "otto", PASSWORD));
    const vera = browser(h.app, await loginCookie(h.app, t.db, "vera", PASSWORD));
    const target = await idOf("otto");
    for (const [who, as] of [
      ["an operator", otto],
      ["a viewer", vera],
    ] as const) {
      for (const [method, path, body] of [
        ["GET", "/api/operators", undefined],
        ["POST", "/api/operators", { username: "sneaky", password: PASSWORD, role: "admin" }],
        ["PATCH", `/api/operators/${target}`, { role: "admin" }],
        ["DELETE", `/api/operators/${target}`, undefined],
      ] as const) {
        const res = await as(path, { method, ...(body ? { body } : {}) });
        expect(res.status, `${who} ${method} ${path}`).toBe(403);
        expect(await res.json()).toMatchObject({
          error: { message: `managing operators needs the admin role; you are ${who}` },
        });
      }
    }
    expect((await list()).map((o) => o.username)).not.toContain("sneaky");
  });

  it("a role change holds on the operator's very next request", async () => {
    const bea = await add("bea", "admin");
    const asBea = browser(h.app, await loginCookie(h.app, t.db, "bea", PASSWORD));
    expect((await asBea("/api/operators")).status).toBe(200);
    const demoted = await ada(`/api/operators/${bea.id}`, { method: "PATCH", body: { role: "operator" } });
    expect(await demoted.json()).toMatchObject({ operator: { username: "bea", role: "operator" } });
    const refused = await asBea("/api/operators");
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { message: "managing operators needs the admin role; you are an operator" } });
    expect(await (await asBea("/api/me")).json()).toMatchObject({ operator: { role: "operator" } });
    await ada(`/api/operators/${bea.id}`, { method: "PATCH", body: { role: "admin" } });
    expect((await asBea("/api/operators")).status).toBe(200);
  });

  it("never leaves zero admins, and an admin cannot remove themself", async () => {
    // ada and bea are the admins: demote bea, then ada is the last one.
    await ada(`/api/operators/${await idOf("bea")}`, { method: "PATCH", body: { role: "viewer" } });
    const adaId = await idOf("ada");
    const demote = await ada(`/api/operators/${adaId}`, { method: "PATCH", body: { role: "operator" } });
    expect(demote.status).toBe(409);
    expect(await demote.json()).toMatchObject({
      error: {
        code: "conflict",
        message: "Nomos needs an admin, and ada is the last one: make another operator an admin before demoting them",
      },
    });
    // Setting the role an admin already holds is no demotion.
    expect((await ada(`/api/operators/${adaId}`, { method: "PATCH", body: { role: "admin" } })).status).toBe(200);
    const self = await ada(`/api/operators/${adaId}`, { method: "DELETE" });
    expect(self.status).toBe(409);
    expect(await self.json()).toMatchObject({ error: { message: "you cannot remove yourself; another admin can" } });
    // The API token is an admin but nobody's login: it may remove anyone but the last admin.
    const byScript = await byToken(`/api/operators/${adaId}`, { method: "DELETE" });
    expect(byScript.status).toBe(409);
    expect(await byScript.json()).toMatchObject({
      error: { message: "Nomos needs an admin, and ada is the last one: make another operator an admin before removing them" },
    });
    expect((await list()).filter((o) => o.role === "admin").map((o) => o.username)).toEqual(["ada"]);
  });

  it("a demotion in flight is waited for: two admins demoting each other leave one admin", async () => {
    const kim = await add("kim", "admin");
    const lee = await add("lee", "admin");
    const asLee = browser(h.app, await loginCookie(h.app, t.db, "lee", PASSWORD));
    // ada steps down (allowed: kim and lee remain); kim and lee then demote each other.
    const adaId = await idOf("ada");
    expect((await ada(`/api/operators/${adaId}`, { method: "PATCH", body: { role: "operator" } })).status).toBe(200);
    let leeDemotesKim: Promise<Response> | undefined;
    // kim's demotion of lee, as operator-accounts.ts makes it, held open until
    // lee's demotion of kim waits on the same lock. Without the lock, lee's
    // statement would see kim's change uncommitted, count lee as an admin, and
    // succeed: zero admins (and this wait would never end).
    await withActor(t.db.kysely, "operator:kim", async (tx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtext('nomos.operator_admins'))`.execute(tx);
      await tx.updateTable("operators").set({ role: "viewer" }).where("id", "=", lee.id).execute();
      leeDemotesKim = Promise.resolve(asLee(`/api/operators/${kim.id}`, { method: "PATCH", body: { role: "viewer" } }));
      await until("lee's demotion waits for the lock", async () => {
        const { rows } = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (
            SELECT oid FROM pg_database WHERE datname = current_database())`.execute(t.db.kysely);
        return rows[0]!.n > 0;
      });
    });
    const res = await leeDemotesKim!;
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ error: { message: expect.stringContaining("kim is the last one") } });
    const admins = await t.db.kysely.selectFrom("operators").select("username").where("role", "=", "admin").execute();
    expect(admins).toEqual([{ username: "kim" }]);
    // ada is the admin the rest of the file acts as.
    await withActor(t.db.kysely, "system:test", (tx) =>
      tx.updateTable("operators").set({ role: "admin" }).where("id", "=", adaId).execute(),
    );
  });

  it("removing an operator ends their logins at once and keeps their sessions", async () => {
    const gus = await add("gus", "operator");
    const asGus = browser(h.app, await loginCookie(h.app, t.db, "gus", PASSWORD));
    const session = await makeSession(t.db.kysely, { title: "Gus's work", operator_id: gus.id });
    expect((await asGus("/api/sessions")).status).toBe(200);
    const removed = await ada(`/api/operators/${gus.id}`, { method: "DELETE" });
    expect(removed.status).toBe(204);
    expect((await asGus("/api/sessions")).status).toBe(401);
    expect(await (await asGus("/api/me")).json()).toMatchObject({ operator: null });
    const kept = await t.db.kysely.selectFrom("sessions").select(["title", "operator_id"]).where("id", "=", session.id).executeTakeFirst();
    expect(kept).toEqual({ title: "Gus's work", operator_id: null });
    expect((await list()).map((o) => o.username)).not.toContain("gus");
    expect((await ada(`/api/operators/${gus.id}`, { method: "DELETE" })).status).toBe(404);
  });

  it("records each change in the audit trail with the admin as actor", async () => {
    const rows = await t.db.kysely
      .selectFrom("audit.events")
      .select(["actor", "table_name", "operation", "row_key", "new_row", "old_row"])
      .where("table_name", "in", ["operators", "operator_logins"])
      .where("actor", "=", "operator:ada")
      .orderBy("id")
      .execute();
    const vera = rows.find(
      (r) => r.table_name === "operators" && r.operation === "INSERT" && (r.new_row as { username: string }).username === "vera",
    );
    expect(vera?.new_row).toMatchObject({ role: "viewer" });
    expect(JSON.stringify(vera?.new_row)).not.toContain("scrypt");
    const bea = await idOf("bea");
    expect(rows.filter((r) => r.table_name === "operators" && r.operation === "UPDATE" && r.row_key === bea).length).toBeGreaterThanOrEqual(
      2,
    );
    const gusDeleted = rows.find((r) => r.table_name === "operators" && r.operation === "DELETE");
    expect(gusDeleted?.old_row).toMatchObject({ username: "gus", role: "operator" });
    // The cascade's login rows went under the same actor.
    expect(rows.some((r) => r.table_name === "operator_logins" && r.operation === "DELETE" && r.row_key === gusDeleted?.row_key)).toBe(
      true,
    );
  });
});

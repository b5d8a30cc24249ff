// Bad input on every HTTP route, property-based. The routes are enumerated
// from the app itself (app.routes), so a route added later is fuzzed too.
// Invariant: whatever a logged-in browser sends (malformed JSON, wrong types,
// huge or deeply nested bodies, lone surrogates, NUL, RTL marks, emoji), the
// answer is never a 5xx; a 4xx is JSON naming what is wrong; and a refused
// request writes nothing (rows of every domain table and the audit trail are
// counted before and after).
import fc from "fast-check";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, browser, loginCookie, startApi } from "./helpers/api-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makePendingExecutionApproval } from "./helpers/web-factories.js";

const t = useTestDatabase();
let h: ApiHarness;
let req: ReturnType<typeof browser>;
let ids: { session: string; approval: string; execution: string };

beforeAll(async () => {
  h = await startApi(t.db, t.url, { heartbeatMs: 50 });
  req = browser(h.app, await loginCookie(h.app, t.db));
  ids = await makePendingExecutionApproval(t.db.kysely);
});
afterAll(async () => {
  await h.close();
});

/** The app's own /api routes with a method, :id filled with an id of the right kind. */
function apiRoutes(): { method: string; path: string }[] {
  const seen = new Set<string>();
  const out: { method: string; path: string }[] = [];
  for (const r of h.app.routes) {
    // Logout is fuzzed last, by itself: it would end this browser's login.
    if (r.method === "ALL" || !r.path.startsWith("/api/") || r.path === "/api/logout") continue;
    const key = `${r.method} ${r.path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const id = r.path.startsWith("/api/approvals") ? ids.approval : r.path.startsWith("/api/executions") ? ids.execution : ids.session;
    out.push({ method: r.method, path: r.path.replace(":id", id) });
  }
  return out;
}

const TABLES = [
  "sessions",
  "messages",
  "turns",
  "approvals",
  "executions",
  "plans",
  "assent_windows",
  "operators",
  "operator_logins",
  "session_events",
];
async function counts(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of [...TABLES, "audit.events"]) {
    const r = await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(table)}`.execute(t.db.kysely);
    out[table] = Number(r.rows[0]!.n);
  }
  return out;
}

// Strings a careless client or an attacker sends.
const nasty = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.constantFrom(
    "\0",
    "a\0b",
    "\ud800",
    "x\udfffy",
    "\u202eevil\u202c",
    "👩‍👩‍👧‍👦",
    "",
    " ",
    "\n\t",
    "<script>alert(1)</script>",
    "'; DROP TABLE sessions; --",
    "approve",
    "x".repeat(25_000),
  ),
);
const FIELDS = ["title", "text", "decision", "confirmation", "username", "password", "days", "__proto__", "constructor"];
const value: fc.Arbitrary<unknown> = fc.oneof(
  nasty,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(nasty, { maxLength: 3 }),
  fc.dictionary(nasty, nasty, { maxKeys: 3 }),
);
const objectBody = fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), nasty), value, { maxKeys: 4 }).map((o) => JSON.stringify(o));
const malformed = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    "{",
    '{"text":',
    "[1,2",
    '{"text": "\\ud800"}',
    '{"text": "a\\u0000b"}',
    '{"title": "\\u0000"}',
    "null",
    "42",
    '"str"',
    "[]",
    '{"text": "ok",}',
    "\u0000",
  ),
);
const bodyArb = fc.oneof(
  objectBody,
  malformed,
  fc.jsonValue().map((v) => JSON.stringify(v)),
);

/** encodeURIComponent, except a lone surrogate goes out as the invalid UTF-8 bytes a broken client would send. */
const enc = (s: string) => {
  try {
    return encodeURIComponent(s);
  } catch {
    return "%ED%A0%80";
  }
};

async function expectClean(res: Response, label: string) {
  expect(res.status, label).toBeLessThan(500);
  if (res.status >= 400) {
    const body = (await res.json()) as { error?: { code?: string; message?: string } };
    expect(typeof body.error?.message, label).toBe("string");
    expect(body.error!.message!.length, label).toBeGreaterThan(0);
  } else {
    await res.body?.cancel();
  }
}

describe("every /api route under bad input", () => {
  it("lists the routes it fuzzes (a new route is fuzzed without editing this file)", () => {
    const routes = apiRoutes().map((r) => r.method);
    expect(routes.length).toBeGreaterThanOrEqual(12);
    expect(routes).toContain("POST");
  });

  it("answers bodies of any shape with a 4xx naming what is wrong, writing nothing, or accepts them", async () => {
    const writers = apiRoutes().filter((r) => r.method !== "GET");
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...writers), bodyArb, async (route, body) => {
        // An accepted message runs a real turn; it ends before the next count.
        await h.turns.idle(ids.session);
        const before = await counts();
        const res = await req(route.path, { method: route.method, body, headers: { "content-type": "application/json" } });
        const label = `${route.method} ${route.path} ${JSON.stringify(body).slice(0, 200)} -> ${res.status}`;
        const status = res.status;
        const payload =
          status >= 400 ? ((await res.clone().json()) as { error: { code: string; message: string; field?: string } }) : undefined;
        await expectClean(res, label);
        if (status === 400 && payload) {
          // A 400 says where: a field of the body, or that the body is not JSON.
          expect(payload.error.message, label).toMatch(/^(body|path|query|header)\b|JSON|json|malformed|body/i);
        }
        await h.turns.idle(ids.session);
        if (status >= 400 && route.path !== "/api/login") {
          expect(await counts(), label).toEqual(before);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("answers query strings and path ids of any shape on every GET with a 4xx or the data", async () => {
    const readers = apiRoutes().filter((r) => r.method === "GET" && !r.path.endsWith("/events"));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...readers),
        fc.dictionary(fc.constantFrom("session", "status", "after", "x"), nasty, { maxKeys: 3 }),
        nasty,
        async (route, query, id) => {
          const q = Object.entries(query as Record<string, string>)
            .map(([k, v]) => `${k}=${enc(v)}`)
            .join("&");
          const res = await req(`${route.path}?${q}`);
          await expectClean(res, `GET ${route.path}?${q}`);
          const bad = await req(route.path.replace(/[0-9a-f-]{36}/, enc(id) || "x"));
          await expectClean(bad, `GET ${route.path} with id ${JSON.stringify(id)}`);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("answers the event stream's bad Last-Event-ID and ?after= with a 400 naming them", async () => {
    await fc.assert(
      fc.asyncProperty(
        nasty.filter((s) => !/^\d{1,19}$/.test(s)),
        async (after) => {
          const res = await req(`/api/sessions/${ids.session}/events?after=${enc(after)}`);
          expect(res.status).toBe(400);
          expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/^query\.after/);
        },
      ),
      { numRuns: 50 },
    );
    const res = await req(`/api/sessions/${ids.session}/events`, { headers: { "last-event-id": "1 OR 1=1" } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { field: string } }).error.field).toBe("header.last-event-id");
    // Digits past a bigint reached PostgreSQL as its raw error before issue 14.
    for (const big of ["9999999999999999999", "9223372036854775808"]) {
      const query = await req(`/api/sessions/${ids.session}/events?after=${big}`);
      expect(query.status).toBe(400);
      expect(((await query.json()) as { error: { field: string } }).error.field).toBe("query.after");
      const header = await req(`/api/sessions/${ids.session}/events`, { headers: { "last-event-id": big } });
      expect(header.status).toBe(400);
      expect(((await header.json()) as { error: { field: string } }).error.field).toBe("header.last-event-id");
    }
  });

  it("refuses a huge body (413) and a deeply nested one (4xx) on every writing route, writing nothing", async () => {
    for (const route of apiRoutes().filter((r) => r.method !== "GET")) {
      await h.turns.idle(ids.session);
      const before = await counts();
      const huge = await req(route.path, { method: route.method, body: JSON.stringify({ text: "x".repeat(2 * 1024 * 1024) }) });
      expect(huge.status, `${route.method} ${route.path}`).toBe(413);
      await huge.body?.cancel();
      expect(await counts(), `${route.method} ${route.path} huge`).toEqual(before);
      const deep = await req(route.path, { method: route.method, body: `${"[".repeat(400_000)}${"]".repeat(400_000)}` });
      await expectClean(deep, `${route.method} ${route.path} nested`);
      // A route that reads no body (Stop) accepts it and acts, as the real Stop does; a refusal writes nothing.
      if (deep.status >= 400) expect(await counts(), `${route.method} ${route.path}`).toEqual(before);
    }
  });

  it("stores unicode edge cases it accepts exactly as sent, and a NUL or a lone surrogate is a 400 naming the field", async () => {
    for (const title of ["\u202eevil\u202c", "👩‍👩‍👧‍👦 ünïcödé", "שלום עולם"]) {
      const res = await req("/api/sessions", { method: "POST", body: { title } });
      expect(res.status).toBe(201);
      const { id } = (await res.json()) as { id: string };
      const row = await t.db.kysely.selectFrom("sessions").select("title").where("id", "=", id).executeTakeFirstOrThrow();
      expect(row.title).toBe(title);
    }
    const before = await counts();
    const nul = await req("/api/sessions", { method: "POST", body: { title: "a\0b" } });
    expect(nul.status).toBe(400);
    expect(((await nul.json()) as { error: { field: string } }).error.field).toBe("body.title");
    const msg = await req(`/api/sessions/${ids.session}/messages`, { method: "POST", body: { text: "hi\0there" } });
    expect(msg.status).toBe(400);
    expect(((await msg.json()) as { error: { field: string } }).error.field).toBe("body.text");
    const lone = await req(`/api/sessions/${ids.session}/messages`, { method: "POST", body: '{"text": "half \\ud800 a pair"}' });
    expect(lone.status).toBe(400);
    expect(((await lone.json()) as { error: { message: string } }).error.message).toMatch(/^body\.text: .*lone UTF-16 surrogate/);
    expect(await counts()).toEqual(before);
  });

  it("logout answers any body without a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(bodyArb, async (body) => {
        const res = await h.app.request("/api/logout", {
          method: "POST",
          headers: { origin: "http://localhost", "content-type": "application/json" },
          body,
        });
        await expectClean(res, `logout ${body.slice(0, 100)}`);
      }),
      { numRuns: 50 },
    );
  });
});

// Operators and login: scrypt hashes, password strength, the first operator
// (environment, and the page with its setup code), cookie logins stored as
// sha256, Bearer tokens, logout, cross-site refusal, and the operator as the
// audited actor. Throttling has its own file (auth-throttle.test.ts).
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operatorCount, operatorCreate, operatorEnsureFirst } from "../src/auth/operators.js";
import { passwordHash, passwordVerify } from "../src/auth/password.js";
import { passwordProblem } from "../src/auth/password-strength.js";
import { publicOriginFrom } from "../src/http/public-origin.js";
import { type ApiHarness, browser, loginCookie, ORIGIN, SETUP_CODE, startApi } from "./helpers/api-harness.js";
import { useTestDatabase } from "./helpers/database.js";

const t = useTestDatabase();
let h: ApiHarness;
const API_TOKEN = "a-long-enough-api-token-for-tests";
const LOCAL = { host: "127.0.0.1", port: 8080 };
/** A request from its own source address (X-Forwarded-For, trusted here). */
const from = (address: string) => ({ "x-forwarded-for": address });

beforeAll(async () => {
  // Behind a "proxy", so refused attempts can come from their own addresses
  // (X-Forwarded-For) and leave the throttle of the address the other tests
  // log in from alone.
  h = await startApi(t.db, t.url, { apiToken: API_TOKEN }, { publicOrigin: publicOriginFrom({ ...LOCAL, trustProxy: true }) });
});
afterAll(async () => {
  await h.close();
});

/** The actor the audit trail names for a session's creation. */
const sessionCreatedBy = async (id: string) =>
  (
    await t.db.kysely
      .selectFrom("audit.events")
      .select("actor")
      .where("table_name", "=", "sessions")
      .where("row_key", "=", id)
      .executeTakeFirstOrThrow()
  ).actor;

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  h.app.request(path, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN, ...headers },
    body: JSON.stringify(body),
  });

describe("passwords", () => {
  it("hashes with scrypt and verifies only the right password", async () => {
    const hash = await passwordHash("s3cret-enough");
    expect(hash).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(await passwordVerify("s3cret-enough", hash)).toBe(true);
    expect(await passwordVerify("s3cret-enougH", hash)).toBe(false);
    expect(await passwordVerify("x", "not-a-hash")).toBe(false);
  });

  it("refuses guessable new passwords, saying why; a few unrelated words pass", () => {
    expect(passwordProblem("short")).toBe("password must be at least 8 characters");
    expect(passwordProblem("password123")).toMatch(/^password is too easy to guess: it is a very common password/);
    expect(passwordProblem("P@ssw0rd123")).toMatch(/too easy to guess: it is a small change to a very common password/);
    expect(passwordProblem("qwertyuiop")).toMatch(/too easy to guess/);
    expect(passwordProblem("rootroot1", { username: "rootroot1" })).toMatch(/too easy to guess/);
    expect(passwordProblem("tangerine orbit kettle")).toBeUndefined();
  });
});

describe("the first operator", () => {
  it("the page asks for one while there is none; setup needs the code from the log, a strong password, and works once", async () => {
    const me = await h.app.request("/api/me");
    expect(await me.json()).toMatchObject({ operator: null, needsSetup: true });

    for (const setupCode of [undefined, "WRONG-CODE-0000", ""]) {
      const refused = await post("/api/setup", { username: "root", password: "tangerine orbit kettle", setupCode }, from("192.0.2.1"));
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({
        error: {
          code: "forbidden",
          field: "body.setupCode",
          message: expect.stringMatching(/setup code .* printed in the Nomos service log/),
        },
      });
    }
    const short = await post("/api/setup", { username: "root", password: "short", setupCode: SETUP_CODE });
    expect(short.status).toBe(400);
    expect(await short.json()).toMatchObject({ error: { field: "body.password" } });
    const weak = await post("/api/setup", { username: "root", password: "password123", setupCode: SETUP_CODE });
    expect(weak.status).toBe(400);
    expect(await weak.json()).toMatchObject({ error: { field: "body.password", message: expect.stringMatching(/too easy to guess/) } });
    expect(await operatorCount(t.db.kysely)).toBe(0);

    // The code is typed by hand: case and dashes do not matter.
    const res = await post("/api/setup", { username: "root", password: "tangerine orbit kettle", setupCode: "test setupcode" });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ operator: { username: "root", role: "admin" } });
    const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
    const me2 = await h.app.request("/api/me", { headers: { cookie } });
    expect(await me2.json()).toMatchObject({ operator: { username: "root", role: "admin" }, needsSetup: false });

    const again = await post("/api/setup", { username: "mallory", password: "tangerine orbit kettle", setupCode: SETUP_CODE });
    expect(again.status).toBe(409);
    expect(await operatorCount(t.db.kysely)).toBe(1);
  });

  it("a process without a setup code (operators existed at its start) refuses the form", async () => {
    const own = await startApi(t.db, t.url, { setupCode: undefined });
    try {
      const res = await own.app.request("/api/setup", {
        method: "POST",
        headers: { "content-type": "application/json", origin: ORIGIN },
        body: JSON.stringify({ username: "x", password: "tangerine orbit kettle", setupCode: SETUP_CODE }),
      });
      expect(res.status).toBe(403);
    } finally {
      await own.close();
    }
  });

  it("from the environment only when no operator exists, never changing one", async () => {
    expect(await operatorEnsureFirst(t.db.kysely, { username: "envadmin", password: "whatever123" })).toBeUndefined();
    const row = await t.db.kysely.selectFrom("operators").select("username").execute();
    expect(row.map((r) => r.username)).not.toContain("envadmin");
    await expect(operatorCreate(t.db.kysely, { username: "root", password: "another pw", actor: "system:test" })).rejects.toThrow(
      /already exists/,
    );
  });
});

describe("login", () => {
  it("sets an HttpOnly SameSite=Strict cookie whose sha256 is stored, never the token", async () => {
    await operatorCreate(t.db.kysely, { username: "bob", password: "bobs password", actor: "system:test" });
    const res = await post("/api/login", { username: "bob", password: "bobs password" });
    expect(res.status).toBe(200);
    const setCookie = res.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/^nomos_session=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Path=\//);
    const token = /^nomos_session=([^;]+)/.exec(setCookie)![1]!;
    const stored = await t.db.kysely.selectFrom("operator_logins").select("token_sha256").execute();
    const hashes = stored.map((r) => r.token_sha256);
    expect(hashes).toContain(createHash("sha256").update(token).digest("hex"));
    expect(hashes).not.toContain(token);
  });

  it("answers a wrong password and an unknown user alike with 401", async () => {
    const a = await post("/api/login", { username: "bob", password: "wrong password" }, from("192.0.2.2"));
    const b = await post("/api/login", { username: "nobody", password: "wrong password" }, from("192.0.2.2"));
    expect(a.status).toBe(401);
    expect(b.status).toBe(401);
    expect(await a.json()).toEqual(await b.json());
  });

  it("logout forgets the login: the cookie stops working", async () => {
    const cookie = await loginCookie(h.app, t.db, "bob", "bobs password");
    const req = browser(h.app, cookie);
    expect((await req("/api/sessions")).status).toBe(200);
    expect((await req("/api/logout", { method: "POST" })).status).toBe(204);
    expect((await req("/api/sessions")).status).toBe(401);
  });
});

describe("who may call /api", () => {
  it("401 without a cookie or token, with a message saying how to log in", async () => {
    const res = await h.app.request("/api/sessions");
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { code: "unauthorized", message: expect.stringMatching(/log in/) } });
  });

  it("401 for an unknown bearer token and a malformed Authorization header", async () => {
    const a = await h.app.request("/api/sessions", { headers: { authorization: "Bearer nope" } });
    const b = await h.app.request("/api/sessions", { headers: { authorization: "Basic abc" } });
    expect(a.status).toBe(401);
    expect(b.status).toBe(401);
  });

  it("NOMOS_API_TOKEN works for scripts, without an Origin, and acts as operator:api-token", async () => {
    const res = await h.app.request("/api/sessions", {
      method: "POST",
      headers: { authorization: `Bearer ${API_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ title: "from a script" }),
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    expect(await sessionCreatedBy(id)).toBe("operator:api-token");
  });

  it("an operator's own token from POST /api/tokens works as Bearer and audits under their name", async () => {
    const cookie = await loginCookie(h.app, t.db, "bob", "bobs password");
    const res = await browser(h.app, cookie)("/api/tokens", { method: "POST", body: { days: 7 } });
    expect(res.status).toBe(201);
    const { token } = (await res.json()) as { token: string };
    const created = await h.app.request("/api/sessions", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect(await sessionCreatedBy(id)).toBe("operator:bob");
  });
});

describe("cross-site requests", () => {
  it("refuses a state-changing request with a foreign Origin (403), even with a valid cookie", async () => {
    const cookie = await loginCookie(h.app, t.db, "bob", "bobs password");
    const res = await h.app.request("/api/sessions", {
      method: "POST",
      headers: { cookie, origin: "http://evil.example", "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: { code: "forbidden", message: expect.stringMatching(/cross-site/) } });
  });

  it("refuses a cookie request with neither Origin nor same-origin Fetch Metadata", async () => {
    const cookie = await loginCookie(h.app, t.db, "bob", "bobs password");
    const cross = await h.app.request("/api/sessions", {
      method: "POST",
      headers: { cookie, "sec-fetch-site": "cross-site", "content-type": "application/json" },
      body: "{}",
    });
    expect(cross.status).toBe(403);
    const bare = await h.app.request("/api/sessions", {
      method: "POST",
      headers: { cookie, "content-type": "application/json" },
      body: "{}",
    });
    expect(bare.status).toBe(403);
  });

  it("refuses a cross-site login (login CSRF)", async () => {
    const res = await post("/api/login", { username: "bob", password: "bobs password" }, { origin: "https://evil.example" });
    expect(res.status).toBe(403);
  });

  it("lets reads through from anywhere the cookie is sent (they change nothing)", async () => {
    const cookie = await loginCookie(h.app, t.db, "bob", "bobs password");
    const res = await h.app.request("/api/sessions", { headers: { cookie, origin: "http://evil.example" } });
    expect(res.status).toBe(200);
  });
});

// Intrusion, at the edges the other files do not already pin (see
// docs/reliability.md for the whole table): every route, enumerated from the
// app itself, refuses a Host that is not ours with 421 (DNS rebinding) before
// it runs; every /api route refuses a caller without a login and a
// cross-site caller with one; pct_create fields and target names cannot smuggle a shell
// command onto a node (the SSH double's log shows the exact command
// received). Invariant: a route added later is covered without editing this
// file, and the public routes are exactly the four that must be.
import fc from "fast-check";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicOriginFrom } from "../src/http/public-origin.js";
import { createLogger } from "../src/log/logger.js";
import { PctCreateError, pctCreate } from "../src/pct/pct-create.js";
import { parseShell } from "../src/risk/shell-words.js";
import { SshPool } from "../src/ssh/connection-pool.js";
import { makeRedactor } from "../src/ssh/redact.js";
import { TargetRegistry } from "../src/targets/registry.js";
import { TARGET_NAME } from "../src/targets/targets-file.js";
import { type ApiHarness, loginCookie, startApi } from "./helpers/api-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";
import { SshTestHost } from "./helpers/ssh-test-host.js";
import { makePendingExecutionApproval } from "./helpers/web-factories.js";

const t = useTestDatabase();
const log = createLogger({ level: "silent" });
let h: ApiHarness;
let cookie: string;
let ids: { session: string; approval: string; execution: string };
const PUBLIC = ["GET /api/me", "POST /api/setup", "POST /api/login", "POST /api/logout"];

beforeAll(async () => {
  h = await startApi(t.db, t.url, { heartbeatMs: 50 });
  cookie = await loginCookie(h.app, t.db);
  ids = await makePendingExecutionApproval(t.db.kysely);
});
afterAll(async () => {
  await h.close();
});

function apiRoutes() {
  const out = new Map<string, { method: string; path: string; key: string }>();
  for (const r of h.app.routes) {
    if (r.method === "ALL" || !r.path.startsWith("/api/")) continue;
    const id = r.path.startsWith("/api/approvals") ? ids.approval : r.path.startsWith("/api/executions") ? ids.execution : ids.session;
    const key = `${r.method} ${r.path}`;
    out.set(key, { method: r.method, path: r.path.replace(":id", id), key });
  }
  return [...out.values()];
}

async function writes() {
  const r = await sql<{ n: string }>`SELECT count(*) AS n FROM audit.events`.execute(t.db.kysely);
  return Number(r.rows[0]!.n);
}

describe("every /api route, enumerated from the app", () => {
  it("refuses a caller without a login, a forged cookie or a wrong token with 401; only the four public routes answer", async () => {
    const routes = apiRoutes();
    expect(routes.length).toBeGreaterThanOrEqual(14);
    const open: string[] = [];
    for (const r of routes) {
      for (const headers of <Record<string, string>[]>[
        {},
        { cookie: "nomos_session=forged" },
        { authorization: "Bearer not-a-real-token-000000" },
        { authorization: "Basic YWxpY2U6eA==" },
      ]) {
        const res = await h.app.request(r.path, {
          method: r.method,
          headers: { origin: "http://localhost", "content-type": "application/json", ...headers },
          body: r.method === "GET" ? undefined : "{}",
        });
        // Wrong bearer tokens are throttled per source: after a few, 429 (still refused).
        if (res.status !== 401 && res.status !== 429) {
          open.push(r.key);
          await res.body?.cancel();
          break;
        }
        const body = (await res.json()) as { error: { code: string } };
        expect(body.error.code).toBe(res.status === 401 ? "unauthorized" : "too_many_requests");
      }
    }
    expect([...new Set(open)].sort()).toEqual([...PUBLIC].sort());
  });

  it("refuses every state-changing route from another site with 403, even logged in, writing nothing", async () => {
    const before = await writes();
    for (const r of apiRoutes().filter((r) => r.method !== "GET")) {
      for (const headers of <Record<string, string>[]>[
        { origin: "https://evil.example" },
        { origin: "null" },
        { "sec-fetch-site": "cross-site" },
        { "sec-fetch-site": "same-site" },
        {},
      ]) {
        const res = await h.app.request(r.path, {
          method: r.method,
          headers: { cookie, "content-type": "application/json", ...headers },
          body: "{}",
        });
        expect(res.status, `${r.key} ${JSON.stringify(headers)}`).toBe(403);
        await res.body?.cancel();
      }
    }
    expect(await writes()).toBe(before);
  });
});

describe("a Host that is not ours (DNS rebinding), on every route the app has", () => {
  /** Every route of the app, /api or not, :id filled in. */
  function allRoutes() {
    const out = new Map<string, { method: string; path: string }>();
    for (const r of h.app.routes) {
      if (r.method === "ALL" || r.path.includes("*")) continue;
      const id = r.path.startsWith("/api/approvals") ? ids.approval : r.path.startsWith("/api/executions") ? ids.execution : ids.session;
      out.set(`${r.method} ${r.path}`, { method: r.method, path: r.path.replace(":id", id) });
    }
    return [...out.entries()];
  }

  it("answers 421 before any route runs, even logged in with a matching Origin, writing nothing", async () => {
    const before = await writes();
    const routes = allRoutes();
    expect(routes.map(([k]) => k)).toEqual(expect.arrayContaining(["POST /api/setup", "POST /api/login", "GET /", "GET /healthz"]));
    for (const [key, r] of routes) {
      for (const host of ["rebind.evil.example:8182", "rebind.evil.example", "192.168.1.20:8080", "localhost.evil.example"]) {
        const res = await h.app.request(`http://${host}${r.path}`, {
          method: r.method,
          headers: { host, origin: `http://${host}`, cookie, "content-type": "application/json" },
          body: r.method === "GET" ? undefined : JSON.stringify({ username: "mallory", password: "tangerine orbit kettle" }),
        });
        expect(res.status, `${key} Host: ${host}`).toBe(421);
        expect(await res.json()).toMatchObject({
          error: { code: "misdirected_request", message: expect.stringContaining("NOMOS_PUBLIC_URL") },
        });
      }
    }
    expect(await writes()).toBe(before);
  });

  it("ignores X-Forwarded-Host unless told a proxy is trusted; with NOMOS_TRUST_PROXY it is the Host that counts", async () => {
    const forged = await h.app.request("/api/me", { headers: { "x-forwarded-host": "rebind.evil.example" } });
    expect(forged.status).toBe(200);
    const proxied = await startApi(
      t.db,
      t.url,
      {},
      { publicOrigin: publicOriginFrom({ publicUrl: "https://nomos.home.arpa", host: "127.0.0.1", port: 8080, trustProxy: true }) },
    );
    try {
      const evil = await proxied.app.request("/api/me", { headers: { "x-forwarded-host": "rebind.evil.example" } });
      expect(evil.status).toBe(421);
      const ours = await proxied.app.request("/api/me", {
        headers: { host: "127.0.0.1:8080", "x-forwarded-host": "nomos.home.arpa", "x-forwarded-proto": "https" },
      });
      expect(ours.status).toBe(200);
      // Behind TLS, the login cookie is Secure.
      await loginCookie(proxied.app, t.db);
      const login = await proxied.app.request("http://nomos.home.arpa/api/login", {
        method: "POST",
        headers: { host: "nomos.home.arpa", origin: "https://nomos.home.arpa", "content-type": "application/json" },
        body: JSON.stringify({ username: "alice", password: "correct horse battery" }),
      });
      expect(login.status).toBe(200);
      expect(login.headers.get("set-cookie")).toMatch(/; Secure/);
    } finally {
      await proxied.close();
    }
  });

  it("a public URL elsewhere: its host is ours, loopback names are ours only when bound to loopback", async () => {
    const lan = await startApi(
      t.db,
      t.url,
      {},
      { publicOrigin: publicOriginFrom({ publicUrl: "http://nomos.lan:8080", host: "192.168.1.20", port: 8080 }) },
    );
    try {
      expect((await lan.app.request("http://nomos.lan:8080/api/me", { headers: { host: "nomos.lan:8080" } })).status).toBe(200);
      expect((await lan.app.request("http://nomos.lan/api/me", { headers: { host: "nomos.lan" } })).status).toBe(421);
      expect((await lan.app.request("http://localhost:8080/api/me", { headers: { host: "localhost:8080" } })).status).toBe(421);
      // A container's own health check still answers.
      expect((await lan.app.request("http://127.0.0.1:8080/healthz", { headers: { host: "127.0.0.1:8080" } })).status).toBe(200);
    } finally {
      await lan.close();
    }
  });
});

describe("shell injection", () => {
  let host: SshTestHost;
  let pool: SshPool;
  let registry: TargetRegistry;
  beforeAll(async () => {
    host = await SshTestHost.start();
    pool = new SshPool({ log });
    registry = new TargetRegistry({ db: t.db.kysely, fileTargets: [host.targetsFileEntry()] });
    await registry.sync();
  });
  afterAll(async () => {
    await pool.stop();
    await host.stop();
  });

  const metachar = fc.constantFrom(
    ";",
    "&&",
    "|",
    "`id`",
    "$(id)",
    "${IFS}",
    "'",
    '"',
    "\n",
    " ",
    "#",
    ">",
    "<",
    "*",
    "\\",
    "-",
    "--",
    "\0",
    "\u202e",
  );
  const hostile = fc.oneof(
    fc
      .tuple(fc.constantFrom("web", "local", "vmbr0", "dhcp", "local-lvm", "x"), metachar, fc.constantFrom("rm -rf /", "id", "x", ""))
      .map(([a, m, b]) => `${a}${m}${b}`),
    fc.string({ unit: "binary", maxLength: 20 }),
  );
  const FIELDS = ["node", "hostname", "ostemplate", "storage", "bridge", "ip"] as const;

  it("a pct_create field holding shell syntax is refused before any command, or reaches the node as one plain argument", async () => {
    const session = await makeSession(t.db.kysely);
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FIELDS), hostile, async (field, value) => {
        const input = {
          node: "pve1",
          hostname: `ct${++n}`,
          ostemplate: "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst",
          [field]: value,
        };
        const before = host.log.length;
        const r = await pctCreate({ db: t.db.kysely, registry, pool, redact: makeRedactor(), log, startWaitMs: 1000 }, input, {
          sessionId: session.id,
          actor: `agent:${session.id}`,
        }).catch((err: unknown) => err);
        const sent = host.log.slice(before);
        if (r instanceof PctCreateError && sent.length === 0) {
          expect(r.message).toContain(field);
          return;
        }
        // Accepted: every command the node received is one simple command of plain words.
        for (const c of sent) {
          const parsed = parseShell(c.command);
          expect(parsed.commands, c.command).toHaveLength(1);
          expect(parsed.substitutions, c.command).toEqual([]);
          expect(parsed.commands[0]!.redirects, c.command).toEqual([]);
          expect(
            parsed.commands[0]!.words.some((w) => w.dynamic),
            c.command,
          ).toBe(false);
          expect(parsed.commands[0]!.words[0]!.text, c.command).toMatch(/^(pvesh|pct)$/);
        }
      }),
      { numRuns: 200 },
    );
    // Nothing hostile ever ran: every command the node got was pvesh or pct.
    expect(host.log.every((c) => /^(pvesh|pct) /.test(c.command))).toBe(true);
  });

  it("a target name holding shell syntax resolves to nothing and reaches no host (a NUL made the lookup throw)", async () => {
    await fc.assert(
      fc.asyncProperty(hostile, async (name) => {
        const before = host.log.length;
        const found = await registry.resolve(name);
        // Only a plain name (a container pct_create made above, say) may resolve, and only to itself.
        if (found) expect([found.name, TARGET_NAME.test(name)]).toEqual([name, true]);
        expect(host.log.length).toBe(before);
      }),
      { numRuns: 200 },
    );
  });
});

// Throttling of failed logins and bearer tokens (src/auth/throttle.ts),
// across two real service processes on one database: the counts live in
// PostgreSQL, so the second process refuses what the first one counted; a
// correct password from an address with no failures gets in while the name
// is being hammered from elsewhere; wrong bearer tokens slow down per source.
// Assertions are on "was refused with Retry-After", never on durations.
// Source addresses come from X-Forwarded-For (NOMOS_TRUST_PROXY=1).
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operatorCreate } from "../src/auth/operators.js";
import { useTestDatabase } from "./helpers/database.js";
import { type ServiceProcess, startService } from "./helpers/service-process.js";

const t = useTestDatabase();
let a: ServiceProcess;
let b: ServiceProcess;
const PASSWORD = "tangerine orbit kettle";

beforeAll(async () => {
  await operatorCreate(t.db.kysely, { username: "carol", password: PASSWORD, actor: "system:test" });
  const env = { DATABASE_URL: t.url, NOMOS_TRUST_PROXY: "1", NOMOS_API_TOKEN: "a-real-api-token-of-enough-length" };
  [a, b] = await Promise.all([startService(env), startService(env)]);
}, 60_000);
afterAll(async () => {
  expect(await Promise.all([a?.stop(), b?.stop()])).toEqual([0, 0]);
});

const login = (p: ServiceProcess, from: string, password: string) =>
  fetch(`${p.url}/api/login`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: p.url, "x-forwarded-for": from },
    body: JSON.stringify({ username: "carol", password }),
  });

describe("failed logins", () => {
  it("are counted in PostgreSQL: two processes together refuse an address long before either would alone", async () => {
    let failures = 0;
    let refused: Response | undefined;
    for (let i = 0; i < 20 && !refused; i++) {
      const res = await login(i % 2 === 0 ? a : b, "203.0.113.1", `guess ${i}`);
      if (res.status === 429) {
        refused = res;
        expect(await res.json()).toMatchObject({ error: { code: "too_many_requests" } });
      } else {
        expect(res.status).toBe(401);
        failures++;
        await res.body?.cancel();
      }
    }
    expect(refused, "no 429 after 20 failures").toBeDefined();
    expect(Number(refused!.headers.get("retry-after"))).toBeGreaterThan(0);
    // Five free failures, then delays: one process alone would allow as many again.
    expect(failures).toBeGreaterThanOrEqual(6);
    expect(failures).toBeLessThan(10);
  });

  it("never lock the operator out: the right password from an address with no failures gets in while the name is throttled", async () => {
    const user = await sql<{ failures: number }>`SELECT failures FROM auth_throttles WHERE key = 'user:carol'`.execute(t.db.kysely);
    expect(user.rows[0]!.failures).toBeGreaterThanOrEqual(6);
    const res = await login(b, "198.51.100.7", PASSWORD);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ operator: { username: "carol", role: "admin" } });
  });

  it("grow: no delay for the first five, then 2, 4, 8 ... seconds, never more than 15 minutes", async () => {
    const r = await sql<{ n: number; s: number }>`
      SELECT n, extract(epoch FROM auth_throttle_delay(n))::float8 AS s FROM generate_series(1, 40) AS n`.execute(t.db.kysely);
    const delays = r.rows.map((x) => x.s);
    expect(delays.slice(0, 5)).toEqual([0, 0, 0, 0, 0]);
    expect(delays.slice(5, 9)).toEqual([2, 4, 8, 16]);
    for (let i = 1; i < delays.length; i++) expect(delays[i]).toBeGreaterThanOrEqual(delays[i - 1]!);
    expect(Math.max(...delays)).toBe(900);
  });
});

describe("wrong bearer tokens", () => {
  it("slow down per source, across processes: refused with Retry-After after a few guesses", async () => {
    let failures = 0;
    let refused: Response | undefined;
    for (let i = 0; i < 20 && !refused; i++) {
      const p = i % 2 === 0 ? a : b;
      const res = await fetch(`${p.url}/api/sessions`, {
        headers: { authorization: `Bearer guess-${i}-0000000000000000`, "x-forwarded-for": "203.0.113.9" },
      });
      if (res.status !== 429) {
        expect(res.status).toBe(401);
        failures++;
      } else refused = res;
      await res.body?.cancel();
    }
    expect(refused, "no 429 after 20 wrong tokens").toBeDefined();
    expect(Number(refused!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(failures).toBeLessThan(10);
    // Another source is not slowed by these guesses.
    const other = await fetch(`${a.url}/api/sessions`, {
      headers: { authorization: "Bearer a-real-api-token-of-enough-length", "x-forwarded-for": "198.51.100.8" },
    });
    expect(other.status).toBe(200);
  });
});

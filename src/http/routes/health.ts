// GET /healthz: is this process able to do its job? Each check is a function
// main.ts registers (database now; the listener and the sweep report here
// too once they run). 200 when every check is ok, 503 otherwise, with every
// check's detail either way. No auth: load balancers and compose call it.
import { Hono } from "hono";

export interface CheckResult {
  ok: boolean;
  [detail: string]: unknown;
}

export type HealthChecks = Record<string, () => Promise<CheckResult> | CheckResult>;

export function healthRoutes(checks: HealthChecks) {
  return new Hono().get("/healthz", async (c) => {
    const entries = await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        try {
          return [name, await check()] as const;
        } catch (err) {
          return [name, { ok: false, error: (err as Error).message }] as const;
        }
      }),
    );
    const ok = entries.every(([, r]) => r.ok);
    return c.json({ status: ok ? "ok" : "degraded", checks: Object.fromEntries(entries) }, ok ? 200 : 503);
  });
}

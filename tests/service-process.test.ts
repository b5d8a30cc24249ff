// The real service process: starts on an existing database (DATABASE_URL),
// migrates it, answers /healthz over a real port, and drains on SIGTERM.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "./helpers/database.js";
import { startService } from "./helpers/service-process.js";

const t = useTestDatabase({ empty: true });

describe("npm start against DATABASE_URL", () => {
  it("migrates, serves /healthz, and exits 0 on SIGTERM leaving no connection behind", async () => {
    const service = await startService({ DATABASE_URL: t.url });
    try {
      const res = await fetch(`${service.url}/healthz`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ status: "ok", checks: { database: { ok: true } } });
      const ready = service.lines.find((l) => l.msg === "database ready");
      expect(ready).toMatchObject({ source: "external", alreadyApplied: 0 });
    } finally {
      expect(await service.stop()).toBe(0);
    }
    expect(service.lines.at(-1)?.msg).toBe("stopped");
  });

  it("starts again on the migrated database without applying anything", async () => {
    const service = await startService({ DATABASE_URL: t.url });
    try {
      expect(service.lines.find((l) => l.msg === "database ready")).toMatchObject({ applied: [] });
    } finally {
      await service.stop();
    }
  });
});

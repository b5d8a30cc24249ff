// Load, bounded for CI: 200 sessions whose executions finish at random
// moments over 15 s, the real service as two processes on one database, the
// model double answering every continuation (tests/helpers/load-scenario.ts;
// `npm run bench:load` runs the 60 s version and prints the numbers).
// Invariant: every finished execution is continued exactly once, no two
// turns of one session overlap, nothing is left pending, and both processes
// take part. No timing is asserted: latencies are reported, not judged.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "./helpers/database.js";
import { runLoad } from "./helpers/load-scenario.js";

const t = useTestDatabase();

describe("load: 200 sessions, two processes, one database", () => {
  it("continues every finished execution exactly once, with no overlapping turns and nothing pending", async () => {
    const r = await runLoad(t.db, t.url, { sessions: 200, seconds: 15, perSession: 2, drainSeconds: 30 });
    console.log(`load (CI): ${JSON.stringify(r)}`);
    expect(r.executions).toBe(400);
    expect(r.notDeliveredOnce).toEqual([]);
    expect(r.continued).toBe(400);
    expect(r.overlapping).toEqual([]);
    expect(r.pendingAtEnd).toBe(0);
    expect(r.turnsNotCompleted, `turns by status: ${JSON.stringify(r.turnStatuses)}`).toBe(0);
    expect(Object.keys(r.byProcess)).toHaveLength(2);
  }, 90_000);
});

// A continuation whose hand-off never returns (a query stuck on a connection
// a database restart broke) must not wedge its session: past the deadline the
// slot is freed, the claim's lease lapses, and the sweep delivers the result.
import { describe, expect, it } from "vitest";
import { ContinuationDispatcher, type StartContinuationTurn } from "../src/continuation/dispatcher.js";
import { ReconciliationSweep } from "../src/continuation/sweep.js";
import { createLogger } from "../src/log/logger.js";
import { turnQueueContinuation } from "../src/turns/continuation-queue.js";
import { useTestDatabase } from "./helpers/database.js";
import { finishExecution, makeRunningExecution, makeSession, makeWindow } from "./helpers/factories.js";

const t = useTestDatabase();
const log = createLogger({ level: "silent" });

describe("a hand-off that never returns", () => {
  it("frees the session after the deadline, and the sweep delivers the result once the claim lapses", async () => {
    const calls: string[][] = [];
    const startTurn: StartContinuationTurn = async (p) => {
      calls.push(p.executionIds);
      if (calls.length === 1) return new Promise(() => {}); // stuck for ever
      return turnQueueContinuation(t.db.kysely, { ...p, actor: "system:continuation" });
    };
    const dispatcher = new ContinuationDispatcher({
      db: t.db,
      log,
      owner: "a",
      startTurn,
      maxContinuations: 40,
      leaseSeconds: 1,
      deadlineMs: 200,
    });
    const sweep = new ReconciliationSweep({ db: t.db, log, dispatcher, owner: "a", intervalSeconds: 3600, leaseSeconds: 1 });
    const s = await makeSession(t.db.kysely);
    await makeWindow(t.db.kysely, s.id);
    const e = await makeRunningExecution(t.db.kysely, s.id);
    await finishExecution(t.db.kysely, e.id);

    dispatcher.poke(s.id);
    await dispatcher.idle(); // returns: the stuck dispatch was given up at its deadline
    expect(calls).toEqual([[e.id]]);

    await new Promise((r) => setTimeout(r, 1200)); // the claim's lease lapses
    await sweep.runNow();
    await dispatcher.idle();
    expect(calls).toEqual([[e.id], [e.id]]);
    const row = await t.db.kysely
      .selectFrom("nomos_plan_executions")
      .select("delivered_turn_id")
      .where("execution_id", "=", e.id)
      .executeTakeFirstOrThrow();
    expect(row.delivered_turn_id).not.toBeNull();
    await sweep.stop();
    await dispatcher.stop();
  });
});

// What the database itself guarantees about executions: the NOTIFY that
// drives continuations fires exactly on non-terminal -> terminal, the ready
// NOTIFY wakes the runner, and no bug above can move a status illegally.
import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestDatabase } from "./helpers/database.js";
import { makeExecution, makeSession } from "./helpers/factories.js";

const t = useTestDatabase();

/** LISTENs on a channel on its own connection and collects payloads; settle() drains them. */
async function listen(channel: string) {
  const listener = t.connect({ max: 1, applicationName: "nomos-test-listener" });
  const payloads: string[] = [];
  const { unlisten } = await listener.sql.listen(channel, (payload) => payloads.push(payload));
  return {
    payloads,
    /** A NOTIFY sent after ours is delivered after ours: once it arrives, ours have too. */
    async settle() {
      const marker = `marker-${Math.random()}`;
      await t.db.sql`SELECT pg_notify(${channel}, ${marker})`;
      for (let i = 0; i < 200 && !payloads.includes(marker); i++) await new Promise((r) => setTimeout(r, 5));
      payloads.splice(payloads.indexOf(marker), 1);
      return payloads.splice(0);
    },
    async close() {
      await unlisten();
      await listener.close();
    },
  };
}

const setStatus = (id: string, status: string, extra: Record<string, unknown> = {}) =>
  t.db.kysely
    .updateTable("executions")
    .set({ status: status as never, ...extra })
    .where("id", "=", id)
    .execute();

const finished = { finished_at: new Date() };
const running = () => ({ started_at: new Date(), runner_owner: "test", lease_expires_at: new Date(Date.now() + 60_000) });

describe("nomos_execution_finished", () => {
  let l: Awaited<ReturnType<typeof listen>>;
  beforeEach(async () => {
    l = await listen("nomos_execution_finished");
  });
  afterEach(async () => {
    await l.close();
  });

  it("notifies once, with the id, when a running execution completes", async () => {
    const e = await makeExecution(t.db.kysely, { status: "approved", approved_at: new Date() });
    await setStatus(e.id, "running", running());
    await setStatus(e.id, "running", { stdout: "partial output", lease_expires_at: new Date(Date.now() + 90_000) });
    expect(await l.settle()).toEqual([]);
    await setStatus(e.id, "completed", { ...finished, exit_code: 0 });
    expect(await l.settle()).toEqual([e.id]);
  });

  it("notifies for every terminal state reached from a live one", async () => {
    const ids: string[] = [];
    for (const terminal of ["failed", "timed_out", "cancelled"]) {
      const e = await makeExecution(t.db.kysely, { status: "approved", approved_at: new Date() });
      await setStatus(e.id, "running", running());
      await setStatus(e.id, terminal, finished);
      ids.push(e.id);
    }
    const rejected = await makeExecution(t.db.kysely);
    await setStatus(rejected.id, "rejected", finished);
    ids.push(rejected.id);
    expect(await l.settle()).toEqual(ids);
  });

  it("does not notify for an update that is rolled back", async () => {
    const e = await makeExecution(t.db.kysely, { status: "approved", approved_at: new Date() });
    await setStatus(e.id, "running", running());
    await t.db.kysely
      .transaction()
      .execute(async (tx) => {
        await tx
          .updateTable("executions")
          .set({ status: "failed", ...finished })
          .where("id", "=", e.id)
          .execute();
        throw new Error("roll back");
      })
      .catch(() => {});
    expect(await l.settle()).toEqual([]);
  });

  it("does not notify on inserts or on non-status updates", async () => {
    const e = await makeExecution(t.db.kysely);
    await setStatus(e.id, "pending_approval", { description: "changed" });
    await setStatus(e.id, "approved", { approved_at: new Date() });
    expect(await l.settle()).toEqual([]);
  });
});

describe("the lifecycle the database enforces", () => {
  it("refuses any change to a terminal execution", async () => {
    const e = await makeExecution(t.db.kysely);
    await setStatus(e.id, "rejected", finished);
    await expect(setStatus(e.id, "approved")).rejects.toThrow(/is rejected and terminal states never change/);
    await expect(setStatus(e.id, "rejected", { stdout: "rewritten history" })).rejects.toThrow(/terminal/);
  });

  it("refuses transitions that skip a state", async () => {
    const e = await makeExecution(t.db.kysely);
    await expect(setStatus(e.id, "running", running())).rejects.toThrow(/pending_approval -> running is not a legal transition/);
    await expect(setStatus(e.id, "completed", finished)).rejects.toThrow(/not a legal transition/);
  });

  it("refuses a running execution without a runner lease", async () => {
    const e = await makeExecution(t.db.kysely, { status: "approved", approved_at: new Date() });
    await expect(setStatus(e.id, "running", { started_at: new Date() })).rejects.toThrow(/executions_running_has_lease/);
  });

  it("wakes the runner when an execution becomes approved", async () => {
    const l = await listen("nomos_execution_ready");
    try {
      const inserted = await makeExecution(t.db.kysely, { status: "approved", approved_at: new Date() });
      const later = await makeExecution(t.db.kysely);
      expect(await l.settle()).toEqual([inserted.id]);
      await setStatus(later.id, "approved", { approved_at: new Date() });
      expect(await l.settle()).toEqual([later.id]);
    } finally {
      await l.close();
    }
  });

  it("keeps one running turn per session", async () => {
    const s = await makeSession(t.db.kysely);
    const start = () =>
      t.db.kysely
        .insertInto("turns")
        .values({ session_id: s.id, kind: "operator", status: "running", started_at: sql<Date>`now()` })
        .execute();
    await start();
    await expect(start()).rejects.toThrow(/turns_one_running_per_session/);
  });
});

// The lifecycle module: each transition one conditional UPDATE, illegal ones
// an error naming what was found, the continuation ledger written with the
// execution, claims exactly once across pools, lost leases reported.
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { withActor } from "../src/db/with-actor.js";
import {
  EXECUTION_CANCEL_CHANNEL,
  ExecutionTransitionError,
  executionApprove,
  executionCancel,
  executionClaim,
  executionClaimNext,
  executionCreate,
  executionFinish,
  executionMarkLost,
  executionReject,
  executionRenewLease,
} from "../src/executions/lifecycle.js";
import { executionTimeout, TimeoutOutOfRangeError } from "../src/executions/timeout.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";

const t = useTestDatabase();
const k = () => t.db.kysely;
const base = { target: "pve1", command: "uptime", risk: "read_only" as const, mode: "async" as const };

describe("executionCreate", () => {
  it("links a session's execution in nomos_plan_executions in the same transaction", async () => {
    const s = await makeSession(k());
    const e = await withActor(k(), `agent:${s.id}`, (tx) => executionCreate(tx, { ...base, sessionId: s.id, status: "pending_approval" }));
    expect(e).toMatchObject({ status: "pending_approval", session_id: s.id, approved_at: null, timeout_s: 600 });
    const link = await k().selectFrom("nomos_plan_executions").selectAll().where("execution_id", "=", e.id).executeTakeFirstOrThrow();
    expect(link).toMatchObject({ session_id: s.id, continued_at: null, claimed_by: null });
    const events = await k().selectFrom("session_events").select(["type", "data"]).where("session_id", "=", s.id).execute();
    expect(events).toEqual([
      {
        type: "execution_updated",
        data: { execution: expect.objectContaining({ id: e.id, status: "pending_approval" }) },
      },
    ]);
  });

  it("marks an inline-delivered execution continued so no continuation is dispatched", async () => {
    const s = await makeSession(k());
    const e = await executionCreate(k(), {
      ...base,
      mode: "sync",
      sessionId: s.id,
      status: "approved",
      deliveredInline: true,
    });
    expect(e.approved_at).not.toBeNull();
    const link = await k().selectFrom("nomos_plan_executions").selectAll().where("execution_id", "=", e.id).executeTakeFirstOrThrow();
    expect(link.claimed_by).toBe("inline");
    expect(link.continued_at).not.toBeNull();
  });

  it("writes nothing when the surrounding transaction rolls back", async () => {
    const s = await makeSession(k());
    await expect(
      withActor(k(), "system:test", async (tx) => {
        await executionCreate(tx, { ...base, sessionId: s.id, status: "approved" });
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await k().selectFrom("executions").select("id").where("session_id", "=", s.id).execute()).toEqual([]);
    expect(await k().selectFrom("nomos_plan_executions").select("execution_id").where("session_id", "=", s.id).execute()).toEqual([]);
  });

  it("creates no ledger row without a session", async () => {
    const e = await executionCreate(k(), { ...base, sessionId: null, status: "approved" });
    expect(await k().selectFrom("nomos_plan_executions").select("execution_id").where("execution_id", "=", e.id).execute()).toEqual([]);
  });
});

describe("approve, reject, cancel", () => {
  const pending = () => executionCreate(k(), { ...base, sessionId: null, status: "pending_approval" });

  it("approves once; a second approval is an error naming the id and both statuses", async () => {
    const e = await pending();
    expect((await executionApprove(k(), { executionId: e.id })).status).toBe("approved");
    const err = await executionApprove(k(), { executionId: e.id }).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(ExecutionTransitionError);
    expect((err as Error).message).toBe(`execution ${e.id} is approved, not pending_approval; cannot approve it`);
    expect(err).toMatchObject({ found: "approved", expected: "pending_approval" });
  });

  it("turns a sync execution approved later into an async one, so the background runner takes it", async () => {
    const e = await executionCreate(k(), { ...base, mode: "sync", sessionId: null, status: "pending_approval" });
    expect(await executionApprove(k(), { executionId: e.id })).toMatchObject({ status: "approved", mode: "async" });
  });

  it("rejects a pending execution, and refuses to reject an approved one", async () => {
    const e = await pending();
    expect(await executionReject(k(), { executionId: e.id, reason: "not now" })).toMatchObject({
      status: "rejected",
      error: "not now",
    });
    const a = await pending();
    await executionApprove(k(), { executionId: a.id });
    await expect(executionReject(k(), { executionId: a.id })).rejects.toThrow(/is approved, not pending_approval/);
  });

  it("names a missing execution", async () => {
    const id = "00000000-0000-4000-8000-000000000000";
    await expect(executionApprove(k(), { executionId: id })).rejects.toThrow(`execution ${id} does not exist; cannot approve it`);
  });

  it("cancels pending and approved executions at once, and a running one through its runner", async () => {
    const p = await pending();
    expect((await executionCancel(k(), { executionId: p.id })).status).toBe("cancelled");
    const a = await pending();
    await executionApprove(k(), { executionId: a.id });
    expect((await executionCancel(k(), { executionId: a.id })).status).toBe("cancelled");

    const r = await executionCreate(k(), { ...base, sessionId: null, status: "approved" });
    await executionClaim(k(), { executionId: r.id, mode: "async", owner: "runner-a", leaseMs: 60_000 });
    const listener = t.connect({ max: 1, applicationName: "nomos-test-listener" });
    const heard: string[] = [];
    const { unlisten } = await listener.sql.listen(EXECUTION_CANCEL_CHANNEL, (id) => heard.push(id));
    try {
      const c = await executionCancel(k(), { executionId: r.id, reason: "operator pressed Stop" });
      expect(c.status).toBe("running");
      expect(c.cancel_requested_at).not.toBeNull();
      await expect.poll(() => heard).toEqual([r.id]);
      expect(await executionRenewLease(k(), { executionId: r.id, owner: "runner-a", leaseMs: 60_000 })).toEqual({
        cancelRequested: true,
      });
      const done = await executionFinish(k(), {
        executionId: r.id,
        owner: "runner-a",
        outcome: { status: "cancelled", exitCode: 143 },
      });
      expect(done.status).toBe("cancelled");
      await expect(executionCancel(k(), { executionId: r.id })).rejects.toThrow(/is cancelled, not pending_approval, approved or running/);
    } finally {
      await unlisten();
      await listener.close();
    }
  });
});

describe("the runner's transitions", () => {
  it("two pools claiming at once never claim the same execution", async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 12; i++) ids.add((await executionCreate(k(), { ...base, sessionId: null, status: "approved" })).id);
    const a = t.connect({ max: 3, applicationName: "nomos-test-a" }).kysely;
    const b = t.connect({ max: 3, applicationName: "nomos-test-b" }).kysely;
    const claimed: string[] = [];
    const claimer = async (db: typeof a, owner: string) => {
      for (;;) {
        const e = await executionClaimNext(db, { owner, leaseMs: 60_000 });
        if (!e) return;
        claimed.push(e.id);
      }
    };
    await Promise.all([claimer(a, "a1"), claimer(a, "a2"), claimer(b, "b1"), claimer(b, "b2")]);
    const ours = claimed.filter((id) => ids.has(id));
    expect(ours.sort()).toEqual([...ids].sort());
    expect(new Set(claimed).size).toBe(claimed.length);
  });

  it("claims a sync execution only by id and mode, and only its owner can finish it", async () => {
    const e = await executionCreate(k(), { ...base, mode: "sync", sessionId: null, status: "approved" });
    expect(await executionClaimNext(k(), { owner: "bg", leaseMs: 1000 })).toBeUndefined();
    await expect(executionClaim(k(), { executionId: e.id, mode: "async", owner: "x", leaseMs: 1000 })).rejects.toThrow(
      /not approved \(mode async\)/,
    );
    const r = await executionClaim(k(), { executionId: e.id, mode: "sync", owner: "inline-1", leaseMs: 60_000 });
    expect(r).toMatchObject({ status: "running", runner_owner: "inline-1" });
    await expect(executionFinish(k(), { executionId: e.id, owner: "someone-else", outcome: { status: "completed" } })).rejects.toThrow(
      /is running, not running \(held by someone-else\)/,
    );
    expect(await executionRenewLease(k(), { executionId: e.id, owner: "someone-else", leaseMs: 1000 })).toBeUndefined();
    const done = await executionFinish(k(), {
      executionId: e.id,
      owner: "inline-1",
      outcome: { status: "completed", exitCode: 0, stdout: "ok\n" },
    });
    expect(done).toMatchObject({ status: "completed", exit_code: 0, stdout: "ok\n", lease_expires_at: null });
  });

  it("marks an execution whose lease expired as failed, saying it may or may not have completed", async () => {
    const e = await executionCreate(k(), { ...base, sessionId: null, status: "approved" });
    await executionClaim(k(), { executionId: e.id, mode: "async", owner: "dead-runner", leaseMs: 60_000 });
    expect((await executionMarkLost(k())).map((x) => x.id)).not.toContain(e.id);
    await k().updateTable("executions").set({ lease_expires_at: sql<Date>`now() - interval '1 second'` }).where("id", "=", e.id).execute();
    const lost = await executionMarkLost(k());
    expect(lost.map((x) => x.id)).toContain(e.id);
    const row = lost.find((x) => x.id === e.id)!;
    expect(row.status).toBe("failed");
    expect(row.error).toMatch(/may or may not have completed/);
    await expect(executionFinish(k(), { executionId: e.id, owner: "dead-runner", outcome: { status: "completed" } })).rejects.toThrow(
      /is failed/,
    );
  });
});

describe("executionTimeout", () => {
  const limits = { defaultTimeoutS: 600, maxTimeoutS: 3600 };
  it("defaults, accepts within the maximum, and refuses beyond it naming both numbers", () => {
    expect(executionTimeout(undefined, limits)).toBe(600);
    expect(executionTimeout(30, limits)).toBe(30);
    expect(() => executionTimeout(7200, limits)).toThrow("timeout_s 7200 is over the maximum of 3600 s (NOMOS_EXEC_MAX_TIMEOUT_S)");
    expect(() => executionTimeout(0, limits)).toThrow(TimeoutOutOfRangeError);
    expect(() => executionTimeout(1.5, limits)).toThrow(/whole number of seconds from 1 to 3600, got 1.5/);
  });
});

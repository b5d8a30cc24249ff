// "Roll back <guest> to before this plan" (issue 17): the route creates a
// destructive approval with its typed phrase; without the phrase it is
// refused; with it the runner rolls the Proxmox double's container back over
// SSH (a file written after the snapshot is gone, an option changed since is
// restored, the guest running again as it was), the result waits for the
// agent like any execution's, and the next sweep records the rollback. The
// agent may propose the same rollback; it never runs without the phrase.
import { afterAll, beforeAll, expect, it } from "vitest";
import { approvalDecide } from "../src/approvals/decide.js";
import { createLogger } from "../src/log/logger.js";
import { SnapshotRetention } from "../src/snapshots/retention.js";
import { type ApiHarness, browser, loginCookie, startApi } from "./helpers/api-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";
import { useSnapshotWorld, WEB1 } from "./helpers/snapshot-world.js";

const t = useTestDatabase();
const w = useSnapshotWorld(t);
let api: ApiHarness;
let cookie: string;

beforeAll(async () => {
  api = await startApi(t.db, t.url);
  cookie = await loginCookie(api.app, t.db);
});
afterAll(async () => {
  await api?.close();
});

const statusOf = async (executionId: string) =>
  (await t.db.kysely.selectFrom("executions").select("status").where("id", "=", executionId).executeTakeFirstOrThrow()).status;

it("rolls a container back only with the typed phrase, restoring its state, and tells the agent", { timeout: 60_000 }, async () => {
  const s = await makeSession(t.db.kysely);
  const planId = await w.approvePlan(s.id, [
    { title: "write the motd", target: "web1", command: "echo hello > /etc/motd" },
    { title: "more memory", target: "pve1", command: "pct set 105 --memory 2048" },
  ]);
  await w.agentDoes(s.id, [
    { name: "run", input: { target: "web1", command: "echo hello > /etc/motd" } },
    { name: "run", input: { target: "pve1", command: "pct set 105 --memory 2048" } },
  ]);
  const ct = () => w.host.containers.get(WEB1.vmid)!;
  expect(ct().files?.get("/etc/motd")).toBe("hello\n");
  expect(ct().options.memory).toBe("2048");
  const snap = await t.db.kysely.selectFrom("guest_snapshots").selectAll().where("plan_id", "=", planId).executeTakeFirstOrThrow();
  expect(snap.state).toBe("taken");

  // The agent proposes the rollback inside its window: it still asks, with the phrase, and nothing runs.
  const before = w.host.log.length;
  await w.agentDoes(s.id, [{ name: "request_execution", input: { target: "pve1", command: `pct rollback 105 ${snap.name}` } }]);
  const proposed = w.lastToolResults().findLast((r) => r.startsWith("Not run:"));
  expect(proposed).toMatch(/destructive.*To approve, the operator must type "rollback 105"/s);
  expect(w.host.log.slice(before)).toEqual([]);

  // The operator asks for it from the plan card.
  const browse = browser(api.app, cookie);
  const res = await browse(`/api/snapshots/${snap.id}/rollback`, { method: "POST" });
  expect(res.status).toBe(201);
  const { approval, snapshot } = (await res.json()) as {
    approval: { id: string; risk: string; command: string; confirmationPhrase: string; effect: string; executionId: string };
    snapshot: { rollback: { executionId: string; status: string } };
  };
  expect(approval).toMatchObject({
    risk: "destructive",
    command: `pct rollback 105 ${snap.name} --start 1`,
    confirmationPhrase: "rollback 105",
  });
  expect(approval.effect).toMatch(/puts container 105 back to snapshot nomos-/);
  expect(snapshot.rollback).toMatchObject({ executionId: approval.executionId, status: "pending_approval" });
  // A second request while this one waits is refused.
  expect((await browse(`/api/snapshots/${snap.id}/rollback`, { method: "POST" })).status).toBe(409);

  // Without the phrase, or with the wrong one: refused, nothing runs.
  expect((await browse(`/api/approvals/${approval.id}`, { method: "POST", body: { decision: "approve" } })).status).toBe(400);
  expect(
    (await browse(`/api/approvals/${approval.id}`, { method: "POST", body: { decision: "approve", confirmation: "rollback 106" } })).status,
  ).toBe(400);
  expect(await statusOf(approval.executionId)).toBe("pending_approval");
  expect(ct().files?.get("/etc/motd")).toBe("hello\n");

  // With the phrase: the runner rolls back over SSH.
  const ok = await browse(`/api/approvals/${approval.id}`, { method: "POST", body: { decision: "approve", confirmation: "rollback 105" } });
  expect(ok.status).toBe(200);
  await expect.poll(() => statusOf(approval.executionId), { timeout: 15_000 }).toBe("completed");
  expect(ct().files?.has("/etc/motd")).toBe(false);
  expect(ct().options.memory).toBe("512");
  expect(ct().status).toBe("running");
  expect(w.host.log.map((l) => l.command)).toContain(`pct rollback 105 ${snap.name} --start 1`);

  // Its result waits for the agent like any execution's (the continuation machinery delivers it).
  const link = await t.db.kysely
    .selectFrom("nomos_plan_executions")
    .select(["session_id", "plan_id", "continued_at"])
    .where("execution_id", "=", approval.executionId)
    .executeTakeFirstOrThrow();
  expect(link).toEqual({ session_id: s.id, plan_id: planId, continued_at: null });
  // Audited: who asked, who confirmed.
  const trail = await t.db.kysely
    .selectFrom("audit.events")
    .select(["actor", "table_name", "operation"])
    .where("row_key", "in", [approval.id, approval.executionId])
    .orderBy("id")
    .execute();
  expect(trail[0]).toEqual({ actor: "operator:alice", table_name: "executions", operation: "INSERT" });
  expect(trail.some((r) => r.table_name === "approvals" && r.operation === "UPDATE" && r.actor === "operator:alice")).toBe(true);

  // The next sweep records it.
  const retention = new SnapshotRetention({
    db: t.db.kysely,
    executions: w.port,
    log: createLogger({ level: "silent" }),
    keepDays: 7,
    keepPerGuest: 3,
    everyMs: 600_000,
  });
  expect((await retention.sweep()).rolledBack).toEqual([snap.id]);
  const view = (await (await browse(`/api/sessions/${s.id}/snapshots`)).json()) as { snapshots: Array<{ id: string; state: string }> };
  expect(view.snapshots).toMatchObject([{ id: snap.id, state: "rolled_back" }]);
  await retention.stop();
});

it("refuses a rollback to a snapshot that was never taken, and answers 404 for an unknown one", async () => {
  const browse = browser(api.app, cookie);
  expect((await browse("/api/snapshots/00000000-0000-4000-8000-000000000000/rollback", { method: "POST" })).status).toBe(404);
  const bad = await browse("/api/snapshots/not-a-uuid/rollback", { method: "POST" });
  expect(bad.status).toBe(400);
  expect(await bad.text()).toMatch(/id/);
});

it("a rollback the agent proposed runs once the operator types the phrase, and is recorded as one", { timeout: 60_000 }, async () => {
  const s = await makeSession(t.db.kysely);
  const planId = await w.approvePlan(s.id, [{ title: "write the issue file", target: "web1", command: "echo broken > /etc/issue" }]);
  await w.agentDoes(s.id, [{ name: "run", input: { target: "web1", command: "echo broken > /etc/issue" } }]);
  const snap = await t.db.kysely.selectFrom("guest_snapshots").selectAll().where("plan_id", "=", planId).executeTakeFirstOrThrow();
  const ct = () => w.host.containers.get(WEB1.vmid)!;
  expect(ct().files?.get("/etc/issue")).toBe("broken\n");

  await w.agentDoes(s.id, [{ name: "request_execution", input: { target: "pve1", command: `pct rollback 105 ${snap.name} --start 1` } }]);
  const approval = await t.db.kysely
    .selectFrom("approvals")
    .select(["id", "execution_id", "confirmation_phrase"])
    .where("session_id", "=", s.id)
    .where("status", "=", "pending")
    .executeTakeFirstOrThrow();
  expect(approval.confirmation_phrase).toBe("rollback 105");
  await approvalDecide(w.approvalDeps, {
    approvalId: approval.id,
    decision: "approve",
    confirmation: "rollback 105",
    actor: "operator:alice",
    via: "button",
    mayConfirmDestructive: true,
  });
  await expect.poll(() => statusOf(approval.execution_id!), { timeout: 15_000 }).toBe("completed");
  expect(ct().files?.has("/etc/issue")).toBe(false);

  const retention = new SnapshotRetention({
    db: t.db.kysely,
    executions: w.port,
    log: createLogger({ level: "silent" }),
    keepDays: 7,
    keepPerGuest: 3,
    everyMs: 600_000,
  });
  expect((await retention.sweep()).rolledBack).toEqual([snap.id]);
  await retention.stop();
});

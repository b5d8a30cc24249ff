// The safety net (issue 17), end to end through the agent: the real SDK
// against the Messages API double, the real runner over real SSH to the
// Proxmox double. A plan on an existing container takes exactly one snapshot
// before its first change (observed as executions, recorded, audited) and
// none for a container the plan created; a guest whose storage cannot
// snapshot is changed only once the operator agrees; any other snapshot
// failure is reported and the step does not run.
import { expect, it } from "vitest";
import { approvalDecide } from "../src/approvals/decide.js";
import { withActor } from "../src/db/with-actor.js";
import { targetRegisterContainer } from "../src/targets/registry.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";
import { useSnapshotWorld, VM200, WEB1 } from "./helpers/snapshot-world.js";

const t = useTestDatabase();
const w = useSnapshotWorld(t);

const snapshotsOf = (planId: string) =>
  t.db.kysely.selectFrom("guest_snapshots").selectAll().where("plan_id", "=", planId).orderBy("taken_at").execute();

/** Commands the node and its containers received, as "<vmid or node>: <command>". */
const received = () => w.host.log.map((l) => `${l.vmid ?? "node"}: ${l.command}`);

async function addContainer(vmid: number, hostname: string, storage: string) {
  w.host.containers.set(vmid, {
    vmid,
    hostname,
    status: "running",
    ostemplate: "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst",
    options: { rootfs: `${storage}:8` },
  });
  await withActor(t.db.kysely, "system:test", (tx) =>
    targetRegisterContainer(tx, { name: hostname, node: "pve1", vmid, createdBySessionId: null }),
  );
}

it("takes exactly one snapshot of an existing container, before the plan's first change", { timeout: 60_000 }, async () => {
  const s = await makeSession(t.db.kysely);
  const planId = await w.approvePlan(s.id, [
    { title: "write the motd", target: "web1", command: "echo hello > /etc/motd" },
    { title: "write the issue file", target: "web1", command: "echo again > /etc/issue" },
  ]);
  const before = w.host.log.length;
  await w.agentDoes(s.id, [
    { name: "run", input: { target: "web1", command: "cat /etc/hostname" } },
    { name: "run", input: { target: "web1", command: "echo hello > /etc/motd" } },
    { name: "run", input: { target: "web1", command: "echo again > /etc/issue" } },
  ]);

  const [snap, ...more] = await snapshotsOf(planId);
  expect(more).toEqual([]);
  expect(snap).toMatchObject({
    session_id: s.id,
    target: "web1",
    node: "pve1",
    vmid: WEB1.vmid,
    kind: "lxc",
    state: "taken",
    guest_was_running: true,
  });
  expect(snap!.name).toMatch(/^nomos-[0-9a-f]{16}$/);
  // On the guest: exactly that snapshot, taken after the read and before the first write.
  expect([...(w.host.containers.get(WEB1.vmid)!.snapshots?.keys() ?? [])]).toEqual([snap!.name]);
  expect(received().slice(before)).toEqual([
    "105: cat /etc/hostname",
    "node: pct status 105",
    `node: pct snapshot 105 ${snap!.name}`,
    "105: echo hello > /etc/motd",
    "105: echo again > /etc/issue",
  ]);
  // Observed like a step: an execution of the session, with its output, on the node.
  const taking = await t.db.kysely.selectFrom("executions").selectAll().where("id", "=", snap!.execution_id!).executeTakeFirstOrThrow();
  expect(taking).toMatchObject({ session_id: s.id, plan_id: planId, target: "pve1", status: "completed", risk: "config_mutation" });
  expect(taking.stdout).toContain(snap!.name);
  // The agent heard about it with the first change's result.
  const results = w.lastToolResults();
  expect(results.find((r) => r.includes("echo hello"))).toContain(`safety net: snapshot ${snap!.name} of web1 taken`);
  // Announced on the stream and audited with the agent as actor.
  const events = await t.db.kysely
    .selectFrom("session_events")
    .select("type")
    .where("session_id", "=", s.id)
    .where("type", "=", "snapshot_recorded")
    .execute();
  expect(events).toHaveLength(1);
  const audit = await t.db.kysely
    .selectFrom("audit.events")
    .select(["actor", "operation"])
    .where("table_name", "=", "guest_snapshots")
    .where("row_key", "=", snap!.id)
    .execute();
  expect(audit).toEqual([{ actor: `agent:${s.id}`, operation: "INSERT" }]);
  expect(w.host.containers.get(WEB1.vmid)!.files?.get("/etc/motd")).toBe("hello\n");
});

it("never snapshots a container the plan created", { timeout: 60_000 }, async () => {
  const s = await makeSession(t.db.kysely);
  const planId = await w.approvePlan(s.id, [
    { title: "create app1", target: "pve1" },
    { title: "configure it", target: "app1", command: "echo hi > /etc/motd" },
  ]);
  const before = w.host.log.length;
  await w.agentDoes(s.id, [
    {
      name: "pct_create",
      input: { node: "pve1", hostname: "app1", ostemplate: "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst", vmid: 120 },
    },
    { name: "run", input: { target: "app1", command: "echo hi > /etc/motd" } },
  ]);
  expect(w.host.containers.get(120)?.files?.get("/etc/motd")).toBe("hi\n");
  expect(await snapshotsOf(planId)).toEqual([]);
  expect(
    received()
      .slice(before)
      .filter((c) => / snapshot /.test(c)),
  ).toEqual([]);
});

it("asks before changing a guest whose storage cannot snapshot, and goes on once the operator agrees", { timeout: 60_000 }, async () => {
  await addContainer(106, "old1", "local");
  const s = await makeSession(t.db.kysely);
  const planId = await w.approvePlan(s.id, [{ title: "write the motd", target: "old1", command: "echo x > /etc/motd" }]);
  await w.agentDoes(s.id, [{ name: "run", input: { target: "old1", command: "echo x > /etc/motd" } }]);

  const [snap, ...more] = await snapshotsOf(planId);
  expect(more).toEqual([]);
  expect(snap).toMatchObject({ state: "unsupported", reason: "snapshot feature is not available" });
  expect(w.host.containers.get(106)!.files?.get("/etc/motd")).toBeUndefined();
  const result = w.lastToolResults().find((r) => r.startsWith("Not run: no safety net on this guest"));
  expect(result).toMatch(/^Not run: no safety net on this guest: snapshot feature is not available\. The operator decides/);
  const waiting = await t.db.kysely
    .selectFrom("approvals")
    .innerJoin("executions", "executions.id", "approvals.execution_id")
    .select(["approvals.id", "executions.id as execution_id", "executions.command", "executions.status"])
    .where("approvals.session_id", "=", s.id)
    .where("approvals.status", "=", "pending")
    .execute();
  expect(waiting).toMatchObject([{ command: "echo x > /etc/motd", status: "pending_approval", execution_id: expect.any(String) }]);
  expect(
    (await t.db.kysely.selectFrom("guest_snapshots").select("waiver_execution_id").where("id", "=", snap!.id).executeTakeFirstOrThrow())
      .waiver_execution_id,
  ).toBe(waiting[0]!.execution_id);

  // The operator agrees: the step runs (the runner, over SSH), and later steps on old1 do not ask again.
  await approvalDecide(w.approvalDeps, {
    approvalId: waiting[0]!.id,
    decision: "approve",
    actor: "operator:alice",
    via: "button",
    mayConfirmDestructive: true,
  });
  await expect
    .poll(
      async () =>
        (await t.db.kysely.selectFrom("executions").select("status").where("id", "=", waiting[0]!.execution_id).executeTakeFirstOrThrow())
          .status,
      { timeout: 15_000 },
    )
    .toBe("completed");
  expect(w.host.containers.get(106)!.files?.get("/etc/motd")).toBe("x\n");
  await w.agentDoes(s.id, [{ name: "run", input: { target: "old1", command: "echo y > /etc/issue" } }]);
  expect(w.host.containers.get(106)!.files?.get("/etc/issue")).toBe("y\n");
  expect(received().filter((c) => c.startsWith("node: pct snapshot 106 "))).toHaveLength(1);
});

it("reports any other snapshot failure and does not run the step", { timeout: 60_000 }, async () => {
  await addContainer(107, "db1", "local-lvm");
  w.host.handle(/^pct snapshot 107 /, (ctx) => {
    ctx.err("  Insufficient free space in thin pool pve/data\n");
    return 5;
  });
  const s = await makeSession(t.db.kysely);
  const planId = await w.approvePlan(s.id, [{ title: "tune", target: "db1", command: "echo tuned > /etc/sysctl.d/90-db.conf" }]);
  await w.agentDoes(s.id, [{ name: "run", input: { target: "db1", command: "echo tuned > /etc/sysctl.d/90-db.conf" } }]);
  w.host.resetHandlers();

  const snaps = await t.db.kysely.selectFrom("guest_snapshots").selectAll().where("plan_id", "=", planId).execute();
  expect(snaps).toMatchObject([{ state: "failed", vmid: 107 }]);
  expect(snaps[0]!.reason).toMatch(/exit 5.*Insufficient free space in thin pool/s);
  const result = w.lastToolResults().findLast((r) => r.startsWith("Not run:"));
  expect(result).toMatch(/^Not run: no safety net on this guest: its snapshot failed \(.*Insufficient free space/s);
  expect(w.host.containers.get(107)!.files?.get("/etc/sysctl.d/90-db.conf")).toBeUndefined();
  expect(
    await t.db.kysely
      .selectFrom("executions")
      .select("status")
      .where("session_id", "=", s.id)
      .where("command", "like", "echo tuned%")
      .execute(),
  ).toEqual([{ status: "pending_approval" }]);
});

it("snapshots a QEMU VM the targets file names (`vm`), with qm on its node", { timeout: 60_000 }, async () => {
  const s = await makeSession(t.db.kysely);
  const planId = await w.approvePlan(s.id, [{ title: "update", target: "vm200", command: "apt-get install -y htop" }]);
  w.vmHost.handle("apt-get install -y htop", (ctx) => {
    ctx.out("htop is already the newest version\n");
  });
  const before = w.host.log.length;
  await w.agentDoes(s.id, [
    { name: "run", input: { target: "vm200", command: "apt-get install -y htop" } },
    { name: "run", input: { target: "vm200", command: "apt-get install -y htop" } },
  ]);
  const [snap, ...more] = await snapshotsOf(planId);
  expect(more).toEqual([]);
  expect(snap).toMatchObject({ target: "vm200", node: "pve1", vmid: VM200.vmid, kind: "qemu", state: "taken", guest_was_running: true });
  expect(received().slice(before)).toEqual(["node: qm status 200", `node: qm snapshot 200 ${snap!.name}`]);
  expect(w.vmHost.log.map((l) => l.command)).toEqual(["apt-get install -y htop", "apt-get install -y htop"]);
  expect([...(w.host.vms.get(VM200.vmid)!.snapshots?.keys() ?? [])]).toEqual([snap!.name]);
});

it("goes ahead without a net when the approved plan said so for that guest", { timeout: 60_000 }, async () => {
  await addContainer(108, "old2", "local");
  const s = await makeSession(t.db.kysely);
  const planId = await w.approvePlan(s.id, [
    { title: "write the motd", target: "old2", command: "echo z > /etc/motd", without_snapshot: true },
  ]);
  await w.agentDoes(s.id, [{ name: "run", input: { target: "old2", command: "echo z > /etc/motd" } }]);
  expect(await snapshotsOf(planId)).toMatchObject([{ state: "unsupported", vmid: 108 }]);
  expect(w.host.containers.get(108)!.files?.get("/etc/motd")).toBe("z\n");
  expect(w.lastToolResults().at(-1)).toMatch(
    /no safety net on this guest: snapshot feature is not available \(the approved plan accepted going ahead without one\)/,
  );
});

it("a destructive step the plan pre-authorized still asks for its phrase when its guest has no net", { timeout: 60_000 }, async () => {
  await addContainer(109, "old3", "local");
  const s = await makeSession(t.db.kysely);
  await w.approvePlan(
    s.id,
    [{ title: "wipe the cache", target: "old3", command: "rm -rf /srv/cache" }].map((x) => ({ ...x, destructive: true })),
  );
  await w.agentDoes(s.id, [{ name: "run", input: { target: "old3", command: "rm -rf /srv/cache" } }]);
  const waiting = await t.db.kysely
    .selectFrom("approvals")
    .innerJoin("executions", "executions.id", "approvals.execution_id")
    .select(["approvals.confirmation_phrase", "executions.risk", "executions.status"])
    .where("approvals.session_id", "=", s.id)
    .where("approvals.status", "=", "pending")
    .execute();
  expect(waiting).toEqual([{ confirmation_phrase: "confirm on old3", risk: "destructive", status: "pending_approval" }]);
  expect(w.lastToolResults().at(-1)).toMatch(
    /^Not run: no safety net on this guest: snapshot feature is not available.*must type "confirm on old3"/s,
  );
  expect(w.host.log.filter((l) => l.vmid === 109)).toEqual([]);
});

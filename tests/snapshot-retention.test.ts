// Retention of Nomos's own snapshots (issue 17): a verified plan's snapshot
// goes after NOMOS_SNAPSHOT_KEEP_DAYS, at most NOMOS_SNAPSHOT_KEEP_PER_GUEST
// stay per guest, and only snapshots that carry Nomos's name AND its record
// are ever removed: a snapshot the operator took by hand on the same guest,
// even one named nomos-..., survives. Removal needs no person; it runs as an
// observed, audited execution of the retention sweep.
import { expect, it } from "vitest";
import { createLogger } from "../src/log/logger.js";
import { SnapshotRetention } from "../src/snapshots/retention.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";
import { useSnapshotWorld, WEB1 } from "./helpers/snapshot-world.js";

const t = useTestDatabase();
const w = useSnapshotWorld(t);

const onGuest = () => [...(w.host.containers.get(WEB1.vmid)!.snapshots?.keys() ?? [])].sort();

/** One plan on web1: approved, one change (its snapshot taken), then its outcome reported. */
async function planWithSnapshot(outcome: "verified" | "blocked", daysAgo: number) {
  const s = await makeSession(t.db.kysely);
  const planId = await w.approvePlan(s.id, [{ title: "touch", target: "web1", command: `echo ${outcome} > /etc/motd` }]);
  await w.agentDoes(s.id, [
    { name: "run", input: { target: "web1", command: `echo ${outcome} > /etc/motd` } },
    { name: "report_outcome", input: { outcome, summary: `plan ${outcome}`, ...(outcome === "blocked" ? { needs: "a person" } : {}) } },
  ]);
  const snap = await t.db.kysely.selectFrom("guest_snapshots").selectAll().where("plan_id", "=", planId).executeTakeFirstOrThrow();
  expect(snap.state).toBe("taken");
  // Age it (the sweep judges by the database clock).
  await t.db.sql`UPDATE guest_snapshots SET taken_at = now() - make_interval(days => ${daysAgo}) WHERE id = ${snap.id}`;
  return snap;
}

const retention = (keepPerGuest: number) =>
  new SnapshotRetention({
    db: t.db.kysely,
    executions: w.port,
    log: createLogger({ level: "silent" }),
    keepDays: 7,
    keepPerGuest,
    everyMs: 600_000,
  });

it("removes only Nomos's own snapshots: expired verified ones, then those over the per-guest cap", { timeout: 90_000 }, async () => {
  const old = await planWithSnapshot("verified", 8);
  const recent = await planWithSnapshot("verified", 1);
  const blocked = await planWithSnapshot("blocked", 30);
  const newest = await planWithSnapshot("blocked", 0);
  // Two snapshots taken by hand: one ordinary, one that merely looks like Nomos's.
  const ct = w.host.containers.get(WEB1.vmid)!;
  for (const name of ["before-upgrade", "nomos-handmade"])
    ct.snapshots!.set(name, { files: new Map(), options: {}, takenAt: new Date(), description: "by hand" });
  expect(onGuest()).toEqual([blocked.name, newest.name, old.name, recent.name, "before-upgrade", "nomos-handmade"].sort());

  // keepDays 7, at most 3 per guest: the verified one older than 7 days goes; the blocked one of 30 days stays (3 left).
  const first = retention(3);
  expect(await first.sweep()).toEqual({ rolledBack: [], removed: [old.id], failed: [] });
  expect(onGuest()).toEqual([blocked.name, newest.name, recent.name, "before-upgrade", "nomos-handmade"].sort());

  // At most 1 per guest: the two older ones go, whatever their plan's outcome; hand-made ones stay.
  const second = retention(1);
  expect((await second.sweep()).removed.sort()).toEqual([blocked.id, recent.id].sort());
  expect(onGuest()).toEqual([newest.name, "before-upgrade", "nomos-handmade"].sort());
  await Promise.all([first.stop(), second.stop()]);

  const rows = await t.db.kysely.selectFrom("guest_snapshots").select(["id", "state", "removed_at"]).orderBy("taken_at").execute();
  expect(rows.map((r) => [r.id, r.state])).toEqual([
    [blocked.id, "removed"],
    [old.id, "removed"],
    [recent.id, "removed"],
    [newest.id, "taken"],
  ]);
  // Each removal was a step: an execution on the node, approved by nobody but the sweep, completed, audited.
  const removals = await t.db.kysely
    .selectFrom("executions")
    .selectAll()
    .where("command", "like", "pct delsnapshot%")
    .orderBy("created_at")
    .execute();
  expect(removals.map((e) => [e.command, e.status, e.risk])).toEqual(
    // The days rule's removal first (the first sweep), then the cap's, oldest first.
    [old, blocked, recent].map((x) => [`pct delsnapshot 105 ${x.name}`, "completed", "destructive"]),
  );
  const actors = await t.db.kysely
    .selectFrom("audit.events")
    .select("actor")
    .distinct()
    .where("table_name", "=", "executions")
    .where(
      "row_key",
      "in",
      removals.map((e) => e.id),
    )
    .execute();
  expect(actors.map((a) => a.actor).sort()).toEqual(["system:runner", "system:snapshot-retention"]);
  // Delivered to nobody: the agent is not woken for a retention step.
  const links = await t.db.kysely
    .selectFrom("nomos_plan_executions")
    .select("continued_at")
    .where(
      "execution_id",
      "in",
      removals.map((e) => e.id),
    )
    .execute();
  expect(links.every((l) => l.continued_at !== null)).toBe(true);
});

it("leaves a snapshot in place when Proxmox refuses to remove it, and tries again next sweep", { timeout: 60_000 }, async () => {
  const snap = await planWithSnapshot("verified", 10);
  w.host.handle(new RegExp(`^pct delsnapshot 105 ${snap.name}$`), (ctx) => {
    ctx.err("CT is locked (snapshot-delete)\n");
    return 255;
  });
  const sweeper = retention(3);
  const result = await sweeper.sweep();
  expect(result.removed).toEqual([]);
  expect(result.failed).toMatchObject([{ id: snap.id, why: expect.stringMatching(/CT is locked/) }]);
  w.host.resetHandlers();
  expect((await sweeper.sweep()).removed).toEqual([snap.id]);
  await sweeper.stop();
});

it("two sweeps racing (two replicas) remove a snapshot once and record it once", { timeout: 60_000 }, async () => {
  const snap = await planWithSnapshot("verified", 9);
  const [a, b] = [retention(3), retention(3)];
  const results = await Promise.all([a.sweep(), b.sweep()]);
  expect(results.flatMap((r) => r.removed).filter((id) => id === snap.id)).toEqual([snap.id]);
  expect(onGuest()).not.toContain(snap.name);
  const audit = await t.db.kysely
    .selectFrom("audit.events")
    .select("changed_columns")
    .where("table_name", "=", "guest_snapshots")
    .where("row_key", "=", snap.id)
    .where("operation", "=", "UPDATE")
    .execute();
  expect(audit.filter((r) => r.changed_columns?.includes("state"))).toHaveLength(1);
  await Promise.all([a.stop(), b.stop()]);
});

// The retention sweep of Nomos's own guest snapshots, and the bookkeeping
// of rollbacks that finished.
//
//   every sweep:
//     taken + its rollback completed (the button's step, or the same
//       `pct rollback <vmid> <name>` the agent proposed and the operator
//       confirmed, in its session)                     -> rolled_back
//     taken | rolled_back, AND name starts with nomos-, AND
//       (its plan was verified more than keepDays ago
//        OR the guest has more than keepPerGuest newer ones)
//       and no rollback of it is waiting               -> `pct delsnapshot` -> removed
//
// Invariants:
// - Only Nomos's own snapshots are removed: the name prefix AND the database
//   record, both. A snapshot someone else took on the same guest has no
//   record and is never touched; removing it stays a destructive step that
//   needs a person (the classifier rates any delsnapshot destructive).
// - Removing its own is not a step needing a person: the sweep creates the
//   delsnapshot execution approved, as `system:snapshot-retention`, and runs
//   it through the runner like any step (observed and audited). Its result
//   is delivered to nobody (marked delivered): the agent is not woken for it.
// - A blocked or unfinished plan's snapshot is kept (it is what the operator
//   may want to go back to) until the per-guest cap pushes it out.
// - Every replica sweeps; each state change is a conditional UPDATE, so two
//   sweeps racing on one snapshot record it once (the loser's delsnapshot
//   finds it gone, which counts as removed).
// - start()/stop() like every service; stop() is idempotent and waits for a
//   sweep in flight.
import { type Kysely, sql } from "kysely";
import type { Database } from "../db/schema.js";
import { withActor } from "../db/with-actor.js";
import type { ExecutionsPort } from "../executions/executions-port.js";
import type { Logger } from "../log/logger.js";
import { riskReasonOf } from "../risk/classify.js";
import { guestDelsnapshotCommand, snapshotMissing } from "./guest-commands.js";
import { hasNomosPrefix, NOMOS_SNAPSHOT_PREFIX } from "./snapshot-name.js";
import { SnapshotTransitionError, snapshotMarkRemoved, snapshotMarkRolledBack } from "./snapshot-store.js";

const ACTOR = "system:snapshot-retention";

export interface SnapshotRetentionOptions {
  db: Kysely<Database>;
  executions: Pick<ExecutionsPort, "classify" | "create" | "runInline">;
  log: Logger;
  /** NOMOS_SNAPSHOT_KEEP_DAYS: a verified plan's snapshot is removed this long after it was taken. */
  keepDays: number;
  /** NOMOS_SNAPSHOT_KEEP_PER_GUEST: at most this many of Nomos's snapshots stay on one guest. */
  keepPerGuest: number;
  everyMs: number;
}

export interface SweepResult {
  rolledBack: string[];
  removed: string[];
  failed: { id: string; why: string }[];
}

/**
 * Runs one state change; false when another process's sweep made it first
 * (every replica sweeps: the conditional UPDATE lets exactly one win, and
 * the loser's `delsnapshot`, if it ran, found the snapshot gone).
 */
async function byThisSweep(change: () => Promise<unknown>): Promise<boolean> {
  try {
    await change();
    return true;
  } catch (err) {
    if (err instanceof SnapshotTransitionError && err.kind === "conflict") return false;
    throw err;
  }
}

export class SnapshotRetention {
  readonly #o: SnapshotRetentionOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<SweepResult> | undefined;
  #stopping: Promise<void> | undefined;
  lastSweepAt: Date | null = null;

  constructor(options: SnapshotRetentionOptions) {
    this.#o = options;
  }

  start(): void {
    if (this.#timer || this.#stopping) return;
    this.#timer = setInterval(() => {
      this.sweep().catch((err: unknown) => this.#o.log.error({ err }, "snapshot retention sweep failed; the next one retries"));
    }, this.#o.everyMs);
    this.#timer.unref();
  }

  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      if (this.#timer) clearInterval(this.#timer);
      await this.#running?.catch(() => {});
    })();
    return this.#stopping;
  }

  /** One sweep; concurrent calls share the one in flight. */
  sweep(): Promise<SweepResult> {
    this.#running ??= this.#sweep().finally(() => {
      this.#running = undefined;
      this.lastSweepAt = new Date();
    });
    return this.#running;
  }

  async #sweep(): Promise<SweepResult> {
    const { db, log } = this.#o;
    const result: SweepResult = { rolledBack: [], removed: [], failed: [] };
    // Rolled back: by the button's step, or by a rollback the agent proposed
    // (request_execution) and the operator confirmed, in the same session.
    const finished = await db
      .selectFrom("guest_snapshots as s")
      .select("s.id")
      .where("s.state", "=", "taken")
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom("executions as r")
            .select(sql`1`.as("one"))
            .where("r.status", "=", "completed")
            .where((r) =>
              r.or([
                r("r.id", "=", r.ref("s.rollback_execution_id")),
                r.and([
                  r("r.session_id", "=", r.ref("s.session_id")),
                  r("r.target", "=", r.ref("s.node")),
                  r("r.finished_at", ">", r.ref("s.taken_at")),
                  r(
                    sql<string>`split_part(r.command, ' --', 1)`,
                    "=",
                    sql<string>`CASE s.kind WHEN 'qemu' THEN 'qm' ELSE 'pct' END || ' rollback ' || s.vmid || ' ' || s.name`,
                  ),
                ]),
              ]),
            ),
        ),
      )
      .execute();
    for (const { id } of finished) {
      if (await byThisSweep(() => withActor(db, ACTOR, (tx) => snapshotMarkRolledBack(tx, { snapshotId: id })))) result.rolledBack.push(id);
    }

    // Expired: the plan finished well (verified) and the snapshot is older than keepDays.
    const expired = sql<boolean>`(p.outcome IS NOT DISTINCT FROM 'verified' AND s.taken_at < now() - make_interval(days => ${this.#o.keepDays}))`;
    const due = await db
      .with("live", (qb) =>
        qb
          .selectFrom("guest_snapshots as s")
          .innerJoin("plans as p", "p.id", "s.plan_id")
          .leftJoin("executions as r", "r.id", "s.rollback_execution_id")
          .select([
            "s.id",
            "s.session_id",
            "s.plan_id",
            "s.node",
            "s.vmid",
            "s.kind",
            "s.name",
            "s.taken_at",
            "r.status as rollback_status",
            expired.as("expired"),
            // The cap counts what the days rule keeps: an expired snapshot does not hold a place.
            sql<number>`row_number() OVER (PARTITION BY s.node, s.vmid, ${expired} ORDER BY s.taken_at DESC, s.id DESC)`.as("newer_rank"),
          ])
          .where("s.state", "in", ["taken", "rolled_back"])
          .where("s.name", "like", `${NOMOS_SNAPSHOT_PREFIX}%`),
      )
      .selectFrom("live")
      .selectAll()
      .where((eb) => eb.or([eb("expired", "=", true), eb("newer_rank", ">", this.#o.keepPerGuest)]))
      .orderBy("taken_at")
      .execute();

    for (const s of due) {
      if (!hasNomosPrefix(s.name)) continue;
      if (s.rollback_status && ["pending_approval", "approved", "running"].includes(s.rollback_status)) continue;
      const command = guestDelsnapshotCommand(s, s.name);
      const classified = this.#o.executions.classify(command);
      const created = await withActor(db, ACTOR, (tx) =>
        this.#o.executions.create(tx, {
          sessionId: s.session_id,
          planId: s.plan_id,
          target: s.node,
          command,
          description: `Retention: remove Nomos's snapshot ${s.name} of guest ${s.vmid} (${
            s.expired ? `plan verified, older than ${this.#o.keepDays} days` : `more than ${this.#o.keepPerGuest} on this guest`
          })`,
          risk: classified.risk,
          riskReason:
            `${riskReasonOf(classified)}; a Nomos snapshot recorded in guest_snapshots, removed by retention without asking`.slice(0, 500),
          mode: "sync",
          status: "approved",
          timeoutS: 600,
          deliveredInline: true,
        }),
      );
      const done = await this.#o.executions.runInline(created.id);
      const output = `${done.stderr}\n${done.stdout}\n${done.error ?? ""}`;
      if (done.status === "completed" || snapshotMissing(output)) {
        if (!(await byThisSweep(() => withActor(db, ACTOR, (tx) => snapshotMarkRemoved(tx, { snapshotId: s.id }))))) continue;
        result.removed.push(s.id);
        log.info({ snapshotId: s.id, node: s.node, vmid: s.vmid, name: s.name }, "snapshot removed by retention");
      } else {
        const why = output.trim().slice(0, 300) || done.status;
        result.failed.push({ id: s.id, why });
        log.warn(
          { snapshotId: s.id, node: s.node, vmid: s.vmid, name: s.name, why },
          "snapshot retention could not remove a snapshot; the next sweep retries",
        );
      }
    }
    return result;
  }
}

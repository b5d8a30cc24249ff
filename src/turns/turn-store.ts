// The turns table's queries: queue, claim, renew, finish. The only module
// that changes turns.status; every change is one conditional UPDATE.
//
//   queued -> running -> completed | failed | aborted | interrupted
//   queued -> cancelled (coalesced into the turn that ran instead, or the
//                        operator pressed Stop: turnsCancelQueued)
//
// The lock: the unique partial index turns_one_running_per_session lets at
// most one row per session be 'running', across every process. A claim that
// loses the race gets unique_violation and steps aside; whoever finishes the
// running turn claims the queue next.
//
// started_at and finished_at are clock_timestamp(), the moment the row
// changed, not now() (the transaction's start): a claim that waited on the
// index for the previous turn to commit would otherwise record a start
// before that turn's end, and the turns of a session would seem to overlap.
import { type Kysely, sql } from "kysely";
import { isPgError } from "../db/pg-errors.js";
import type { Database, Turn, TurnKind, TurnStatus } from "../db/schema.js";
import { withActor } from "../db/with-actor.js";
import { sessionEventsAppend } from "../events/session-events.js";

export const TURN_LEASE_SECONDS = 120;

export async function turnQueue(
  tx: Kysely<Database>,
  p: { sessionId: string; kind: TurnKind; input: Record<string, unknown> },
): Promise<Turn> {
  return tx.insertInto("turns").values({ session_id: p.sessionId, kind: p.kind, input: p.input }).returningAll().executeTakeFirstOrThrow();
}

/** Stop: the session's queued turns will not run (queued -> cancelled). One conditional UPDATE. */
export async function turnsCancelQueued(tx: Kysely<Database>, p: { sessionId: string; reason: string }): Promise<string[]> {
  const rows = await tx
    .updateTable("turns")
    .set({ status: "cancelled", finished_at: sql`clock_timestamp()`, error: p.reason })
    .where("session_id", "=", p.sessionId)
    .where("status", "=", "queued")
    .returning("id")
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Claims the session's queued work: its oldest queued turn becomes running,
 * the other queued turns are coalesced into it (cancelled, their messages
 * re-pointed to it). Returns undefined when nothing is queued or a turn is
 * already running (in any process).
 */
export async function turnClaimNext(
  db: Kysely<Database>,
  p: { sessionId: string; owner: string },
): Promise<{ turn: Turn; coalesced: string[] } | undefined> {
  try {
    return await withActor(db, `system:${p.owner}`, async (tx) => {
      const queued = await tx
        .selectFrom("turns")
        .select(["id", "kind"])
        .where("session_id", "=", p.sessionId)
        .where("status", "=", "queued")
        .orderBy("created_at")
        .orderBy("id")
        .forUpdate()
        .skipLocked()
        .execute();
      const first = queued[0];
      if (!first) return undefined;
      const coalesced = queued.slice(1).map((t) => t.id);
      const kind: TurnKind = queued.some((t) => t.kind === "operator") ? "operator" : "continuation";
      const turn = await tx
        .updateTable("turns")
        .set({
          status: "running",
          kind,
          started_at: sql`clock_timestamp()`,
          owner: p.owner,
          lease_expires_at: sql`now() + make_interval(secs => ${TURN_LEASE_SECONDS})`,
        })
        .where("id", "=", first.id)
        .where("status", "=", "queued")
        .returningAll()
        .executeTakeFirst();
      if (!turn) return undefined;
      if (coalesced.length > 0) {
        await tx
          .updateTable("turns")
          .set({ status: "cancelled", finished_at: sql`clock_timestamp()`, error: `coalesced into turn ${turn.id}` })
          .where("id", "in", coalesced)
          .where("status", "=", "queued")
          .execute();
        await tx.updateTable("messages").set({ turn_id: turn.id }).where("turn_id", "in", coalesced).execute();
      }
      const input = turn.input as { reason?: string; executionIds?: string[] };
      await sessionEventsAppend(tx, [
        {
          sessionId: p.sessionId,
          turnId: turn.id,
          type: "turn_started",
          data: { turnId: turn.id, kind: turn.kind, reason: input.reason, executionIds: input.executionIds, coalesced },
        },
      ]);
      return { turn, coalesced };
    });
  } catch (err) {
    if (isPgError(err, "unique_violation")) return undefined; // a turn is running: it will claim this work when it ends
    throw err;
  }
}

/**
 * Extends a running turn's lease; false when the turn is no longer running (it was declared lost).
 * Audited as system:turns, like turnsInterruptExpired: the heartbeat is the turns machinery's own write.
 */
export async function turnRenewLease(db: Kysely<Database>, p: { turnId: string; iterations?: number }): Promise<boolean> {
  const row = await withActor(db, "system:turns", (tx) =>
    tx
      .updateTable("turns")
      .set({
        ...(p.iterations !== undefined ? { iterations: p.iterations } : {}),
        lease_expires_at: sql`now() + make_interval(secs => ${TURN_LEASE_SECONDS})`,
      })
      .where("id", "=", p.turnId)
      .where("status", "=", "running")
      .returning("id")
      .executeTakeFirst(),
  );
  return row !== undefined;
}

export async function turnFinish(
  db: Kysely<Database>,
  p: {
    turnId: string;
    sessionId: string;
    status: Exclude<TurnStatus, "queued" | "running" | "cancelled">;
    iterations: number;
    error?: string | null;
    actor: string;
  },
): Promise<Turn | undefined> {
  return withActor(db, p.actor, async (tx) => {
    const turn = await tx
      .updateTable("turns")
      .set({
        status: p.status,
        iterations: p.iterations,
        error: p.error ?? null,
        finished_at: sql`clock_timestamp()`,
        lease_expires_at: null,
      })
      .where("id", "=", p.turnId)
      .where("status", "=", "running")
      .returningAll()
      .executeTakeFirst();
    if (turn) {
      await sessionEventsAppend(tx, [
        {
          sessionId: p.sessionId,
          turnId: p.turnId,
          type: "turn_finished",
          data: { turnId: p.turnId, status: p.status, error: p.error ?? undefined },
        },
      ]);
    }
    return turn;
  });
}

/** Running turns whose process stopped renewing their lease: marked interrupted, so their sessions can run again. */
export async function turnsInterruptExpired(db: Kysely<Database>): Promise<Turn[]> {
  return withActor(db, "system:turns", async (tx) => {
    const turns = await tx
      .updateTable("turns")
      .set({ status: "interrupted", finished_at: sql`clock_timestamp()`, error: "the process running it stopped (lease expired)" })
      .where("status", "=", "running")
      .where("lease_expires_at", "<", sql<Date>`now()`)
      .returningAll()
      .execute();
    await sessionEventsAppend(
      tx,
      turns.map((t) => ({
        sessionId: t.session_id,
        turnId: t.id,
        type: "turn_finished" as const,
        data: { turnId: t.id, status: "interrupted" },
      })),
    );
    return turns;
  });
}

/** Sessions with queued work and no running turn. */
export async function turnsSessionsWaiting(db: Kysely<Database>): Promise<string[]> {
  const rows = await db
    .selectFrom("turns as q")
    .select("q.session_id")
    .distinct()
    .where("q.status", "=", "queued")
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom("turns as r").select("r.id").whereRef("r.session_id", "=", "q.session_id").where("r.status", "=", "running"))),
    )
    .execute();
  return rows.map((r) => r.session_id);
}

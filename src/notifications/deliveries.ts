// The delivery log and its state machine: the only module that changes
// notification_deliveries.status; every change is one conditional UPDATE.
//
//   pending --claim--> sending --ok--> delivered
//      ^                  |  \--error, attempts < max_attempts--> pending (after a backoff)
//      |                  \--error at max_attempts, or gone-----> failed
//      \---lease expired (its sender died mid-send)--/
//
// Exactly once across replicas: a claim takes due rows with FOR UPDATE SKIP
// LOCKED and marks them 'sending' under the claimant's name in the same
// statement, so two processes never hold one row; the ends (delivered,
// retry, failed) apply only while the row is still 'sending' under that
// claimant. A sender that died mid-send leaves a claim that expires; the
// sweep puts it back to 'pending' (the receiver may then see that id twice:
// it is the payload's stable id, so it can tell).
import { type Kysely, sql } from "kysely";
import type { Database, DeliveryChannel, DeliveryStatus, NotificationType } from "../db/schema.js";

/** One claimed delivery, with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  notificationId: string;
  operatorId: string;
  channel: DeliveryChannel;
  channelRef: string;
  attempts: number;
  maxAttempts: number;
  sessionId: string;
  type: NotificationType;
  title: string;
  text: string;
  /** When the event happened (the payload's `at`). */
  at: Date;
}

/** Claims up to `limit` due deliveries for `owner`, each for `leaseSeconds`. */
export async function deliveriesClaimDue(
  db: Kysely<Database>,
  p: { owner: string; limit: number; leaseSeconds: number },
): Promise<ClaimedDelivery[]> {
  // READ COMMITTED is enough: the subquery locks the rows it picks and skips
  // rows another claimant holds; the UPDATE re-checks nothing else.
  const rows = await sql<{
    id: string;
    notification_id: string;
    operator_id: string;
    channel: DeliveryChannel;
    channel_ref: string;
    attempts: number;
    max_attempts: number;
    session_id: string;
    type: NotificationType;
    title: string;
    text: string;
    created_at: Date;
  }>`
    WITH due AS (
      SELECT id FROM notification_deliveries
       WHERE status = 'pending' AND next_attempt_at <= now()
       ORDER BY next_attempt_at
       LIMIT ${p.limit}
       FOR UPDATE SKIP LOCKED
    ), claimed AS (
      UPDATE notification_deliveries d
         SET status = 'sending', attempts = d.attempts + 1, claimed_by = ${p.owner},
             claim_expires_at = now() + make_interval(secs => ${p.leaseSeconds})
        FROM due WHERE d.id = due.id
      RETURNING d.id, d.notification_id, d.operator_id, d.channel, d.channel_ref, d.attempts, d.max_attempts
    )
    SELECT c.*, n.session_id, n.type, n.title, n.text, n.created_at
      FROM claimed c JOIN notifications n ON n.id = c.notification_id`.execute(db);
  return rows.rows.map((r) => ({
    id: r.id,
    notificationId: r.notification_id,
    operatorId: r.operator_id,
    channel: r.channel,
    channelRef: r.channel_ref,
    attempts: r.attempts,
    maxAttempts: r.max_attempts,
    sessionId: r.session_id,
    type: r.type,
    title: r.title,
    text: r.text,
    at: r.created_at,
  }));
}

/** The receiver took it. */
export async function deliveryMarkDelivered(db: Kysely<Database>, p: { id: string; owner: string }): Promise<boolean> {
  const r = await db
    .updateTable("notification_deliveries")
    .set({ status: "delivered", delivered_at: sql`now()`, last_error: null, claimed_by: null, claim_expires_at: null })
    .where("id", "=", p.id)
    .where("status", "=", "sending")
    .where("claimed_by", "=", p.owner)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/**
 * This attempt failed: back to 'pending' after `retryInSeconds`, or
 * 'failed' when it was the last attempt or `final` (the channel is gone).
 */
export async function deliveryMarkAttemptFailed(
  db: Kysely<Database>,
  p: { id: string; owner: string; error: string; retryInSeconds: number; final?: boolean },
): Promise<DeliveryStatus | undefined> {
  const last = p.final ? sql<boolean>`true` : sql<boolean>`attempts >= max_attempts`;
  const row = await db
    .updateTable("notification_deliveries")
    .set({
      status: sql`CASE WHEN ${last} THEN 'failed' ELSE 'pending' END`,
      next_attempt_at: sql`CASE WHEN ${last} THEN next_attempt_at ELSE now() + make_interval(secs => ${p.retryInSeconds}) END`,
      last_error: p.error.slice(0, 1000),
      claimed_by: null,
      claim_expires_at: null,
    })
    .where("id", "=", p.id)
    .where("status", "=", "sending")
    .where("claimed_by", "=", p.owner)
    .returning("status")
    .executeTakeFirst();
  return row?.status;
}

/** Claims whose sender died (lease expired) go back to the queue, or fail if that was the last attempt. */
export async function deliveriesReclaimExpired(db: Kysely<Database>): Promise<number> {
  const r = await db
    .updateTable("notification_deliveries")
    .set({
      status: sql`CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'pending' END`,
      next_attempt_at: sql`now()`,
      last_error: "the process sending it stopped before the receiver answered; sent again",
      claimed_by: null,
      claim_expires_at: null,
    })
    .where("status", "=", "sending")
    .where("claim_expires_at", "<", sql<Date>`now()`)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** Milliseconds until the next pending delivery is due, by the database clock (0 if overdue), or undefined. */
export async function deliveriesNextDueInMs(db: Kysely<Database>): Promise<number | undefined> {
  const row = await sql<{ ms: number | null }>`
    SELECT greatest(0, extract(epoch FROM min(next_attempt_at) - now()) * 1000)::float8 AS ms
      FROM notification_deliveries WHERE status = 'pending'`.execute(db);
  const ms = row.rows[0]?.ms;
  return ms === null || ms === undefined ? undefined : Number(ms);
}

/** A row of the delivery log, as the settings page shows it. */
export interface DeliveryView {
  id: string;
  notificationId: string;
  sessionId: string;
  type: NotificationType;
  title: string;
  channel: DeliveryChannel;
  destination: string;
  status: DeliveryStatus;
  attempts: number;
  maxAttempts: number;
  lastError: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
}

/** The operator's delivery log, newest first. */
export async function deliveriesOf(db: Kysely<Database>, p: { operatorId: string; limit: number }): Promise<DeliveryView[]> {
  const rows = await db
    .selectFrom("notification_deliveries as d")
    .innerJoin("notifications as n", "n.id", "d.notification_id")
    .select([
      "d.id",
      "d.notification_id",
      "n.session_id",
      "n.type",
      "n.title",
      "d.channel",
      "d.destination",
      "d.status",
      "d.attempts",
      "d.max_attempts",
      "d.last_error",
      "d.next_attempt_at",
      "d.delivered_at",
      "d.created_at",
    ])
    .where("d.operator_id", "=", p.operatorId)
    .orderBy("d.created_at", "desc")
    .orderBy("d.id")
    .limit(p.limit)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    notificationId: r.notification_id,
    sessionId: r.session_id,
    type: r.type,
    title: r.title,
    channel: r.channel,
    destination: r.destination,
    status: r.status,
    attempts: r.attempts,
    maxAttempts: r.max_attempts,
    lastError: r.last_error,
    nextAttemptAt: r.status === "pending" ? r.next_attempt_at.toISOString() : null,
    deliveredAt: r.delivered_at?.toISOString() ?? null,
    createdAt: r.created_at.toISOString(),
  }));
}

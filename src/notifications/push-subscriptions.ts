// The browsers an operator receives Web Push in: the only module that writes
// push_subscriptions. A browser's PushSubscription is stored per operator
// (the endpoint is unique: subscribing again from the same browser, or as
// another operator, moves it); a subscription the push service reports gone
// (404/410) is deleted by the notifier through pushSubscriptionForget.
import { type Kysely, sql } from "kysely";
import type { Database } from "../db/schema.js";

export interface PushSubscriptionInput {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export async function pushSubscriptionSave(
  db: Kysely<Database>,
  p: { operatorId: string; subscription: PushSubscriptionInput; userAgent?: string | null },
): Promise<{ id: string }> {
  const values = {
    operator_id: p.operatorId,
    endpoint: p.subscription.endpoint,
    p256dh: p.subscription.keys.p256dh,
    auth: p.subscription.keys.auth,
    user_agent: p.userAgent?.slice(0, 500) ?? null,
  };
  return db
    .insertInto("push_subscriptions")
    .values(values)
    .onConflict((oc) =>
      oc.column("endpoint").doUpdateSet({
        operator_id: values.operator_id,
        p256dh: values.p256dh,
        auth: values.auth,
        user_agent: values.user_agent,
        created_at: sql`now()`,
      }),
    )
    .returning("id")
    .executeTakeFirstOrThrow();
}

/** The operator unsubscribes a browser; returns whether it was theirs. */
export async function pushSubscriptionRemove(db: Kysely<Database>, p: { operatorId: string; endpoint: string }): Promise<boolean> {
  const r = await db
    .deleteFrom("push_subscriptions")
    .where("operator_id", "=", p.operatorId)
    .where("endpoint", "=", p.endpoint)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** The push service said the subscription no longer exists. */
export async function pushSubscriptionForget(db: Kysely<Database>, p: { id: string }): Promise<void> {
  await db.deleteFrom("push_subscriptions").where("id", "=", p.id).execute();
}

export async function pushSubscriptionsCount(db: Kysely<Database>, p: { operatorId: string }): Promise<number> {
  const row = await db
    .selectFrom("push_subscriptions")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("operator_id", "=", p.operatorId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// "Send test notification" on the settings page: one message straight to
// each of the operator's channels (not through the outbox: the operator
// wants to see now whether ntfy, the webhook and this browser answer), with
// each channel's result. The webhook body has the contract's shape plus
// `test: true`, so a receiver can tell it from a real event.
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database, DeliveryChannel } from "../db/schema.js";
import { withActor } from "../db/with-actor.js";
import type { NotificationPayload } from "./payload.js";
import { SendError, sendNtfy, sendPush, sendWebhook, vapidSubject } from "./senders.js";
import { vapidKeysEnsure } from "./vapid.js";

export interface TestSendResult {
  channel: DeliveryChannel;
  destination: string;
  ok: boolean;
  error?: string;
}

export async function notificationTestSend(
  db: Kysely<Database>,
  p: { operatorId: string; origin: URL; timeoutMs?: number },
): Promise<TestSendResult[]> {
  const payload: NotificationPayload & { test: true } = {
    id: randomUUID(),
    type: "plan_finished",
    sessionId: "",
    title: "Nomos test notification",
    text: "If you can read this, Nomos can reach you here.",
    url: `${p.origin.origin}/#/settings`,
    at: new Date().toISOString(),
    test: true,
  };
  const o = { timeoutMs: p.timeoutMs ?? 10_000 };
  const channels = await db
    .selectFrom("notification_channels")
    .selectAll()
    .where("operator_id", "=", p.operatorId)
    .where("enabled", "=", true)
    .execute();
  const subs = await db.selectFrom("push_subscriptions").selectAll().where("operator_id", "=", p.operatorId).execute();
  const vapid = subs.length > 0 ? await withActor(db, "system:notifier", (tx) => vapidKeysEnsure(tx)) : undefined;
  const attempt = async (channel: DeliveryChannel, destination: string, send: () => Promise<void>): Promise<TestSendResult> => {
    try {
      await send();
      return { channel, destination, ok: true };
    } catch (err) {
      return { channel, destination, ok: false, error: err instanceof SendError ? err.message : (err as Error).message };
    }
  };
  return Promise.all([
    ...channels.map((c) =>
      attempt(c.kind, c.url, () =>
        c.kind === "webhook"
          ? sendWebhook({ url: c.url, secret: c.secret ?? "", payload }, o)
          : sendNtfy({ url: c.url, token: c.secret, payload }, o),
      ),
    ),
    ...subs.map((s) =>
      attempt("push", new URL(s.endpoint).origin, () =>
        sendPush(
          {
            subscription: { endpoint: s.endpoint, keys: { p256dh: s.p256dh, auth: s.auth } },
            vapid: vapid!,
            subject: vapidSubject(p.origin),
            payload,
          },
          o,
        ),
      ),
    ),
  ]);
}

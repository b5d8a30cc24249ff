// The notifier: delivers the outbox (notification_deliveries) to ntfy,
// webhooks and Web Push. It wakes on NOTIFY 'nomos_notifications' (sent by
// the session_events trigger of 060 when an event commits) on the process's
// one LISTEN connection, and on every (re)connect of it; a sweep every
// sweepSeconds is the backstop for a missed NOTIFY, puts back claims whose
// sender died, closes assent windows whose time ran out (so "window expired
// with results waiting" is told), and applies the environment's channels
// once the first operator exists.
//
// Invariants:
// - A delivery is sent only while this process holds its claim
//   (deliveries.ts: FOR UPDATE SKIP LOCKED), so replicas never send the same
//   copy twice; its payload's id is the notification's, the same on retries.
// - A failed attempt is retried after base * 2^(attempt-1) (capped), at most
//   max_attempts times; the delivery log keeps each row's status, attempts
//   and last error. A timer wakes the notifier when the next retry is due.
// - One pump runs at a time per process; a wake during it runs it again.
//   stop() is idempotent: stop listening and sweeping, then wait for the
//   sends in flight.
import type { Kysely } from "kysely";
import { assentWindowsCloseExpired } from "../assent/window.js";
import type { Sql } from "../db/connect.js";
import type { Database } from "../db/schema.js";
import { withActor } from "../db/with-actor.js";
import type { Logger } from "../log/logger.js";
import { type EnvChannels, notificationChannelsSeed } from "./channels.js";
import {
  type ClaimedDelivery,
  deliveriesClaimDue,
  deliveriesNextDueInMs,
  deliveriesReclaimExpired,
  deliveryMarkAttemptFailed,
  deliveryMarkDelivered,
} from "./deliveries.js";
import { payloadOf } from "./payload.js";
import { pushSubscriptionForget } from "./push-subscriptions.js";
import { SendError, sendNtfy, sendPush, sendWebhook, vapidSubject } from "./senders.js";
import { type VapidKeys, vapidKeysEnsure } from "./vapid.js";

export const NOTIFICATIONS_CHANNEL = "nomos_notifications";
const ACTOR = "system:notifier";

export interface NotifierOptions {
  db: Kysely<Database>;
  /** The process's LISTEN connection (main.ts). */
  listen: Sql;
  log: Logger;
  /** This process, as written in claimed_by. */
  owner: string;
  /** Where operators reach Nomos (NOMOS_PUBLIC_URL), read at send time: links point there. */
  publicOrigin: () => URL;
  sweepSeconds: number;
  /** NOMOS_NOTIFY_*: the first operator's channels. */
  envChannels?: EnvChannels;
  /** The first retry's wait; doubled each attempt (5 s by default). */
  backoffBaseMs?: number;
  /** The longest wait between attempts (1 h by default). */
  backoffMaxMs?: number;
  /** How long a claim holds before another process may send it again (60 s). */
  leaseSeconds?: number;
  /** How long a receiver may take to answer (10 s). */
  timeoutMs?: number;
  /** Deliveries claimed at once (20). */
  batch?: number;
}

export interface NotifierState {
  listening: boolean;
  lastSweepAt: string | null;
  delivered: number;
  failedAttempts: number;
}

export class Notifier {
  private vapid: VapidKeys | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private dueTimer: NodeJS.Timeout | undefined;
  private pumping: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private stopping: Promise<void> | undefined;
  private seeded = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly st: NotifierState = { listening: false, lastSweepAt: null, delivered: 0, failedAttempts: 0 };

  constructor(private readonly o: NotifierOptions) {}

  async start(): Promise<void> {
    this.vapid = await withActor(this.o.db, ACTOR, (tx) => vapidKeysEnsure(tx));
    await this.seed();
    const listening = await this.o.listen.listen(
      NOTIFICATIONS_CHANNEL,
      () => this.wake(),
      () => {
        // First LISTEN and every reconnect: NOTIFYs may have been missed.
        this.st.listening = true;
        this.wake();
      },
    );
    this.unlisten = listening.unlisten;
    this.sweepTimer = setInterval(() => void this.sweep(), this.o.sweepSeconds * 1000);
    this.sweepTimer.unref();
  }

  state(): NotifierState {
    return { ...this.st };
  }

  /** Runs the pump now (or again, once the running one ends). */
  wake(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.pump()
      .catch((err: unknown) => this.o.log.error({ err }, "notification pump failed; the sweep will retry"))
      .finally(() => {
        this.pumping = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** The backstop; also run by tests. */
  async sweep(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.seed();
      const reclaimed = await withActor(this.o.db, ACTOR, (tx) => deliveriesReclaimExpired(tx));
      if (reclaimed > 0) this.o.log.warn({ reclaimed }, "deliveries whose sender stopped mid-send are queued again");
      const { sessionIds } = await withActor(this.o.db, "system:sweep", (tx) => assentWindowsCloseExpired(tx));
      if (sessionIds.length > 0) this.o.log.info({ sessions: sessionIds.length }, "expired assent windows closed");
      this.st.lastSweepAt = new Date().toISOString();
    } catch (err) {
      this.o.log.error({ err }, "notification sweep failed");
    }
    this.wake();
  }

  private async seed(): Promise<void> {
    const envChannels = this.o.envChannels;
    if (this.seeded || (!envChannels?.webhook && !envChannels?.ntfy)) return;
    const result = await withActor(this.o.db, "system:startup", (tx) => notificationChannelsSeed(tx, envChannels));
    if (result === "no_operator") return;
    this.seeded = true;
    if (result === "applied") this.o.log.info("notification channels from NOMOS_NOTIFY_* applied to the first operator");
  }

  private async pump(): Promise<void> {
    const limit = this.o.batch ?? 20;
    for (;;) {
      if (this.stopped) return;
      const claimed = await withActor(this.o.db, ACTOR, (tx) =>
        deliveriesClaimDue(tx, { owner: this.o.owner, limit, leaseSeconds: this.o.leaseSeconds ?? 60 }),
      );
      if (claimed.length === 0) break;
      await Promise.all(claimed.map((d) => this.track(this.deliver(d))));
      if (claimed.length < limit) break;
    }
    await this.armDueTimer();
  }

  /** Sleeps until the next retry is due (by the database clock). */
  private async armDueTimer(): Promise<void> {
    const ms = await deliveriesNextDueInMs(this.o.db);
    clearTimeout(this.dueTimer);
    this.dueTimer = undefined;
    if (ms === undefined || this.stopped) return;
    this.dueTimer = setTimeout(() => this.wake(), Math.min(Math.ceil(ms) + 5, 2 ** 31 - 1));
    this.dueTimer.unref();
  }

  private track(p: Promise<void>): Promise<void> {
    this.inFlight.add(p);
    return p.finally(() => this.inFlight.delete(p));
  }

  private backoffSeconds(attempt: number): number {
    const base = this.o.backoffBaseMs ?? 5000;
    const max = this.o.backoffMaxMs ?? 3_600_000;
    return Math.min(max, base * 2 ** Math.max(0, attempt - 1)) / 1000;
  }

  private async deliver(d: ClaimedDelivery): Promise<void> {
    const log = this.o.log.child({ deliveryId: d.id, channel: d.channel, type: d.type, attempt: d.attempts });
    const payload = payloadOf(d, this.o.publicOrigin());
    const timeoutMs = this.o.timeoutMs ?? 10_000;
    try {
      if (d.channel === "push") {
        const sub = await this.o.db.selectFrom("push_subscriptions").selectAll().where("id", "=", d.channelRef).executeTakeFirst();
        if (!sub) throw new SendError("the browser's subscription was removed", { gone: true });
        if (!this.vapid) throw new SendError("the notifier has no VAPID keys (not started)");
        await sendPush(
          {
            subscription: { endpoint: sub.endpoint, keys: { p256dh: sub.p256dh, auth: sub.auth } },
            vapid: this.vapid,
            subject: vapidSubject(this.o.publicOrigin()),
            payload,
          },
          { timeoutMs },
        );
      } else {
        const ch = await this.o.db.selectFrom("notification_channels").selectAll().where("id", "=", d.channelRef).executeTakeFirst();
        if (!ch?.enabled) throw new SendError(`the ${d.channel} channel was removed or turned off`, { gone: true });
        if (ch.kind === "webhook") await sendWebhook({ url: ch.url, secret: ch.secret ?? "", payload }, { timeoutMs });
        else await sendNtfy({ url: ch.url, token: ch.secret, payload }, { timeoutMs });
      }
      await withActor(this.o.db, ACTOR, (tx) => deliveryMarkDelivered(tx, { id: d.id, owner: this.o.owner }));
      this.st.delivered++;
      log.info("notification delivered");
    } catch (err) {
      const e = err instanceof SendError ? err : new SendError((err as Error).message, { cause: err });
      this.st.failedAttempts++;
      try {
        if (e.gone && d.channel === "push") {
          await withActor(this.o.db, ACTOR, (tx) => pushSubscriptionForget(tx, { id: d.channelRef }));
        }
        const status = await withActor(this.o.db, ACTOR, (tx) =>
          deliveryMarkAttemptFailed(tx, {
            id: d.id,
            owner: this.o.owner,
            error: e.message,
            retryInSeconds: this.backoffSeconds(d.attempts),
            final: e.gone,
          }),
        );
        log.warn(
          { err: e.message, status },
          status === "failed" ? "notification delivery gave up" : "notification delivery failed; will retry",
        );
      } catch (markErr) {
        // The claim's lease runs out and the sweep queues it again.
        log.error({ err: markErr }, "could not record a failed delivery attempt");
      }
    }
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.stopped = true;
      clearInterval(this.sweepTimer);
      clearTimeout(this.dueTimer);
      this.st.listening = false;
      await this.unlisten?.().catch(() => {});
      await this.pumping;
      await Promise.allSettled([...this.inFlight]);
    })();
    return this.stopping;
  }
}

// An operator's notification channels (ntfy, webhook): the only module that
// writes notification_channels. One row per operator per kind (a unique
// constraint); setting a channel again replaces it. The environment's
// channels (NOMOS_NOTIFY_*) belong to the first operator and are applied at
// start by notificationChannelsSeed, idempotently: the same environment
// twice changes nothing, and the settings page shows what it set.
// Secrets (the ntfy token, the webhook's signing secret) are stored to be
// used, never shown back: views say only whether one is set.
import { type Kysely, sql } from "kysely";
import type { Database, NotificationChannelKind } from "../db/schema.js";

export interface ChannelView {
  kind: NotificationChannelKind;
  url: string;
  /** ntfy: an access token is set; webhook: a signing secret is set. */
  hasSecret: boolean;
  enabled: boolean;
  updatedAt: string;
}

export interface ChannelSetting {
  kind: NotificationChannelKind;
  url: string;
  /** ntfy: the access token (optional); webhook: the signing secret (required, at least 16 characters). */
  secret: string | null;
  enabled?: boolean;
}

/** The webhook's secret: long enough that a receiver's check means something. */
export const WEBHOOK_SECRET_MIN = 16;

export async function notificationChannelsOf(db: Kysely<Database>, p: { operatorId: string }): Promise<ChannelView[]> {
  const rows = await db.selectFrom("notification_channels").selectAll().where("operator_id", "=", p.operatorId).orderBy("kind").execute();
  return rows.map((r) => ({
    kind: r.kind,
    url: r.url,
    hasSecret: r.secret !== null && r.secret !== "",
    enabled: r.enabled,
    updatedAt: r.updated_at.toISOString(),
  }));
}

/**
 * Sets (inserts or replaces) one of the operator's channels. `secret:
 * undefined` keeps the stored one (the page does not know it); null clears
 * it. Returns whether anything changed.
 */
export async function notificationChannelSet(
  db: Kysely<Database>,
  p: { operatorId: string; kind: NotificationChannelKind; url: string; secret?: string | null; enabled?: boolean },
): Promise<boolean> {
  const enabled = p.enabled ?? true;
  const keep = p.secret === undefined;
  const row = await db
    .insertInto("notification_channels")
    .values({ operator_id: p.operatorId, kind: p.kind, url: p.url, secret: p.secret ?? null, enabled })
    .onConflict((oc) =>
      oc
        .constraint("notification_channels_one_per_kind")
        .doUpdateSet({
          url: p.url,
          secret: keep ? sql`notification_channels.secret` : (p.secret ?? null),
          enabled,
          updated_at: sql`now()`,
        })
        // Idempotent: the same setting twice is no UPDATE (and no audit row).
        .where((eb) =>
          eb.or([
            eb("notification_channels.url", "is distinct from", p.url),
            eb("notification_channels.enabled", "is distinct from", enabled),
            ...(keep ? [] : [eb("notification_channels.secret", "is distinct from", p.secret ?? null)]),
          ]),
        ),
    )
    .returning("id")
    .executeTakeFirst();
  return row !== undefined;
}

/** Removes one of the operator's channels; returns whether it existed. */
export async function notificationChannelRemove(
  db: Kysely<Database>,
  p: { operatorId: string; kind: NotificationChannelKind },
): Promise<boolean> {
  const r = await db
    .deleteFrom("notification_channels")
    .where("operator_id", "=", p.operatorId)
    .where("kind", "=", p.kind)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** What the environment configures for the first operator (config/env.ts). */
export interface EnvChannels {
  webhook?: { url: string; secret: string } | undefined;
  ntfy?: { url: string; token?: string | undefined } | undefined;
}

/**
 * Applies the environment's channels to the first operator (the oldest).
 * Returns "no_operator" while none exists (the notifier's sweep tries again),
 * "applied" otherwise. Pass a withActor transaction.
 */
export async function notificationChannelsSeed(db: Kysely<Database>, env: EnvChannels): Promise<"applied" | "no_operator" | "nothing"> {
  if (!env.webhook && !env.ntfy) return "nothing";
  const first = await db.selectFrom("operators").select("id").orderBy("created_at").orderBy("id").limit(1).executeTakeFirst();
  if (!first) return "no_operator";
  if (env.webhook) {
    await notificationChannelSet(db, { operatorId: first.id, kind: "webhook", url: env.webhook.url, secret: env.webhook.secret });
  }
  if (env.ntfy) {
    await notificationChannelSet(db, { operatorId: first.id, kind: "ntfy", url: env.ntfy.url, secret: env.ntfy.token ?? null });
  }
  return "applied";
}

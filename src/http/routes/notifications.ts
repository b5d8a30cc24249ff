// Notification settings of the operator calling (issue 16): their ntfy and
// webhook channels, the browsers they receive Web Push in, the VAPID public
// key a browser subscribes with, a test send, and their delivery log. Every
// route acts on the caller's own settings. Setting a destination (and the
// test send) needs the operator role: a viewer is never notified (sessions
// are created by operators), and a destination is a URL this server will
// POST to. The API token is no operator and has no settings (403).
import { Hono } from "hono";
import { z } from "zod";
import { withActor } from "../../db/with-actor.js";
import {
  notificationChannelRemove,
  notificationChannelSet,
  notificationChannelsOf,
  WEBHOOK_SECRET_MIN,
} from "../../notifications/channels.js";
import { deliveriesOf } from "../../notifications/deliveries.js";
import { pushSubscriptionRemove, pushSubscriptionSave, pushSubscriptionsCount } from "../../notifications/push-subscriptions.js";
import { notificationTestSend } from "../../notifications/test-send.js";
import { vapidKeysEnsure } from "../../notifications/vapid.js";
import type { ApiDeps } from "../api-deps.js";
import type { AuthEnv } from "../auth-middleware.js";
import { HttpError } from "../http-error.js";
import { isLoopbackHost, publicOriginFrom } from "../public-origin.js";
import { requireRole } from "../require-role.js";
import { validate } from "../validate.js";

const httpUrl = z
  .string()
  .max(2000)
  .refine((v) => {
    try {
      return /^https?:$/.test(new URL(v).protocol);
    } catch {
      return false;
    }
  }, "must be an http:// or https:// URL");

const kindParam = z.object({ kind: z.enum(["ntfy", "webhook"]) });

const channelBody = z.object({
  url: httpUrl,
  /** ntfy: the access token; webhook: the signing secret. Absent: keep the stored one; null: clear it. */
  secret: z.string().max(500).nullable().optional(),
  enabled: z.boolean().optional(),
});

/** A push service's endpoint: https (every real one), or http on loopback (a local test double). */
const endpoint = z
  .string()
  .max(2000)
  .refine((v) => {
    try {
      const u = new URL(v);
      return u.protocol === "https:" || (u.protocol === "http:" && isLoopbackHost(u.hostname));
    } catch {
      return false;
    }
  }, "must be an https:// URL (a push service's endpoint)");

const subscriptionBody = z.object({
  endpoint,
  keys: z.object({ p256dh: z.string().min(1).max(200), auth: z.string().min(1).max(100) }),
});

const unsubscribeBody = z.object({ endpoint: z.string().max(2000) });

const deliveriesQuery = z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) });

export function notificationRoutes(deps: ApiDeps) {
  const origin = deps.publicOrigin ?? publicOriginFrom({ host: "127.0.0.1", port: 8080 });
  const operatorOf = (c: { get(k: "operator"): AuthEnv["Variables"]["operator"] }): string => {
    const id = c.get("operator").id;
    if (!id) throw new HttpError("forbidden", "notification settings belong to an operator login; the API token has none");
    return id;
  };
  return new Hono<AuthEnv>()
    .get("/api/notifications/channels", async (c) => {
      const operatorId = operatorOf(c);
      return c.json({
        channels: await notificationChannelsOf(deps.db, { operatorId }),
        pushSubscriptions: await pushSubscriptionsCount(deps.db, { operatorId }),
      });
    })
    .put(
      "/api/notifications/channels/:kind",
      requireRole("operator", "setting a notification channel"),
      validate("param", kindParam),
      validate("json", channelBody),
      async (c) => {
        const operatorId = operatorOf(c);
        const { kind } = c.req.valid("param");
        const body = c.req.valid("json");
        if (kind === "webhook") {
          const stored = (await notificationChannelsOf(deps.db, { operatorId })).find((ch) => ch.kind === "webhook");
          const keeps = body.secret === undefined && stored?.hasSecret;
          if (!keeps && (body.secret ?? "").length < WEBHOOK_SECRET_MIN) {
            throw new HttpError(
              "bad_request",
              `body.secret: a webhook needs a signing secret of at least ${WEBHOOK_SECRET_MIN} characters`,
              "body.secret",
            );
          }
        }
        await withActor(deps.db, c.get("actor"), (tx) =>
          notificationChannelSet(tx, {
            operatorId,
            kind,
            url: body.url,
            ...(body.secret !== undefined ? { secret: body.secret === "" ? null : body.secret } : {}),
            ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
          }),
        );
        return c.json({ channels: await notificationChannelsOf(deps.db, { operatorId }) });
      },
    )
    .delete(
      "/api/notifications/channels/:kind",
      requireRole("operator", "removing a notification channel"),
      validate("param", kindParam),
      async (c) => {
        const operatorId = operatorOf(c);
        const { kind } = c.req.valid("param");
        await withActor(deps.db, c.get("actor"), (tx) => notificationChannelRemove(tx, { operatorId, kind }));
        return c.json({ channels: await notificationChannelsOf(deps.db, { operatorId }) });
      },
    )
    .get("/api/notifications/vapid-public-key", async (c) => {
      const keys = await withActor(deps.db, "system:notifier", (tx) => vapidKeysEnsure(tx));
      return c.json({ publicKey: keys.publicKey });
    })
    .post(
      "/api/notifications/push-subscriptions",
      requireRole("operator", "subscribing a browser to notifications"),
      validate("json", subscriptionBody),
      async (c) => {
        const operatorId = operatorOf(c);
        const subscription = c.req.valid("json");
        const saved = await withActor(deps.db, c.get("actor"), (tx) =>
          pushSubscriptionSave(tx, { operatorId, subscription, userAgent: c.req.header("user-agent") ?? null }),
        );
        return c.json({ id: saved.id }, 201);
      },
    )
    .delete("/api/notifications/push-subscriptions", validate("json", unsubscribeBody), async (c) => {
      const operatorId = operatorOf(c);
      const { endpoint: e } = c.req.valid("json");
      const removed = await withActor(deps.db, c.get("actor"), (tx) => pushSubscriptionRemove(tx, { operatorId, endpoint: e }));
      return c.json({ removed });
    })
    .post("/api/notifications/test", requireRole("operator", "sending a test notification"), async (c) => {
      const operatorId = operatorOf(c);
      return c.json({ results: await notificationTestSend(deps.db, { operatorId, origin: origin.url }) });
    })
    .get("/api/notifications/deliveries", validate("query", deliveriesQuery), async (c) => {
      const operatorId = operatorOf(c);
      return c.json({ deliveries: await deliveriesOf(deps.db, { operatorId, limit: c.req.valid("query").limit }) });
    });
}

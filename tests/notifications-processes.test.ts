// Two service processes (src/main.ts, as `npm start` runs it) on one
// database, both with the first operator's channels from NOMOS_NOTIFY_*:
// each event reaches the ntfy double, the webhook receiver and the Web Push
// endpoint double once, whichever process wakes first; starting twice sets
// the channels and the VAPID keys once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withActor } from "../src/db/with-actor.js";
import { sessionEventsAppend } from "../src/events/session-events.js";
import { pushSubscriptionSave } from "../src/notifications/push-subscriptions.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";
import { browserPushKeys, type Receiver, startReceiver, until, webhookVerify } from "./helpers/notify-receivers.js";
import { type ServiceProcess, startService } from "./helpers/service-process.js";

const t = useTestDatabase();
const SECRET = "two-processes-share-this-secret";
const services: ServiceProcess[] = [];
let ntfy: Receiver;
let webhook: Receiver;
let push: Receiver;

beforeAll(async () => {
  ntfy = await startReceiver();
  webhook = await startReceiver();
  push = await startReceiver({ okStatus: 201 });
  const env = {
    DATABASE_URL: t.url,
    NOMOS_ADMIN_USER: "ada",
    NOMOS_ADMIN_PASSWORD: "tangerine orbit kettle",
    NOMOS_NOTIFY_WEBHOOK_URL: webhook.url,
    NOMOS_NOTIFY_WEBHOOK_SECRET: SECRET,
    NOMOS_NOTIFY_NTFY_URL: ntfy.url,
    NOMOS_NOTIFY_NTFY_TOKEN: "tk_two",
  };
  // One migrates first, so the second starts on a ready database.
  services.push(await startService(env));
  services.push(await startService(env));
});

afterAll(async () => {
  const codes = [];
  for (const s of services) codes.push(await s.stop());
  for (const r of [ntfy, webhook, push]) await r?.close();
  expect(codes).toEqual([0, 0]);
});

describe("notifications from two service processes", () => {
  it("set the first operator's channels and the VAPID keys once, however many processes start", async () => {
    const ada = await t.db.kysely.selectFrom("operators").select("id").where("username", "=", "ada").executeTakeFirstOrThrow();
    const channels = await t.db.kysely
      .selectFrom("notification_channels")
      .select(["kind", "url"])
      .where("operator_id", "=", ada.id)
      .orderBy("kind")
      .execute();
    expect(channels).toEqual([
      { kind: "ntfy", url: ntfy.url },
      { kind: "webhook", url: webhook.url },
    ]);
    const writes = await t.db.kysely
      .selectFrom("audit.events")
      .select(["table_name", "operation"])
      .where("table_name", "in", ["notification_channels", "notification_vapid_keys"])
      .orderBy("table_name")
      .execute();
    expect(writes.map((w) => `${w.table_name} ${w.operation}`)).toEqual([
      "notification_channels INSERT",
      "notification_channels INSERT",
      "notification_vapid_keys INSERT",
    ]);
  });

  it("deliver each of 10 events once per channel", async () => {
    const ada = await t.db.kysely.selectFrom("operators").select("id").where("username", "=", "ada").executeTakeFirstOrThrow();
    const browser = browserPushKeys();
    await withActor(t.db.kysely, "operator:ada", (tx) =>
      pushSubscriptionSave(tx, { operatorId: ada.id, subscription: { endpoint: `${push.url}/ada`, keys: browser.keys } }),
    );
    const session = await makeSession(t.db.kysely, { title: "Twice", operator_id: ada.id });
    for (let i = 0; i < 10; i++) {
      await withActor(t.db.kysely, "system:test", (tx) =>
        sessionEventsAppend(tx, [{ sessionId: session.id, type: "turn_failed", data: { message: `failure ${i}` } }]),
      );
    }
    await until("30 deliveries delivered", async () => {
      const rows = await t.db.kysely.selectFrom("notification_deliveries").select("status").where("status", "=", "delivered").execute();
      return rows.length === 30;
    });
    for (const r of [ntfy, webhook, push]) expect(r.requests).toHaveLength(10);
    const ids = webhook.requests.map((r) => {
      expect(webhookVerify(r.body, r.headers["x-nomos-signature"] as string, SECRET)).toBe(true);
      return (JSON.parse(r.body.toString("utf8")) as { id: string }).id;
    });
    expect(new Set(ids).size).toBe(10);
    expect(new Set(push.requests.map((r) => (JSON.parse(browser.decrypt(r.body)) as { id: string }).id))).toEqual(new Set(ids));
    expect(ntfy.requests.map((r) => r.body.toString("utf8")).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `failure ${i}`).sort());
    // The links name the process's public origin (here http://127.0.0.1:<port>) and the session.
    expect(new URL(ntfy.requests[0]!.headers.click as string).hash).toBe(`#/s/${session.id}`);
  });
});

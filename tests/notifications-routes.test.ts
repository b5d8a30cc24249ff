// The notification settings routes, in-process (app.request): an operator's
// own channels (secrets never shown back), Web Push subscriptions, the VAPID
// public key, the test send (to a receiver on 127.0.0.1) and the delivery
// log; bad input is a 400 naming the field; the API token has no settings.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withActor } from "../src/db/with-actor.js";
import { sessionEventsAppend } from "../src/events/session-events.js";
import { type ApiHarness, browser, loginCookie, ORIGIN, startApi } from "./helpers/api-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";
import { browserPushKeys, type Receiver, startReceiver, webhookVerify } from "./helpers/notify-receivers.js";

const t = useTestDatabase();
const TOKEN = "an-api-token-for-scripts-0123456789";
let h: ApiHarness;
let as: ReturnType<typeof browser>;
let hook: Receiver;
let push: Receiver;

beforeAll(async () => {
  h = await startApi(t.db, t.url, { apiToken: TOKEN });
  as = browser(h.app, await loginCookie(h.app, t.db, "nia", "tangerine orbit kettle"));
  hook = await startReceiver();
  push = await startReceiver({ okStatus: 201 });
});
afterAll(async () => {
  await h.close();
  await hook.close();
  await push.close();
});

describe("notification routes", () => {
  it("sets, shows (without secrets) and removes an operator's channels", async () => {
    const put = await as("/api/notifications/channels/webhook", { method: "PUT", body: { url: hook.url, secret: "s3cret-s3cret-s3cret" } });
    expect(put.status).toBe(200);
    await as("/api/notifications/channels/ntfy", { method: "PUT", body: { url: "http://127.0.0.1:9/topic", secret: "tk" } });
    const listed = (await (await as("/api/notifications/channels")).json()) as { channels: Record<string, unknown>[] };
    expect(listed.channels).toEqual([
      expect.objectContaining({ kind: "ntfy", url: "http://127.0.0.1:9/topic", hasSecret: true, enabled: true }),
      expect.objectContaining({ kind: "webhook", url: hook.url, hasSecret: true, enabled: true }),
    ]);
    expect(JSON.stringify(listed)).not.toContain("s3cret");
    // Changing the URL alone keeps the stored secret.
    expect((await as("/api/notifications/channels/webhook", { method: "PUT", body: { url: hook.url } })).status).toBe(200);
    const del = await as("/api/notifications/channels/ntfy", { method: "DELETE" });
    expect(((await del.json()) as { channels: { kind: string }[] }).channels.map((c) => c.kind)).toEqual(["webhook"]);
  });

  it("refuses bad input naming the field", async () => {
    const cases: [string, string, unknown, string][] = [
      ["PUT", "/api/notifications/channels/webhook", { url: "ftp://x/y", secret: "0123456789abcdef" }, "body.url"],
      ["PUT", "/api/notifications/channels/email", { url: "https://x" }, "path.kind"],
      [
        "POST",
        "/api/notifications/push-subscriptions",
        { endpoint: "http://push.example.com/x", keys: { p256dh: "a", auth: "b" } },
        "body.endpoint",
      ],
      [
        "POST",
        "/api/notifications/push-subscriptions",
        { endpoint: "https://push.example.com/x", keys: { p256dh: "a" } },
        "body.keys.auth",
      ],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await as(path, { method, body });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(((await res.json()) as { error: { field: string } }).error.field).toBe(field);
    }
    // A new webhook without a long enough secret cannot be set (the other operator has none yet).
    const cookie = await loginCookie(h.app, t.db, "noor", "tangerine orbit kettle", "operator");
    const res = await browser(h.app, cookie)("/api/notifications/channels/webhook", {
      method: "PUT",
      body: { url: hook.url, secret: "short" },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { field: "body.secret", message: expect.stringMatching(/at least 16 characters/) } });
  });

  it("gives the VAPID public key, stores and removes a browser's subscription, and test-sends to every channel", async () => {
    const key = (await (await as("/api/notifications/vapid-public-key")).json()) as { publicKey: string };
    expect(key.publicKey).toMatch(/^[A-Za-z0-9_-]{87}$/);
    // The same key on every call (kept in the database).
    expect(await (await as("/api/notifications/vapid-public-key")).json()).toEqual(key);

    const b = browserPushKeys();
    const endpoint = `${push.url}/browser-1`;
    expect((await as("/api/notifications/push-subscriptions", { method: "POST", body: { endpoint, keys: b.keys } })).status).toBe(201);
    expect(((await (await as("/api/notifications/channels")).json()) as { pushSubscriptions: number }).pushSubscriptions).toBe(1);

    const sent = (await (await as("/api/notifications/test", { method: "POST" })).json()) as {
      results: { channel: string; ok: boolean }[];
    };
    expect(sent.results.map((r) => [r.channel, r.ok]).sort()).toEqual([
      ["push", true],
      ["webhook", true],
    ]);
    const body = hook.requests.at(-1)!;
    expect(webhookVerify(body.body, body.headers["x-nomos-signature"] as string, "s3cret-s3cret-s3cret")).toBe(true);
    expect(JSON.parse(b.decrypt(push.requests.at(-1)!.body))).toMatchObject({ title: "Nomos test notification", test: true });

    const removed = await as("/api/notifications/push-subscriptions", { method: "DELETE", body: { endpoint } });
    expect(await removed.json()).toEqual({ removed: true });
  });

  it("shows the operator's delivery log", async () => {
    const me = await t.db.kysely.selectFrom("operators").select("id").where("username", "=", "nia").executeTakeFirstOrThrow();
    const s = await makeSession(t.db.kysely, { title: "Logged", operator_id: me.id });
    await withActor(t.db.kysely, "system:test", (tx) =>
      sessionEventsAppend(tx, [{ sessionId: s.id, type: "turn_failed", data: { message: "the model API failed" } }]),
    );
    const res = await as("/api/notifications/deliveries?limit=10");
    expect(res.status).toBe(200);
    const { deliveries } = (await res.json()) as { deliveries: Record<string, unknown>[] };
    expect(deliveries[0]).toMatchObject({
      sessionId: s.id,
      type: "turn_failed",
      title: "Turn failed: Logged",
      channel: "webhook",
      destination: hook.url,
      status: "pending",
      attempts: 0,
    });
    expect((await as("/api/notifications/deliveries?limit=0")).status).toBe(400);
  });

  it("has no settings for the API token", async () => {
    const res = await h.app.request("/api/notifications/channels", { headers: { authorization: `Bearer ${TOKEN}`, origin: ORIGIN } });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: { message: expect.stringMatching(/belong to an operator login/) } });
  });

  it("serves the service worker at /sw.js", async () => {
    const res = await h.app.request("/sw.js");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/javascript/);
    const js = await res.text();
    expect(js).toContain('addEventListener("push"');
    expect(js).toContain('addEventListener("notificationclick"');
  });
});

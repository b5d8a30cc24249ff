// The notifier against receivers started here on 127.0.0.1 (issue 16): an
// ntfy double, a webhook receiver that checks the HMAC, and a Web Push
// endpoint double whose bodies are decrypted with the browser's own keys.
// Events are appended the way the service appends them, so the outbox
// trigger of 060 writes the deliveries; the notifier wakes on its NOTIFY.
import type { Kysely } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { toolRun } from "../src/agent/tool-runner.js";
import type { Database } from "../src/db/schema.js";
import { withActor } from "../src/db/with-actor.js";
import { sessionEventsAppend } from "../src/events/session-events.js";
import { createLogger } from "../src/log/logger.js";
import { notificationChannelSet } from "../src/notifications/channels.js";
import { deliveriesOf } from "../src/notifications/deliveries.js";
import { Notifier } from "../src/notifications/notifier.js";
import { pushSubscriptionSave } from "../src/notifications/push-subscriptions.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeRunningExecution, makeSession, makeWindow } from "./helpers/factories.js";
import { browserPushKeys, type Receiver, startReceiver, until, webhookVerify } from "./helpers/notify-receivers.js";
import { toolCallSetup } from "./helpers/tool-call.js";

const t = useTestDatabase();
const log = createLogger({ level: "silent" });
const PUBLIC = new URL("https://nomos.home.arpa");
const SECRET = "a-webhook-secret-of-some-length";
let db: Kysely<Database>;
const started: Notifier[] = [];
const receivers: Receiver[] = [];

async function operator(username: string): Promise<string> {
  const row = await db
    .insertInto("operators")
    .values({ username, password_hash: "scrypt$unused", role: "admin" })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

async function receiver(o: Parameters<typeof startReceiver>[0] = {}) {
  const r = await startReceiver(o);
  receivers.push(r);
  return r;
}

async function notifier(name: string, o: { backoffBaseMs?: number } = {}) {
  const listen = t.connect({ max: 1, applicationName: `nomos-listener-${name}` });
  const pool = t.connect({ max: 4, applicationName: `notifier-${name}` });
  const n = new Notifier({
    db: pool.kysely,
    listen: listen.sql,
    log,
    owner: `test:${name}`,
    publicOrigin: () => PUBLIC,
    sweepSeconds: 3600,
    backoffBaseMs: o.backoffBaseMs ?? 30,
  });
  await n.start();
  started.push(n);
  return n;
}

/** Every channel of an operator, on fresh receivers. */
async function channels(operatorId: string, o: { webhookFailFirst?: number } = {}) {
  const ntfy = await receiver();
  const webhook = await receiver({ failFirst: o.webhookFailFirst ?? 0 });
  const push = await receiver({ okStatus: 201 });
  const browser = browserPushKeys();
  await withActor(db, "operator:test", async (tx) => {
    await notificationChannelSet(tx, { operatorId, kind: "ntfy", url: ntfy.url, secret: "ntfy-token" });
    await notificationChannelSet(tx, { operatorId, kind: "webhook", url: webhook.url, secret: SECRET });
    await pushSubscriptionSave(tx, { operatorId, subscription: { endpoint: `${push.url}/sub-${operatorId}`, keys: browser.keys } });
  });
  return { ntfy, webhook, push, browser };
}

async function planFinished(sessionId: string, outcome: "verified" | "blocked" = "verified") {
  await withActor(db, `agent:${sessionId}`, (tx) =>
    sessionEventsAppend(tx, [
      {
        sessionId,
        type: "plan_finished",
        data: {
          planId: null,
          goal: "nginx on a new container",
          outcome,
          summary: outcome === "verified" ? "nginx answers on 10.0.0.50:80" : "the node is out of disk",
          needs: outcome === "blocked" ? "free 10 GB on local-lvm" : null,
          windowClosed: true,
        },
      },
    ]),
  );
}

const allSettled = async (operatorId: string, n: number) =>
  until(`${n} deliveries settled`, async () => {
    const log = await deliveriesOf(db, { operatorId, limit: 500 });
    return log.length === n && log.every((d) => d.status === "delivered" || d.status === "failed") ? log : undefined;
  });

beforeAll(() => {
  db = t.db.kysely;
});
afterEach(async () => {
  await Promise.all(started.splice(0).map((n) => n.stop()));
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

describe("notifications", () => {
  it("a finished plan reaches ntfy, the webhook and Web Push exactly once each, with a link to the session", async () => {
    const ada = await operator("ada");
    const { ntfy, webhook, push, browser } = await channels(ada);
    const session = await makeSession(db, { title: "Deploy nginx", operator_id: ada });
    const n = await notifier("a");
    await planFinished(session.id);
    const log = await allSettled(ada, 3);
    expect(log.map((d) => [d.channel, d.status, d.attempts]).sort()).toEqual([
      ["ntfy", "delivered", 1],
      ["push", "delivered", 1],
      ["webhook", "delivered", 1],
    ]);
    // A sweep afterwards (the backstop) finds nothing more to send.
    await n.sweep();
    await allSettled(ada, 3);

    const link = `https://nomos.home.arpa/#/s/${session.id}`;
    expect(webhook.requests).toHaveLength(1);
    const hook = webhook.requests[0]!;
    expect(webhookVerify(hook.body, hook.headers["x-nomos-signature"] as string, SECRET)).toBe(true);
    expect(webhookVerify(hook.body, hook.headers["x-nomos-signature"] as string, "another-secret-entirely")).toBe(false);
    const payload = JSON.parse(hook.body.toString("utf8")) as Record<string, string>;
    expect(Object.keys(payload).sort()).toEqual(["at", "id", "sessionId", "text", "title", "type", "url"]);
    expect(payload).toMatchObject({
      type: "plan_finished",
      sessionId: session.id,
      title: "Plan finished: Deploy nginx",
      text: "nginx answers on 10.0.0.50:80",
      url: link,
    });
    // The link opens the session: the page reads `#/s/<id>` (web/client/main.tsx).
    expect(new URL(payload.url!).hash).toMatch(/^#\/s\/([0-9a-f-]{36})$/);
    const notification = await db.selectFrom("notifications").selectAll().where("session_id", "=", session.id).executeTakeFirstOrThrow();
    expect(payload.id).toBe(notification.id);

    expect(ntfy.requests).toHaveLength(1);
    const note = ntfy.requests[0]!;
    expect(note.body.toString("utf8")).toBe("nginx answers on 10.0.0.50:80");
    expect(note.headers).toMatchObject({
      title: "Plan finished: Deploy nginx",
      priority: "default",
      click: link,
      authorization: "Bearer ntfy-token",
    });
    expect(note.headers.tags).toContain("plan_finished");

    expect(push.requests).toHaveLength(1);
    const pushed = push.requests[0]!;
    const vapid = await db.selectFrom("notification_vapid_keys").select("public_key").executeTakeFirstOrThrow();
    expect(pushed.headers.authorization).toMatch(new RegExp(`^vapid t=[\\w-]+\\.[\\w-]+\\.[\\w-]+, k=${vapid.public_key}$`));
    expect(pushed.headers["content-encoding"]).toBe("aes128gcm");
    expect(JSON.parse(browser.decrypt(pushed.body))).toEqual(payload);
  });

  it("a blocked plan is sent as plan_blocked with high priority and what the agent needs", async () => {
    const bea = await operator("bea");
    const { ntfy, webhook } = await channels(bea);
    const session = await makeSession(db, { title: "Grow the pool", operator_id: bea });
    await notifier("b");
    await planFinished(session.id, "blocked");
    await allSettled(bea, 3);
    const payload = JSON.parse(webhook.requests[0]!.body.toString("utf8")) as Record<string, string>;
    expect(payload).toMatchObject({ type: "plan_blocked", text: "the node is out of disk Needs: free 10 GB on local-lvm" });
    expect(ntfy.requests[0]!.headers.priority).toBe("high");
  });

  it("a receiver that fails twice gets the notification once, on the third attempt, and the log says so", async () => {
    const cid = await operator("cid");
    const { webhook } = await channels(cid, { webhookFailFirst: 2 });
    const session = await makeSession(db, { operator_id: cid });
    await notifier("c");
    await planFinished(session.id);
    const log = await allSettled(cid, 3);
    const hook = log.find((d) => d.channel === "webhook")!;
    expect(hook).toMatchObject({ status: "delivered", attempts: 3, lastError: null });
    expect(webhook.requests.map((r) => r.answered)).toEqual([500, 500, 200]);
    expect(webhook.accepted()).toHaveLength(1);
    // Every attempt carried the same id: a receiver that saw a failed one can dedupe.
    expect(new Set(webhook.requests.map((r) => JSON.parse(r.body.toString("utf8")).id)).size).toBe(1);
  });

  it("a receiver that never answers 2xx is given up after max_attempts, with its last error", async () => {
    const dan = await operator("dan");
    const hook = await receiver({ failFirst: 1000, failStatus: 503 });
    await withActor(db, "operator:test", (tx) =>
      notificationChannelSet(tx, { operatorId: dan, kind: "webhook", url: hook.url, secret: SECRET }),
    );
    const session = await makeSession(db, { operator_id: dan });
    // Appended before any notifier runs, so the limit is lowered before the first attempt.
    await planFinished(session.id);
    await db.updateTable("notification_deliveries").set({ max_attempts: 3 }).where("operator_id", "=", dan).execute();
    await notifier("d");
    const [d] = await allSettled(dan, 1);
    expect(d).toMatchObject({ status: "failed", attempts: 3, lastError: expect.stringMatching(/answered 503: receiver says no/) });
    expect(hook.requests).toHaveLength(3);
  });

  it("two notifiers (two replicas) deliver each of 20 events once per channel", async () => {
    const eve = await operator("eve");
    const { ntfy, webhook, push } = await channels(eve);
    const session = await makeSession(db, { operator_id: eve });
    await Promise.all([notifier("e1"), notifier("e2")]);
    for (let i = 0; i < 20; i++) await planFinished(session.id);
    await allSettled(eve, 60);
    for (const r of [ntfy, webhook, push]) expect(r.requests).toHaveLength(20);
    const ids = webhook.requests.map((r) => JSON.parse(r.body.toString("utf8")).id as string);
    expect(new Set(ids).size).toBe(20);
  });

  it("a destructive step waiting for its confirmation notifies approval_requested (the run tool's real path)", async () => {
    const fay = await operator("fay");
    const { webhook, ntfy } = await channels(fay);
    await notifier("f");
    const { deps, ctx } = await toolCallSetup(t);
    await makeWindow(db, ctx.sessionId);
    const out = await toolRun(deps, ctx, "run", { target: "pve1", command: "pct destroy 105" });
    expect(out.content).toMatch(/awaits the operator's approval/);
    await until("the approval notification", () => webhook.accepted().length === 1 && ntfy.accepted().length === 1);
    const payload = JSON.parse(webhook.requests[0]!.body.toString("utf8")) as Record<string, string>;
    expect(payload).toMatchObject({ type: "approval_requested", sessionId: ctx.sessionId, title: "Approval needed: test session" });
    expect(payload.text).toMatch(/^Approve pct destroy 105 on pve1 \(destructive: type its confirmation phrase\)$/);
    expect(ntfy.requests[0]!.headers.priority).toBe("high");
  });

  it("a push subscription the push service calls gone (410) is removed, and its delivery fails at once", async () => {
    const gus = await operator("gus");
    const gone = await receiver({ failFirst: 1000, failStatus: 410 });
    const browser = browserPushKeys();
    await withActor(db, "operator:test", (tx) =>
      pushSubscriptionSave(tx, { operatorId: gus, subscription: { endpoint: `${gone.url}/gone`, keys: browser.keys } }),
    );
    const session = await makeSession(db, { operator_id: gus });
    await notifier("g");
    await planFinished(session.id);
    const [d] = await allSettled(gus, 1);
    expect(d).toMatchObject({ channel: "push", status: "failed", attempts: 1, lastError: expect.stringMatching(/gone/) });
    expect(await db.selectFrom("push_subscriptions").selectAll().where("operator_id", "=", gus).execute()).toEqual([]);
  });

  it("the sweep closes a window whose time ran out and tells the operator that results wait", async () => {
    const hal = await operator("hal");
    const { webhook } = await channels(hal);
    const session = await makeSession(db, { title: "Overnight build", operator_id: hal });
    await makeWindow(db, session.id, -1);
    await makeRunningExecution(db, session.id);
    const n = await notifier("h");
    await n.sweep();
    await until("the window_expired notification", () => webhook.accepted().length === 1);
    expect(JSON.parse(webhook.requests[0]!.body.toString("utf8"))).toMatchObject({
      type: "window_expired",
      sessionId: session.id,
      title: "Autonomy window expired: Overnight build",
      text: "The assent window expired with 1 result(s) waiting for your next message.",
    });
  });
});

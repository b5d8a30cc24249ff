// The settings page's notifications section in a real browser (Debian's
// chromium via playwright-core) against the real API and a real notifier:
// the operator sets an ntfy topic and a webhook, sends a test notification
// to both, and reads the delivery log, whose rows link to their session.
// And the page's own background notification: with the tab hidden and
// notifications allowed, a finished plan of the open session is announced.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { operatorCreate } from "../src/auth/operators.js";
import { withActor } from "../src/db/with-actor.js";
import { sessionEventsAppend } from "../src/events/session-events.js";
import { createLogger } from "../src/log/logger.js";
import { Notifier } from "../src/notifications/notifier.js";
import { ARTIFACTS, type BrowserSession, openBrowser, openSignedIn, type ServedApi, serveApi } from "./helpers/browser.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";
import { type Receiver, startReceiver, until, webhookVerify } from "./helpers/notify-receivers.js";

const t = useTestDatabase();
const SECRET = "settings-page-secret-0123";
let api: ServedApi;
let browser: BrowserSession | undefined;
let notifier: Notifier;
let ntfy: Receiver;
let webhook: Receiver;
let operatorId: string;

beforeAll(async () => {
  api = await serveApi(t.db, t.url);
  ntfy = await startReceiver();
  webhook = await startReceiver();
  await operatorCreate(t.db.kysely, { username: "alice", password: "correct horse battery", actor: "system:test" });
  operatorId = (await t.db.kysely.selectFrom("operators").select("id").where("username", "=", "alice").executeTakeFirstOrThrow()).id;
  const listen = t.connect({ max: 1, applicationName: "nomos-listener-notifier" });
  notifier = new Notifier({
    db: t.db.kysely,
    listen: listen.sql,
    log: createLogger({ level: "silent" }),
    owner: "test:page",
    publicOrigin: () => new URL(api.url),
    sweepSeconds: 3600,
  });
  await notifier.start();
});
afterEach(async () => {
  await browser?.close();
  browser = undefined;
});
afterAll(async () => {
  await notifier.stop();
  await api.close();
  await ntfy.close();
  await webhook.close();
});

async function loggedIn(): Promise<Page> {
  browser = await openSignedIn(api.url);
  return browser.page;
}

describe("the settings page", () => {
  it("sets ntfy and a webhook, test-sends to both, and shows the delivery log with links to the session", async () => {
    const page = await loggedIn();
    await page.click("text=Settings");
    await page.waitForSelector(".notify-settings");
    await page.fill("input[name=ntfy-url]", ntfy.url);
    await page.fill("input[name=ntfy-secret]", "tk_page");
    await page.click(".notify-ntfy button[type=submit]");
    await page.fill("input[name=webhook-url]", webhook.url);
    // Too short a secret: the server's message is shown where it belongs.
    await page.fill("input[name=webhook-secret]", "short");
    await page.click(".notify-webhook button[type=submit]");
    await page.waitForSelector(".notify-webhook .form-error:has-text('at least 16 characters')");
    await page.fill("input[name=webhook-secret]", SECRET);
    await page.click(".notify-webhook button[type=submit]");
    await page.waitForSelector(".notify-webhook input[placeholder='set (leave empty to keep)']");

    await page.click("text=Send test notification");
    await page.waitForSelector(".notify-results li.ok >> nth=1");
    expect((await page.locator(".notify-results li").allTextContents()).sort()).toEqual([
      `ntfy (${ntfy.url}): sent`,
      `webhook (${webhook.url}): sent`,
    ]);
    expect(ntfy.requests[0]!.headers.authorization).toBe("Bearer tk_page");
    expect(webhookVerify(webhook.requests[0]!.body, webhook.requests[0]!.headers["x-nomos-signature"] as string, SECRET)).toBe(true);

    const session = await makeSession(t.db.kysely, { title: "Deploy nginx", operator_id: operatorId });
    await withActor(t.db.kysely, "system:test", (tx) =>
      sessionEventsAppend(tx, [
        {
          sessionId: session.id,
          type: "plan_finished",
          data: { planId: null, goal: "nginx", outcome: "verified", summary: "nginx answers", needs: null, windowClosed: true },
        },
      ]),
    );
    await until("both delivered", () => webhook.accepted().length === 2 && ntfy.accepted().length === 2);
    await page.click("text=Refresh");
    await page.waitForSelector(".notify-log tr.delivery.delivered >> nth=1");
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "notifications-settings.png"), fullPage: true });
    const rows = await page.locator(".notify-log tr.delivery").allTextContents();
    expect(rows.every((r) => r.includes("Plan finished: Deploy nginx") && r.includes("delivered") && r.includes("1/8"))).toBe(true);
    await page.locator(".notify-log tr.delivery a").first().click();
    await page.waitForSelector(".chat-head .title");
    expect(new URL(page.url()).hash).toBe(`#/s/${session.id}`);
  });

  it("announces a finished plan of the open session while the tab is in the background", async () => {
    browser = await openBrowser();
    const { page } = browser;
    // The tab is hidden and notifications are allowed; shown ones are recorded.
    await page.addInitScript(() => {
      const w = window as unknown as { __shown: unknown[]; Notification: unknown };
      w.__shown = [];
      w.Notification = class {
        static permission = "granted";
        onclick: unknown = null;
        constructor(title: string, options: { body?: string; tag?: string }) {
          w.__shown.push({ title, ...options });
        }
        close() {}
      };
      Object.defineProperty(document, "hidden", { get: () => true });
    });
    await page.goto(api.url);
    await page.fill("input[name=username]", "alice");
    await page.fill("input[name=password]", "correct horse battery");
    await page.click("button[type=submit]");
    const session = await makeSession(t.db.kysely, { title: "Backup", operator_id: operatorId });
    await page.goto(`${api.url}/#/s/${session.id}`);
    await page.waitForSelector(".chat-head .title");
    // The chat's stream starts after the session's current last event: wait until it is connected.
    await page.waitForSelector(".conn-state[data-state=live]");
    await withActor(t.db.kysely, "system:test", (tx) =>
      sessionEventsAppend(tx, [
        {
          sessionId: session.id,
          type: "plan_finished",
          data: {
            planId: null,
            goal: "backup",
            outcome: "blocked",
            summary: "the NAS is offline",
            needs: "power it on",
            windowClosed: true,
          },
        },
      ]),
    );
    await page.waitForFunction(() => (window as unknown as { __shown: unknown[] }).__shown.length > 0);
    expect(await page.evaluate(() => (window as unknown as { __shown: unknown[] }).__shown)).toEqual([
      { title: "Plan blocked: Backup", body: "the NAS is offline", tag: `nomos:${session.id}:plan_blocked` },
    ]);
  });
});

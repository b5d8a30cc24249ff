// The safety net in a real browser (Chromium via playwright-core) against
// the real API, the agent against the Messages API double and the real
// runner over SSH to the Proxmox double (issue 17): under the plan card the
// operator reads "Safety net: snapshot <name> of web1"; "Roll back web1 to
// before this plan" brings up a destructive approval that asks for its
// typed phrase, and typing it rolls the container back. A guest that cannot
// be snapshotted says "No safety net on this guest: <why>". The snapshots
// view lists each guest's snapshots with a link to the session.
import { mkdir } from "node:fs/promises";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { operatorCreate } from "../src/auth/operators.js";
import { withActor } from "../src/db/with-actor.js";
import { targetRegisterContainer } from "../src/targets/registry.js";
import { ARTIFACTS, type BrowserSession, openSignedIn, type ServedApi, serveApi } from "./helpers/browser.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";
import { useSnapshotWorld, WEB1 } from "./helpers/snapshot-world.js";

const t = useTestDatabase();
const w = useSnapshotWorld(t);
let api: ServedApi;
let browser: BrowserSession | undefined;

beforeAll(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  api = await serveApi(t.db, t.url, { turns: w.turns, approvals: w.approvalDeps, assentMinutes: 30 });
  await operatorCreate(t.db.kysely, { username: "alice", password: "correct horse battery", actor: "system:test", role: "admin" });
});
afterEach(async () => {
  await browser?.close();
  browser = undefined;
});
afterAll(async () => {
  await api?.close();
});

async function loggedIn(): Promise<Page> {
  browser = await openSignedIn(api.url);
  return browser.page;
}

it("shows the safety net under the plan card; the rollback button asks for the phrase and rolls back", { timeout: 90_000 }, async () => {
  const s = await makeSession(t.db.kysely, { title: "Tune web1" });
  const planId = await w.approvePlan(s.id, [{ title: "write the motd", target: "web1", command: "echo hello > /etc/motd" }]);
  await w.agentDoes(s.id, [{ name: "run", input: { target: "web1", command: "echo hello > /etc/motd" } }]);
  const snap = await t.db.kysely.selectFrom("guest_snapshots").selectAll().where("plan_id", "=", planId).executeTakeFirstOrThrow();
  expect(w.host.containers.get(WEB1.vmid)!.files?.get("/etc/motd")).toBe("hello\n");

  const page = await loggedIn();
  await page.goto(`${api.url}/#/s/${s.id}`);
  const net = page.locator(`[data-plan-safety-net="${planId}"]`);
  await expect.poll(() => net.textContent(), { timeout: 10_000 }).toContain(`Safety net: snapshot ${snap.name} of web1`);
  // The pinned checklist says it too.
  const checklistNet = page.locator(`details.checklist[data-plan="${planId}"] .cl-net`);
  expect(await checklistNet.textContent()).toBe(`Safety net: snapshot ${snap.name} of web1`);
  await page.screenshot({ path: `${ARTIFACTS}/web-snapshots-plan.png`, fullPage: true });

  await net.locator("button[data-rollback]").click();
  let approvalId = "";
  const pendingApproval = () =>
    t.db.kysely.selectFrom("approvals").select("id").where("session_id", "=", s.id).where("status", "=", "pending").executeTakeFirst();
  await expect
    .poll(async () => {
      approvalId = (await pendingApproval())?.id ?? "";
      return approvalId;
    })
    .not.toBe("");
  const card = page.locator(`section.approval[data-approval="${approvalId}"]`);
  await card.waitFor();
  expect(await card.textContent()).toContain("Type rollback 105 to approve it");
  expect(await card.textContent()).toMatch(/puts container 105 back to snapshot nomos-/);
  await page.screenshot({ path: `${ARTIFACTS}/web-snapshots-rollback.png`, fullPage: true });

  // The wrong phrase is refused on the card; the right one rolls back.
  await card.locator("input.confirm-input").fill("rollback 106");
  expect(await card.locator("button.approve").isDisabled()).toBe(true);
  await card.locator("input.confirm-input").press("Enter");
  await card.locator(".form-error").waitFor();
  expect(w.host.containers.get(WEB1.vmid)!.files?.get("/etc/motd")).toBe("hello\n");
  await card.locator("input.confirm-input").fill("rollback 105");
  await card.locator("button.approve").click();
  await card.locator(".decided.st-approved").waitFor();
  await expect.poll(() => w.host.containers.get(WEB1.vmid)!.files?.has("/etc/motd"), { timeout: 15_000 }).toBe(false);
  // The card follows the rollback's execution live.
  await expect.poll(() => net.textContent(), { timeout: 10_000 }).toContain(`Rolled back: web1 was put back to snapshot ${snap.name}`);
});

it("says when there is no safety net, and lists snapshots per guest with a link to the session", { timeout: 90_000 }, async () => {
  w.host.containers.set(106, { vmid: 106, hostname: "old1", status: "running", ostemplate: "", options: { rootfs: "local:8" } });
  await withActor(t.db.kysely, "system:test", (tx) =>
    targetRegisterContainer(tx, { name: "old1", node: "pve1", vmid: 106, createdBySessionId: null }),
  );
  const s = await makeSession(t.db.kysely, { title: "Tune old1" });
  const planId = await w.approvePlan(s.id, [{ title: "write the motd", target: "old1", command: "echo x > /etc/motd" }]);
  await w.agentDoes(s.id, [{ name: "run", input: { target: "old1", command: "echo x > /etc/motd" } }]);

  const page = await loggedIn();
  await page.goto(`${api.url}/#/s/${s.id}`);
  const net = page.locator(`[data-plan-safety-net="${planId}"]`);
  await expect
    .poll(() => net.textContent(), { timeout: 10_000 })
    .toContain("No safety net on this guest: snapshot feature is not available");
  expect(await page.locator(`details.checklist[data-plan="${planId}"] .cl-net`).textContent()).toContain(
    "No safety net on this guest: snapshot feature is not available",
  );
  expect(await net.locator("button[data-rollback]").count()).toBe(0);

  await page.click("a[data-nav=snapshots]");
  const guest = page.locator('[data-guest="pve1/105"]');
  await guest.waitFor();
  expect(await guest.textContent()).toMatch(/web1.*nomos-[0-9a-f]{16}.*change web1/s);
  await page.screenshot({ path: `${ARTIFACTS}/web-snapshots-view.png`, fullPage: true });
  await page.locator('[data-guest="pve1/106"] a').first().click();
  await page.waitForURL(`**/#/s/${s.id}`);
  await page.waitForSelector(".chat-head .title");
});

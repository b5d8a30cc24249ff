// The demo as a newcomer meets it: `npm run demo`, a browser, the printed
// password. The page says it is a demo; one message and one click on
// Approve, and the deployment finishes on its own, continuation turns
// included, while the page streams it. Screenshots go to tests/artifacts/
// (demo-finished.png is the README's docs/screenshot-demo.png).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEPLOY_REQUEST } from "../src/demo/deployment-policy.js";
import { ARTIFACTS, type BrowserSession, openBrowser, signIn } from "./helpers/browser.js";
import { useTestDatabase } from "./helpers/database.js";
import { type DemoProcess, startDemo } from "./helpers/demo-process.js";

const t = useTestDatabase();
let dataDir: string | undefined;
let demo: DemoProcess | undefined;
let browser: BrowserSession | undefined;

afterAll(async () => {
  await browser?.close();
  await demo?.interrupt();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe("the demo in a browser", () => {
  it("shows it is a demo, and finishes the deployment from one message and one Approve click", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "nomos-demo-browser-"));
    demo = await startDemo({ DATABASE_URL: t.url, NOMOS_DATA_DIR: dataDir, NOMOS_DEMO_PACE: "0.2" });
    browser = await openBrowser({ width: 1100, height: 900 });
    const { page } = browser;
    await page.goto(demo.url);
    expect(await page.locator(".notice").first().innerText()).toMatch(/^This is a demo\./);
    await signIn(page, "demo", demo.password);
    expect(await page.locator(".notice").first().innerText()).toMatch(/^This is a demo\./);

    await page.click("text=+ New");
    await page.waitForSelector(".composer textarea");
    await page.waitForSelector(".conn", { state: "detached" });
    await page.fill(".composer textarea", DEPLOY_REQUEST);
    await page.keyboard.press("Enter");
    const approve = page.locator(".plan button.approve");
    await approve.waitFor({ timeout: 20_000 });
    await page.screenshot({ path: join(ARTIFACTS, "demo-plan.png") });
    await approve.click();

    // From here nobody types: the page shows the continuation turns and the final report.
    const done = page.locator("text=Done: TypeType is deployed and verified");
    await done.waitFor({ timeout: 60_000 });
    expect(await page.locator("article.turn.continuation").count()).toBe(3);
    expect(await page.locator(".msg.operator").count()).toBe(1);
    await page.screenshot({ path: join(ARTIFACTS, "demo-finished.png"), fullPage: true });
  });
});

// Approve and walk away, in Chromium against the demo process (issue 16):
// after one message and one Approve click, the plan's checklist pinned at
// the top follows the work to "done" on every step, the header reads
// "Step n of 5 · …" while it runs and shows no autonomy (no badge, no
// countdown, no Stop) once the outcome is reported, the transcript ends with
// the result card; and while that session is open, another session that
// gets a pending approval shows "needs approval" in the session list, live
// (the operator-wide stream, no polling), with the tab title saying so.
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

describe("approve and walk away, in a browser", () => {
  it("the checklist reaches done, the header ends without autonomy, and another session's approval shows live", {
    timeout: 120_000,
  }, async () => {
    dataDir = await mkdtemp(join(tmpdir(), "nomos-walk-away-"));
    demo = await startDemo({ DATABASE_URL: t.url, NOMOS_DATA_DIR: dataDir, NOMOS_DEMO_PACE: "0.2" });
    browser = await openBrowser({ width: 1100, height: 900 });
    const { page } = browser;
    await page.goto(demo.url);
    await signIn(page, "demo", demo.password);

    await page.click("text=+ New");
    await page.waitForSelector(".composer textarea");
    await page.waitForSelector(".conn", { state: "detached" });
    await page.fill(".composer textarea", DEPLOY_REQUEST);
    await page.keyboard.press("Enter");
    const approve = page.locator(".plan button.approve");
    await approve.waitFor({ timeout: 20_000 });
    await approve.click();

    // While it runs: the checklist is pinned, and the header names the step.
    const checklist = page.locator("details.checklist");
    await checklist.waitFor({ timeout: 20_000 });
    await page.locator(".chat-sub .step-line").waitFor({ timeout: 20_000 });
    expect(await page.locator(".chat-sub .step-line").innerText()).toMatch(/^Step [1-5] of 5 · /);

    await page.locator("text=Done: TypeType is deployed and verified").waitFor({ timeout: 60_000 });
    // Every step done, the outcome on the checklist and in the result card.
    await page.locator("details.checklist li.cl-step[data-status=done]").nth(4).waitFor({ state: "attached", timeout: 10_000 });
    expect(await page.locator("details.checklist li.cl-step").evaluateAll((els) => els.map((e) => e.getAttribute("data-status")))).toEqual([
      "done",
      "done",
      "done",
      "done",
      "done",
    ]);
    expect(await page.locator(".checklist-count").innerText()).toBe("✓ verified");
    // Finished, the checklist folds to its summary line.
    await expect.poll(() => page.locator("details.checklist").getAttribute("open")).toBeNull();
    const result = page.locator(".card.result");
    expect(await result.innerText()).toMatch(/Plan verified[\s\S]*TypeType runs in container typetype[\s\S]*tokens/);
    // The header: no autonomy left, no countdown, no Stop, no step line.
    await page.locator(".assent.finished").waitFor({ timeout: 10_000 });
    expect(await page.locator(".assent .badge").count()).toBe(0);
    expect(await page.locator(".assent .time-left").count()).toBe(0);
    expect(await page.locator(".btn.stop").count()).toBe(0);
    expect(await page.locator(".chat-sub .step-line").count()).toBe(0);
    expect(await page.locator(".assent").innerText()).toMatch(/Plan verified · autonomy ended/);
    expect(await page.locator(".chat-sub .export a").evaluateAll((as) => as.map((a) => a.getAttribute("href")))).toEqual([
      expect.stringMatching(/\/export\?format=md$/),
      expect.stringMatching(/\/export\?format=json$/),
    ]);
    const current = /#\/s\/([0-9a-f-]{36})/.exec(page.url())![1]!;
    await page.locator(`a.session[href="#/s/${current}"] .state-chip`).filter({ hasText: "finished" }).waitFor({ timeout: 10_000 });
    await page.screenshot({ path: join(ARTIFACTS, "walk-away-finished.png"), fullPage: true });

    // Another session gets a pending approval while this one stays open: the list says so, live.
    const other = await page.evaluate(async (text) => {
      const post = (path: string, body: unknown) =>
        fetch(path, {
          method: "POST",
          credentials: "same-origin",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const { id } = (await (await post("/api/sessions", { title: "Second deployment" })).json()) as { id: string };
      await post(`/api/sessions/${id}/messages`, { text });
      return id;
    }, DEPLOY_REQUEST);
    const chip = page.locator(`a.session[href="#/s/${other}"] .state-chip`).filter({ hasText: "needs approval" });
    await chip.waitFor({ timeout: 20_000 });
    expect(page.url()).toContain(current);
    await expect.poll(() => page.title(), { timeout: 10_000 }).toBe("(1) Nomos — approval needed");
  });
});

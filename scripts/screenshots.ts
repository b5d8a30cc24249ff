// `npm run screenshots`: the README's pictures of the chat, taken from the
// demo as a newcomer meets it (`npm run demo`, one message, one Approve),
// at desktop (1280×800) and phone (390×844) size, in the light and the dark
// theme, into docs/screenshots/. Uses the Chromium the browser tests use
// (CHROMIUM_PATH, the system's, or @sparticuz/chromium) and, like the demo,
// an embedded PostgreSQL in a temporary folder (or SCREENSHOTS_DATABASE_URL,
// a database of its own: the demo migrates it and writes to it).
// Everything runs on loopback; nothing real is touched.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Page } from "playwright-core";
import { DEPLOY_REQUEST } from "../src/demo/deployment-policy.js";
import { findBrowser } from "../tests/helpers/browser-source.js";
import { startDemo } from "../tests/helpers/demo-process.js";

const OUT = join(import.meta.dirname, "..", "docs", "screenshots");
const dataDir = await mkdtemp(join(tmpdir(), "nomos-screenshots-"));
const profile = await mkdtemp(join(tmpdir(), "nomos-screenshots-chromium-"));
const demo = await startDemo({
  NOMOS_DATA_DIR: dataDir,
  NOMOS_DEMO_PACE: "0.2",
  ...(process.env.SCREENSHOTS_DATABASE_URL ? { DATABASE_URL: process.env.SCREENSHOTS_DATABASE_URL } : {}),
});
const context = await chromium.launchPersistentContext(profile, {
  executablePath: (await findBrowser()).path,
  headless: true,
  viewport: { width: 1280, height: 800 },
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
});
try {
  await mkdir(OUT, { recursive: true });
  const page: Page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(60_000);
  await page.goto(demo.url);
  await page.fill("input[name=username]", "demo");
  await page.fill("input[name=password]", demo.password);
  await page.click("button[type=submit]");
  await page.waitForSelector(".sidebar");
  await page.click("button[aria-label='Dismiss this notice']");
  await page.click("text=+ New");
  await page.waitForSelector(".conn-state[data-state=live]");
  await page.fill(".composer textarea", DEPLOY_REQUEST);
  await page.keyboard.press("Enter");
  await page.locator(".plan button.approve").click();
  await page.locator("text=Done: TypeType is deployed and verified").waitFor();
  await page.locator(".typing").waitFor({ state: "detached" });
  // Open the step that failed and was retried, so its card shows its output.
  const failed = page.locator(".tool.ph-failed summary").first();
  if ((await failed.count()) > 0) await failed.click();
  for (const [name, viewport] of [
    ["desktop", { width: 1280, height: 800 }],
    ["phone", { width: 390, height: 844 }],
  ] as const) {
    await page.setViewportSize(viewport);
    // The sidebar slides away on a phone (a 0.15 s transition).
    await page.waitForTimeout(500);
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.locator(".scroll").evaluate((el) => el.scrollTo({ top: el.scrollHeight }));
      await page.screenshot({ path: join(OUT, `chat-${name}-${scheme}.png`) });
      console.log(`docs/screenshots/chat-${name}-${scheme}.png`);
    }
  }
} catch (err) {
  await context.pages()[0]?.screenshot({ path: join(tmpdir(), "nomos-screenshots-failed.png") });
  throw err;
} finally {
  await context.close();
  await demo.interrupt();
  await rm(profile, { recursive: true, force: true });
  await rm(dataDir, { recursive: true, force: true });
}

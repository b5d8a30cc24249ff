// Browser tests' resources: the API served on a loopback port, and Chromium
// (found by browser-source.ts, once per run) driven by playwright-core with a
// fresh profile. The launch flags
// keep it offline and quiet (no component updates, no sync, no QUIC).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { inject } from "vitest";
import type { Db } from "../../src/db/connect.js";
import type { ApiDeps } from "../../src/http/api-deps.js";
import { type ApiHarness, startApi } from "./api-harness.js";

/** The Chromium global-setup.ts found, or its reason for finding none. */
export function chromiumPath(): string {
  const found = inject("browser");
  if ("error" in found) throw new Error(found.error);
  return found.path;
}
export const ARTIFACTS = join(import.meta.dirname, "..", "artifacts");

export interface ServedApi extends ApiHarness {
  url: string;
}

/** overrides: deps in place of the harness's own (e.g. Turns and approvals wired to the real runner, as main.ts wires them). */
export async function serveApi(db: Db, url: string, overrides: Partial<Omit<ApiDeps, "log" | "db">> = {}): Promise<ServedApi> {
  const h = await startApi(db, url, overrides);
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: h.app.fetch, hostname: "127.0.0.1", port: 0 }, () => resolve(s));
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    ...h,
    url: `http://127.0.0.1:${port}`,
    async close() {
      await h.close(); // ends the open event streams
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections(): void }).closeAllConnections();
      });
    },
  };
}

export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

export async function openBrowser(viewport = { width: 1100, height: 760 }): Promise<BrowserSession> {
  const profile = await mkdtemp(join(tmpdir(), "nomos-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    headless: true,
    viewport,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-quic",
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  // Fail a step in seconds with playwright's message, well before the test's own timeout.
  page.setDefaultTimeout(8000);
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(err.message));
  return {
    context,
    page,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
      if (errors.length > 0) throw new Error(`the page threw: ${errors.join("; ")}`);
    },
  };
}

/** Signs in on the login form the page shows, and waits for the session list. */
export async function signIn(page: Page, username: string, password = "correct horse battery"): Promise<void> {
  await page.fill("input[name=username]", username);
  await page.fill("input[name=password]", password);
  await page.click("button[type=submit]");
  await page.waitForSelector(".sidebar");
}

/** Chromium on the page at `url`, signed in as `username` (alice by default); the caller closes it. */
export async function openSignedIn(
  url: string,
  options: { username?: string; viewport?: { width: number; height: number } | undefined } = {},
): Promise<BrowserSession> {
  const session = await openBrowser(options.viewport);
  await session.page.goto(url);
  await signIn(session.page, options.username ?? "alice");
  return session;
}

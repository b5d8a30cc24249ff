// The chat page as a person uses it every day (issue 18), in Chromium
// against the real API and PostgreSQL, one test per problem the issue
// found: a turn's failure is not a broken connection; a session opened
// while Nomos is down loads by itself when it returns; a lapsed login asks
// to sign in again; Markdown is GitHub's (tables, nested lists, quotes),
// with raw HTML shown as text; tool cards speak in words with previews of
// long output; drafts stay in their session; focus lands where the next
// action is; the phone header is one row and the demo notice goes away.
// The accessibility check is tests/web-a11y.test.ts.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { operatorCreate } from "../src/auth/operators.js";
import { createLogger } from "../src/log/logger.js";
import { Turns } from "../src/turns/turns.js";
import { type ApiHarness, startApi } from "./helpers/api-harness.js";
import { ARTIFACTS, type BrowserSession, openSignedIn, type ServedApi, serveApi, signIn } from "./helpers/browser.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeExecution, makeSession } from "./helpers/factories.js";
import { appendEvents, makeApproval, makePlan, makeTurn } from "./helpers/web-factories.js";

const t = useTestDatabase();
let api: ServedApi;
let browser: BrowserSession | undefined;
const NO_KEY = "No model key is set: put ANTHROPIC_API_KEY=sk-ant-... in the environment and restart Nomos.";

beforeAll(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  api = await serveApi(t.db, t.url);
  await operatorCreate(t.db.kysely, { username: "alice", password: "correct horse battery", actor: "system:test" });
});
afterEach(async () => {
  await browser?.close();
  browser = undefined;
});
afterAll(async () => {
  await api.close();
});

const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });

async function loggedIn(url = api.url, viewport?: { width: number; height: number }): Promise<Page> {
  browser = await openSignedIn(url, { viewport });
  return browser.page;
}

async function openSession(page: Page, sessionId: string, url = api.url) {
  await page.goto(`${url}/#/s/${sessionId}`);
  await page.waitForSelector(".chat-head .title");
  await page.waitForSelector(".conn-state[data-state=live]");
}

/** An HTTP server for `app` on a loopback port (0: any), which a test can stop and start again on the same port. */
async function listen(app: ApiHarness["app"], port = 0) {
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: "127.0.0.1", port }, () => resolve(s));
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections(): void }).closeAllConnections();
      }),
  };
}

const activeElement = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement;
    return el ? `${el.tagName.toLowerCase()}${el.className ? `.${String(el.className).split(" ").join(".")}` : ""}` : "";
  });

describe("the connection indicator", () => {
  it("stays live when a turn fails with 'No model key', and the chat says why", async () => {
    // The service without a model key, as start-agent.ts runs it: the turn fails at once with turn_failed.
    const log = createLogger({ level: "silent" });
    const noKey = new Turns({
      db: t.db.kysely,
      approvals: api.approvals,
      log,
      owner: "no-key",
      flushMs: 5,
      runTurn: async (ctx) => {
        await ctx.writer.emit("turn_failed", { message: NO_KEY });
        return { status: "failed", iterations: 0, error: NO_KEY };
      },
    });
    const served = await serveApi(t.db, t.url, { turns: noKey, notices: ["No model key is set: the agent cannot answer."] });
    try {
      const s = await makeSession(t.db.kysely, { title: "No key" });
      const page = await loggedIn(served.url);
      await openSession(page, s.id, served.url);
      await page.fill(".composer textarea", "Deploy TypeType");
      await page.keyboard.press("Enter");
      await page.locator(".turn-error").waitFor();
      expect(await page.locator(".turn-error").innerText()).toBe(NO_KEY);
      await noKey.idle(s.id);
      // The stream is fine: a turn's failure is not the browser's connection error.
      await page.locator(".typing").waitFor({ state: "detached" });
      expect(await page.locator(".conn-state").getAttribute("data-state")).toBe("live");
      expect(await page.locator(".conn").count()).toBe(0);
      await shot(page, "no-model-key");
    } finally {
      await noKey.stop();
      await served.close();
    }
  });

  it("a session opened while the server is down loads by itself when it returns", async () => {
    const h = await startApi(t.db, t.url);
    let http = await listen(h.app);
    const port = http.port;
    try {
      const s = await makeSession(t.db.kysely, { title: "Opened while down" });
      const turn = await makeTurn(t.db.kysely, { session_id: s.id, status: "completed" });
      await appendEvents(t.db.kysely, s.id, turn.id, [
        ["turn_started", { turnId: turn.id, kind: "operator" }],
        ["text_delta", { text: "Everything on pve1 is **running**." }],
        ["turn_finished", { turnId: turn.id, status: "completed" }],
      ]);
      const page = await loggedIn(`http://127.0.0.1:${port}`);
      await page.locator(`.session-item[data-session="${s.id}"]`).waitFor();
      await http.close();
      // The operator opens the session while Nomos is down.
      await page.click(`.session-item[data-session="${s.id}"] a`);
      await page.locator(".conn-state.conn").waitFor();
      await page.locator(".conn-state[data-state=offline]").waitFor({ timeout: 20_000 });
      expect(await page.locator(".empty:has-text('Ask Nomos for something')").count()).toBe(0);
      await page.locator(".empty:has-text('loads by itself')").waitFor();
      await shot(page, "offline");
      http = await listen(h.app, port);
      // Nothing pressed: the page's own retry finds it back.
      await page.locator(`article.turn strong:text("running")`).waitFor({ timeout: 20_000 });
      await page.locator(".conn-state[data-state=live]").waitFor({ timeout: 20_000 });
      expect(await page.locator(".chat-head .title").innerText()).toBe("Opened while down");
    } finally {
      await http.close();
      await h.close();
    }
  }, 90_000);

  it("asks to sign in again when the login lapsed, and returns to the same session with the draft", async () => {
    const s = await makeSession(t.db.kysely, { title: "Lapsed" });
    const page = await loggedIn();
    await openSession(page, s.id);
    // The login ends on the server (expired, or revoked elsewhere).
    await t.db.kysely.deleteFrom("operator_logins").execute();
    await page.fill(".composer textarea", "Is nginx up?");
    await page.keyboard.press("Enter");
    await page.locator(".lapsed:text('Your sign-in has expired')").waitFor();
    expect(await activeElement(page)).toBe("input");
    await shot(page, "sign-in-again");
    await signIn(page, "alice");
    await page.waitForSelector(".conn-state[data-state=live]");
    expect(page.url()).toContain(`#/s/${s.id}`);
    expect(await page.locator(".composer textarea").inputValue()).toBe("Is nginx up?");
  });
});

describe("replies", () => {
  it("renders GitHub-flavoured Markdown: a table, a nested list, a blockquote, highlighted code; raw HTML stays text", async () => {
    const s = await makeSession(t.db.kysely, { title: "Markdown" });
    const turn = await makeTurn(t.db.kysely, { session_id: s.id, status: "completed" });
    const reply = [
      "| guest | state |",
      "|:--|--:|",
      "| web1 | running |",
      "| db1 | stopped |",
      "",
      "1. Prepare",
      "   - create the container",
      "   - install nginx",
      "2. Verify",
      "",
      "> The node has 2 GB free.",
      "",
      "Raw <b>bold</b> and <script>alert(1)</script> stay text; ~~old~~ and https://example.org link.",
      "",
      "```bash",
      "apt-get install -y nginx # the web server",
      "```",
    ].join("\n");
    await appendEvents(t.db.kysely, s.id, turn.id, [
      ["turn_started", { turnId: turn.id, kind: "operator" }],
      ["text_delta", { text: reply }],
      ["turn_finished", { turnId: turn.id, status: "completed" }],
    ]);
    const page = await loggedIn();
    await openSession(page, s.id);
    const md = page.locator(`[data-turn="${turn.id}"] .md`);
    await md.locator("table").waitFor();
    expect(await md.locator("table th").allInnerTexts()).toEqual(["guest", "state"]);
    expect(await md.locator("table tbody tr").count()).toBe(2);
    expect(await md.locator("table td.align-right").first().innerText()).toBe("running");
    // The nested list stays a bulleted list inside the numbered one.
    expect(await md.locator("ol > li > ul > li").allInnerTexts()).toEqual(["create the container", "install nginx"]);
    expect(await md.locator("ol > li").count()).toBe(2);
    expect(await md.locator("blockquote").innerText()).toBe("The node has 2 GB free.");
    expect(await md.innerText()).not.toContain("> The node");
    expect(await md.locator("b, script").count()).toBe(0);
    expect(await md.innerText()).toContain("Raw <b>bold</b> and <script>alert(1)</script> stay text");
    expect(await md.locator("s").innerText()).toBe("old");
    expect(await md.locator('a[href="https://example.org"]').getAttribute("rel")).toContain("noopener");
    // The code block: its language, a Copy button, and highlighting.
    const code = md.locator(".code-block");
    expect(await code.locator(".code-lang").innerText()).toBe("Bash");
    expect(await code.locator("pre.code").innerText()).toBe("apt-get install -y nginx # the web server");
    expect(await code.locator(".hljs-comment").innerText()).toBe("# the web server");
    await code.locator("button.copy").click();
    await code.locator("button.copy:text('Copied')").waitFor();
    await shot(page, "markdown");
  });

  it("tool cards say what happened in words, with elapsed time and a preview of long output", async () => {
    const s = await makeSession(t.db.kysely, { title: "Tool cards" });
    const turn = await makeTurn(t.db.kysely, { session_id: s.id });
    const long = Array.from({ length: 401 }, (_, i) => `line ${i + 1}`).join("\n");
    const held = await makeExecution(t.db.kysely, {
      session_id: s.id,
      target: "pve1",
      command: "pct destroy 104",
      status: "pending_approval",
    });
    await appendEvents(t.db.kysely, s.id, turn.id, [
      ["turn_started", { turnId: turn.id, kind: "operator" }],
      ["tool_use", { id: "t1", name: "run", input: { target: "typetype", command: "journalctl -u typetype" } }],
      ["tool_result", { toolUseId: "t1", isError: false, content: long }],
      ["tool_use", { id: "t2", name: "pct_create", input: { node: "pve1", hostname: "typetype", ostemplate: "debian-12", cores: 2 } }],
      ["tool_result", { toolUseId: "t2", isError: false, content: "container typetype created and started on pve1 as vmid 105" }],
      ["tool_use", { id: "t3", name: "run", input: { target: "pve1", command: "pct destroy 104" } }],
      [
        "tool_result",
        {
          toolUseId: "t3",
          isError: false,
          content: `Not run: destructive. Execution ${held.id} awaits the operator's approval`,
          executionId: held.id,
        },
      ],
      ["tool_use", { id: "t4", name: "run", input: { target: "web1", command: "apt-get update" } }],
    ]);
    const page = await loggedIn();
    await openSession(page, s.id);
    const label = (id: number) => page.locator(".tool .tool-label").nth(id).innerText();
    await page.locator(".tool").nth(3).waitFor();
    expect(await label(0)).toBe("Ran on typetype");
    expect(await label(1)).toBe("Created container typetype on pve1");
    expect(await label(2)).toBe("Asked to run on pve1");
    expect(await label(3)).toBe("Running on web1");
    expect(await page.locator("summary").allInnerTexts()).not.toContainEqual(expect.stringMatching(/request_execution|pct_create/));
    // Done: how long it took (its result came in the same instant here).
    expect(await page.locator(".tool").first().locator(".elapsed").innerText()).toBe("< 1 s");
    // Running: the elapsed time ticks.
    await page.locator('.tool.ph-running .elapsed:text-matches("^\\\\d+ s$")').waitFor();
    // The long output: first and last lines around what is hidden, then all of it.
    const first = page.locator(".tool").first();
    await first.locator("summary").click();
    const preview = await first.locator("pre.output").innerText();
    expect(preview).toContain("line 1\n");
    expect(preview).toContain("⋯ 391 more lines ⋯");
    expect(preview).toContain("line 401");
    expect(preview).not.toContain("line 200\n");
    // The expanded card repeats no JSON: only the inputs the summary does not show.
    expect(await page.locator(".tool").nth(1).locator("dl.inputs").count()).toBe(1);
    const download = page.waitForEvent("download");
    await first.locator("button:text('Download')").click();
    expect((await download).suggestedFilename()).toBe("run-t1.txt");
    await first.locator("button:text('Show all 401 lines')").click();
    expect(await first.locator("pre.output").innerText()).toContain("line 200\n");
    await shot(page, "tool-cards");
  });
});

describe("screen readers", () => {
  it("hear a reply once it is finished and a new approval card, never a replay", async () => {
    const s = await makeSession(t.db.kysely, { title: "Announced" });
    const turn = await makeTurn(t.db.kysely, { session_id: s.id });
    const old = await makeExecution(t.db.kysely, {
      session_id: s.id,
      target: "pve1",
      command: "pct destroy 103",
      status: "pending_approval",
    });
    const oldApproval = await makeApproval(t.db.kysely, { session_id: s.id, kind: "execution", execution_id: old.id });
    await appendEvents(t.db.kysely, s.id, turn.id, [
      ["turn_started", { turnId: turn.id, kind: "operator" }],
      ["approval_requested", { approval: { id: oldApproval.id, kind: "execution", status: "pending", executionId: old.id } }],
      ["text_delta", { text: "Looking" }],
    ]);
    const page = await loggedIn();
    await openSession(page, s.id);
    const region = page.locator("[role=log][aria-live=polite]");
    const article = page.locator(`article[data-turn="${turn.id}"]`);
    expect(await region.innerText()).toBe("");
    // The reply streams in a live article that is busy until the turn ends.
    expect(await article.getAttribute("aria-live")).toBe("polite");
    expect(await article.getAttribute("aria-busy")).toBe("true");
    const x = await makeExecution(t.db.kysely, { session_id: s.id, target: "pve1", command: "pct destroy 104", risk: "destructive" });
    const approval = await makeApproval(t.db.kysely, {
      session_id: s.id,
      kind: "execution",
      execution_id: x.id,
      confirmation_phrase: "destroy 104",
    });
    await appendEvents(t.db.kysely, s.id, turn.id, [
      ["text_delta", { text: " at pve1." }],
      [
        "approval_requested",
        { approval: { id: approval.id, kind: "execution", status: "pending", executionId: x.id, risk: "destructive", target: "pve1" } },
      ],
      ["turn_finished", { turnId: turn.id, status: "completed" }],
    ]);
    await page.locator("[role=log]:has-text('A destructive step on target pve1 waits for your approval')").waitFor();
    await page.waitForFunction(
      (id) => document.querySelector(`article[data-turn="${id}"]`)?.getAttribute("aria-busy") === "false",
      turn.id,
    );
  });
});

describe("sessions", () => {
  it("keeps a draft in its own session, across switching and reloading", async () => {
    const a = await makeSession(t.db.kysely, { title: "Draft A" });
    const b = await makeSession(t.db.kysely, { title: "Draft B" });
    const page = await loggedIn();
    await openSession(page, a.id);
    await page.fill(".composer textarea", "half a thought for A");
    await page.click(`.session-item[data-session="${b.id}"] a`);
    await page.waitForSelector(".chat-head .title:text('Draft B')");
    expect(await page.locator(".composer textarea").inputValue()).toBe("");
    await page.fill(".composer textarea", "and one for B");
    await page.click(`.session-item[data-session="${a.id}"] a`);
    await page.waitForSelector(".chat-head .title:text('Draft A')");
    expect(await page.locator(".composer textarea").inputValue()).toBe("half a thought for A");
    await page.reload();
    await page.waitForSelector(".chat-head .title:text('Draft A')");
    expect(await page.locator(".composer textarea").inputValue()).toBe("half a thought for A");
  });

  it("puts the focus in the composer after + New and after switching, and reuses an empty session", async () => {
    const page = await loggedIn();
    await page.click("text=+ New");
    await page.waitForSelector(".composer textarea");
    await page.waitForFunction(() => document.activeElement?.matches(".composer textarea"));
    const first = page.url();
    const count = await page.locator(".session-item").count();
    await page.click("text=+ New");
    await page.waitForFunction(() => document.activeElement?.matches(".composer textarea"));
    // No empty "New session" piles up: the empty one is reused.
    expect(page.url()).toBe(first);
    expect(await page.locator(".session-item").count()).toBe(count);
    const other = await makeSession(t.db.kysely, { title: "Elsewhere" });
    await page.reload();
    await page.click(`.session-item[data-session="${other.id}"] a`);
    await page.waitForSelector(".chat-head .title:text('Elsewhere')");
    await page.waitForFunction(() => document.activeElement?.matches(".composer textarea"));
  });

  it("after Approve the focus goes to the next card waiting for a decision", async () => {
    const s = await makeSession(t.db.kysely, { title: "Two decisions" });
    const turn = await makeTurn(t.db.kysely, { session_id: s.id, status: "completed" });
    const plan = await makePlan(t.db.kysely, { session_id: s.id });
    const planApproval = await makeApproval(t.db.kysely, { session_id: s.id, kind: "plan", plan_id: plan.id });
    const doomed = await makeExecution(t.db.kysely, { session_id: s.id, target: "pve1", command: "pct destroy 104", risk: "destructive" });
    const step = await makeApproval(t.db.kysely, {
      session_id: s.id,
      kind: "execution",
      execution_id: doomed.id,
      confirmation_phrase: "destroy 104",
    });
    await appendEvents(t.db.kysely, s.id, turn.id, [
      ["turn_started", { turnId: turn.id, kind: "operator" }],
      ["plan_proposed", { planId: plan.id, approvalId: planApproval.id, goal: plan.goal, steps: plan.steps }],
      ["approval_requested", { approval: { id: planApproval.id, kind: "plan", status: "pending", planId: plan.id } }],
      ["approval_requested", { approval: { id: step.id, kind: "execution", status: "pending", executionId: doomed.id } }],
      ["turn_finished", { turnId: turn.id, status: "completed" }],
    ]);
    const page = await loggedIn();
    await openSession(page, s.id);
    await page.locator(`.plan[data-approval="${planApproval.id}"] button.approve`).click();
    await page.locator(`.plan[data-approval="${planApproval.id}"] .decided`).waitFor();
    await page.waitForFunction((id) => document.activeElement?.matches(`[data-approval="${id}"] input.confirm-input`), step.id);
    await page.keyboard.type("destroy 104");
    await page.keyboard.press("Enter");
    await page.locator(`.approval[data-approval="${step.id}"] .decided:text('Approved by alice')`).waitFor();
    await page.waitForFunction(() => document.activeElement?.matches(".composer textarea"));
  });

  it("names a session after its first sentence, shows when it was active, finds, renames and deletes it", async () => {
    const page = await loggedIn();
    await page.click("text=+ New");
    await page.waitForSelector(".conn-state[data-state=live]");
    await page.fill(".composer textarea", "Deploy TypeType on pve1 in a Debian 12 container with nginx in front. Use 2 cores.");
    await page.keyboard.press("Enter");
    const id = /#\/s\/(.+)$/.exec(page.url())![1]!;
    const item = page.locator(`.session-item[data-session="${id}"]`);
    await item.locator(".session-title:text('Deploy TypeType on pve1 in a Debian 12 container…')").waitFor();
    expect(await item.locator("time").innerText()).toBe("just now");
    await api.turns.idle(id);
    // Search.
    await page.fill(".session-search", "typetype");
    expect(await page.locator(".session-item").count()).toBe(1);
    await page.fill(".session-search", "");
    // Rename: in place, Enter saves.
    await item.locator("button.rename-btn").click();
    await page.waitForFunction(() => document.activeElement?.matches("input.rename-input"));
    await page.fill("input.rename-input", "TypeType on pve1");
    await page.keyboard.press("Enter");
    await item.locator(".session-title:text('TypeType on pve1')").waitFor();
    const renamed = await t.db.kysely.selectFrom("sessions").select("title").where("id", "=", id).executeTakeFirstOrThrow();
    expect(renamed.title).toBe("TypeType on pve1");
    // Delete, after a confirmation: it leaves the list and the chat.
    page.once("dialog", (d) => void d.accept());
    await item.locator("button.delete-btn").click();
    await item.waitFor({ state: "detached" });
    await page.waitForSelector(".welcome");
    const row = await t.db.kysely.selectFrom("sessions").select("archived_at").where("id", "=", id).executeTakeFirstOrThrow();
    expect(row.archived_at).not.toBeNull();
    // Its old address says so, and retries nothing.
    const other = await makeSession(t.db.kysely, { title: "Still followed" });
    await page.goto(`${api.url}/#/s/${id}`);
    await page.locator(".form-error:text('This session was deleted or does not exist.')").waitFor();
    expect(await page.locator(".conn-state").count()).toBe(0);
    // The chat holds no stream now, so the list follows the other sessions on its own: one asks for approval, and it shows.
    await page.locator(`.session-item[data-session="${other.id}"]`).waitFor();
    const plan = await makePlan(t.db.kysely, { session_id: other.id });
    const approval = await makeApproval(t.db.kysely, { session_id: other.id, kind: "plan", plan_id: plan.id });
    await appendEvents(t.db.kysely, other.id, null, [["approval_requested", { approval: { id: approval.id } }]]);
    await page.waitForSelector(`.session-item[data-session="${other.id}"] [data-state=needs_approval]`);
  });
  it("holds one event stream per tab, so a fourth tab loads, and the list still follows other sessions live", async () => {
    const sessions = await Promise.all(["Tab 1", "Tab 2", "Tab 3", "Tab 4"].map((title) => makeSession(t.db.kysely, { title })));
    browser = await openSignedIn(api.url);
    const { context } = browser;
    // Streams still open, per page: an EventSource's request never finishes while it streams.
    const open = new Map<Page, Set<unknown>>();
    const track = (page: Page) => {
      const live = new Set<unknown>();
      open.set(page, live);
      page.on("request", (r) => r.resourceType() === "eventsource" && live.add(r));
      page.on("requestfinished", (r) => live.delete(r));
      page.on("requestfailed", (r) => live.delete(r));
    };
    const pages = [browser.page, ...(await Promise.all([1, 2, 3].map(() => context.newPage())))];
    for (const page of pages) track(page);
    for (const [i, page] of pages.entries()) await openSession(page, sessions[i]!.id);
    for (const page of pages) expect(open.get(page)!.size).toBe(1);

    // Another session asks for approval: every tab's list says so, over the one stream it holds.
    const plan = await makePlan(t.db.kysely, { session_id: sessions[3]!.id });
    const approval = await makeApproval(t.db.kysely, { session_id: sessions[3]!.id, kind: "plan", plan_id: plan.id });
    await appendEvents(t.db.kysely, sessions[3]!.id, null, [["approval_requested", { approval: { id: approval.id } }]]);
    for (const page of pages) {
      await page.waitForSelector(`.session-item[data-session="${sessions[3]!.id}"] [data-state=needs_approval]`);
      await page.waitForFunction(() => /^\(\d+\) Nomos — approval needed$/.test(document.title));
    }
  });
});

describe("the phone", () => {
  it("has a one-row header and a demo notice that can be dismissed for good", async () => {
    const notice = "This is a demo. Nothing here touches a real machine: the targets are simulated.";
    const served = await serveApi(t.db, t.url, { notices: [notice] });
    try {
      const s = await makeSession(t.db.kysely, { title: "A long title for a small screen that must not wrap" });
      const page = await loggedIn(served.url, { width: 390, height: 844 });
      await openSession(page, s.id, served.url);
      const head = await page.locator(".chat-head").boundingBox();
      expect(head!.height).toBeLessThan(56);
      const tops = await page.locator(".chat-head > *").evaluateAll((els) =>
        els
          .map((el) => el.getBoundingClientRect())
          .filter((r) => r.height > 0)
          .map((r) => Math.round(r.top + r.height / 2)),
      );
      expect(Math.max(...tops) - Math.min(...tops)).toBeLessThan(12);
      // The ☰ button sits in the header row and covers nothing of the notice.
      const menu = (await page.locator(".chat-head .menu-toggle").boundingBox())!;
      const box = (await page.locator(".main .notice").boundingBox())!;
      const apart =
        menu.x >= box.x + box.width || box.x >= menu.x + menu.width || menu.y >= box.y + box.height || box.y >= menu.y + menu.height;
      expect(apart).toBe(true);
      // The page itself never scrolls: header, chat and composer fit the screen.
      expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThanOrEqual(844);
      await shot(page, "phone-notice");
      await page.click("button[aria-label='Dismiss this notice']");
      expect(await page.locator(".notice").count()).toBe(0);
      await page.reload();
      await page.waitForSelector(".conn-state[data-state=live]");
      expect(await page.locator(".notice").count()).toBe(0);
    } finally {
      await served.close();
    }
  });
});

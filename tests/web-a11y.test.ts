// The page's accessibility, checked by axe-core run inside Chromium (the
// engine browser extensions and CI tools use): no violation of WCAG 2.2
// A/AA nor of axe's best practices on the login page and on a chat holding
// every kind of card (plan, destructive step, tool calls running, waiting,
// done and failed, a continuation, a finished plan, a failed turn, Markdown
// with a table and code, the pinned checklist with a step in every status,
// snapshot cards with and without a safety net), then on the settings page
// (its operators section too) and the snapshots view, in the light and the
// dark theme, at desktop (1280×800) and phone (390×844) size. Each page is also saved as a
// screenshot under tests/artifacts/.
import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import axe from "axe-core";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { operatorCreate } from "../src/auth/operators.js";
import type { PlanChecklistStep, PlanChecklistView, SnapshotView } from "../src/events/contract.js";
import { ARTIFACTS, type BrowserSession, openBrowser, type ServedApi, serveApi, signIn } from "./helpers/browser.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeExecution, makeSession } from "./helpers/factories.js";
import { appendEvents, makeApproval, makeAssentWindow, makePlan, makeTurn } from "./helpers/web-factories.js";

const t = useTestDatabase();
let api: ServedApi;
let browser: BrowserSession | undefined;
let sessionId = "";

beforeAll(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  api = await serveApi(t.db, t.url, { notices: ["This is a demo. Nothing here touches a real machine."] });
  await operatorCreate(t.db.kysely, { username: "alice", password: "correct horse battery", actor: "system:test" });
  sessionId = await everyCard();
});
afterEach(async () => {
  await browser?.close();
  browser = undefined;
});
afterAll(async () => {
  await api.close();
});

/** A session holding every kind of card the chat draws. */
async function everyCard(): Promise<string> {
  const s = await makeSession(t.db.kysely, { title: "Deploy TypeType on pve1" });
  const window = await makeAssentWindow(t.db.kysely, { session_id: s.id, minutes: 30 });
  const first = await makeTurn(t.db.kysely, { session_id: s.id, status: "completed" });
  const plan = await makePlan(t.db.kysely, {
    session_id: s.id,
    steps: [
      { title: "Remove the old container", target: "pve1", command: "pct destroy 103", destructive: true },
      { title: "Create the container", target: "pve1" },
      { title: "Install nginx", target: "typetype", command: "apt-get install -y nginx" },
    ],
  });
  const planApproval = await makeApproval(t.db.kysely, { session_id: s.id, kind: "plan", plan_id: plan.id });
  const doomed = await makeExecution(t.db.kysely, { session_id: s.id, target: "pve1", command: "pct destroy 104", risk: "destructive" });
  const destructive = await makeApproval(t.db.kysely, {
    session_id: s.id,
    kind: "execution",
    execution_id: doomed.id,
    confirmation_phrase: "destroy 104",
  });
  const done = await makeExecution(t.db.kysely, {
    session_id: s.id,
    target: "typetype",
    command: "systemctl is-active nginx",
    risk: "read_only",
    status: "completed",
    exit_code: 0,
    stdout: "active\n",
    started_at: new Date(Date.now() - 3000),
    finished_at: new Date(),
  });
  const running = await makeExecution(t.db.kysely, {
    session_id: s.id,
    target: "typetype",
    command: "apt-get install -y nginx",
    risk: "config_mutation",
  });
  await t.db.kysely
    .insertInto("messages")
    .values({
      session_id: s.id,
      kind: "operator",
      content: [{ type: "text", text: "Deploy TypeType on pve1" }],
      created_at: new Date(Date.now() - 60_000),
    })
    .execute();
  await appendEvents(t.db.kysely, s.id, first.id, [
    ["turn_started", { turnId: first.id, kind: "operator" }],
    [
      "text_delta",
      { text: "Here is what runs on **pve1**:\n\n| guest | state |\n|---|---|\n| web1 | running |\n\n```bash\npct list\n```\n" },
    ],
    ["tool_use", { id: "l1", name: "list_targets", input: {} }],
    ["tool_result", { toolUseId: "l1", isError: false, content: "pve1 (proxmox)" }],
    ["tool_use", { id: "r1", name: "run", input: { target: "pve1", command: "pct list" } }],
    ["tool_result", { toolUseId: "r1", isError: false, content: "VMID Status Name\n101 running web1" }],
    ["tool_use", { id: "r2", name: "run", input: { target: "pve1", command: "cat /nope" } }],
    ["tool_result", { toolUseId: "r2", isError: true, content: "cat: /nope: No such file or directory" }],
    ["plan_proposed", { planId: plan.id, approvalId: planApproval.id, goal: plan.goal, steps: plan.steps }],
    ["approval_requested", { approval: { id: planApproval.id, kind: "plan", status: "pending", planId: plan.id } }],
    ["turn_finished", { turnId: first.id, status: "completed" }],
  ]);
  const cont = await makeTurn(t.db.kysely, { session_id: s.id, kind: "continuation" });
  await appendEvents(t.db.kysely, s.id, cont.id, [
    ["assent_changed", { open: true, expiresAt: window.expires_at.toISOString(), scopeTargets: ["pve1"] }],
    ["turn_started", { turnId: cont.id, kind: "continuation", executionIds: [done.id] }],
    ["text_delta", { text: "nginx is active. Installing the rest." }],
    ["tool_use", { id: "c1", name: "pct_create", input: { node: "pve1", hostname: "typetype", ostemplate: "debian-12" } }],
    ["tool_result", { toolUseId: "c1", isError: false, content: "container typetype created and started on pve1 as vmid 105" }],
    ["tool_use", { id: "q1", name: "request_execution", input: { target: "typetype", command: "apt-get install -y nginx" } }],
    ["tool_result", { toolUseId: "q1", isError: false, content: `execution ${running.id} queued`, executionId: running.id }],
    ["execution_updated", { execution: { ...running, status: "running" } }],
    ["tool_use", { id: "d1", name: "run", input: { target: "pve1", command: "pct destroy 104" } }],
    [
      "tool_result",
      {
        toolUseId: "d1",
        isError: false,
        content: `Not run: destructive. Execution ${doomed.id} awaits the operator's approval`,
        executionId: doomed.id,
      },
    ],
    ["approval_requested", { approval: { id: destructive.id, kind: "execution", status: "pending", executionId: doomed.id } }],
    // The pinned checklist with a step in every status, and its safety-net lines (issues 16 and 17).
    ["plan_updated", { ...checklist(plan.id, plan.goal) }],
    ["snapshot_recorded", { snapshot: snapshot(s.id, plan.id, { state: "taken" }) }],
    ["snapshot_recorded", { snapshot: snapshot(s.id, plan.id, { state: "unsupported", vmid: 106, target: "old1" }) }],
    [
      "plan_finished",
      { planId: plan.id, goal: plan.goal, outcome: "verified", summary: "TypeType answers on port 80", needs: null, windowClosed: true },
    ],
    ["turn_failed", { message: "No model key is set: put ANTHROPIC_API_KEY=sk-ant-... in the environment and restart Nomos." }],
  ]);
  return s.id;
}

function checklist(planId: string, goal: string): PlanChecklistView {
  const step = (n: number, title: string, status: PlanChecklistStep["status"], note: string | null = null): PlanChecklistStep => ({
    step: n,
    title,
    target: "pve1",
    command: null,
    status,
    note,
    startedAt: null,
    finishedAt: null,
  });
  return {
    planId,
    goal,
    status: "approved",
    steps: [
      step(1, "Remove the old container", "skipped", "already gone"),
      step(2, "Create the container", "done"),
      step(3, "Install nginx", "running"),
      step(4, "Open the port", "failed", "ufw is not installed"),
      step(5, "Check it answers", "pending"),
    ],
    outcome: null,
    summary: null,
    needs: null,
    finishedAt: null,
    usage: { inputTokens: 12_400, outputTokens: 1_800, cacheReadTokens: 40_000, cacheWriteTokens: 3_000, costUsd: 0.09 },
  };
}

function snapshot(sessionId: string, planId: string, over: Partial<SnapshotView>): SnapshotView {
  return {
    id: randomUUID(),
    sessionId,
    planId,
    planGoal: "Deploy TypeType on pve1",
    planOutcome: null,
    target: "web1",
    node: "pve1",
    vmid: 105,
    kind: "lxc",
    name: `nomos-${planId.replaceAll("-", "").slice(0, 16)}`,
    state: "taken",
    reason: over.state === "unsupported" ? "snapshot feature is not available" : null,
    guestWasRunning: true,
    sizeBytes: null,
    executionId: null,
    rollback: null,
    takenAt: new Date().toISOString(),
    rolledBackAt: null,
    removedAt: null,
    ...over,
  };
}

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

async function violations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the page's CSP (no inline script) stays as served.
  await page.evaluate(axe.source);
  const found = await page.evaluate(async () => {
    const run = (window as unknown as { axe: { run(ctx: Document, opts: unknown): Promise<{ violations: unknown[] }> } }).axe.run;
    const result = await run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa", "best-practice"] },
    });
    return result.violations;
  });
  return (found as Violation[]).map(
    (v) => `${v.id} (${v.impact}): ${v.help}\n${v.nodes.map((n) => `  ${n.target.join(" ")}: ${n.failureSummary ?? ""}`).join("\n")}`,
  );
}

const SIZES = [
  { name: "desktop", width: 1280, height: 800 },
  { name: "phone", width: 390, height: 844 },
] as const;

describe("accessibility (axe-core)", () => {
  for (const size of SIZES) {
    for (const scheme of ["light", "dark"] as const) {
      it(`has no violations on the login page and the chat, ${scheme}, ${size.name}`, async () => {
        browser = await openBrowser({ width: size.width, height: size.height });
        const { page } = browser;
        await page.emulateMedia({ colorScheme: scheme });
        await page.goto(api.url);
        await page.waitForSelector("input[name=username]");
        await page.screenshot({ path: join(ARTIFACTS, `a11y-login-${scheme}-${size.name}.png`) });
        expect(await violations(page)).toEqual([]);
        await signIn(page, "alice");
        await page.goto(`${api.url}/#/s/${sessionId}`);
        await page.waitForSelector(".conn-state[data-state=live]");
        await page.locator(".plan-outcome").waitFor();
        await page.locator(".turn-error").waitFor();
        await page.locator("details.checklist .cl-step[data-status=failed]").waitFor({ state: "attached" });
        // A finished plan's checklist is folded: open it, so its insides are checked too.
        expect(await page.locator("details.checklist").getAttribute("open")).toBeNull();
        await page.click("details.checklist summary");
        await page.locator("details.checklist .cl-step[data-status=failed]").waitFor();
        expect(await page.locator("details.checklist .cl-net").count()).toBe(2);
        expect(await page.locator(".card.snapshot").count()).toBeGreaterThanOrEqual(2);
        // Open every tool card, so their insides are checked too.
        for (const summary of await page.locator(".tool summary").all()) await summary.click();
        await page.screenshot({ path: join(ARTIFACTS, `a11y-chat-${scheme}-${size.name}.png`), fullPage: true });
        expect(await violations(page)).toEqual([]);
        // The settings page (notification channels, delivery log, and operators: alice is the admin) and the snapshots view.
        await page.goto(`${api.url}/#/settings`);
        await page.waitForSelector(".settings h1, .settings h2");
        await page.waitForSelector(".operators-settings tr.operator[data-username=alice]");
        await page.screenshot({ path: join(ARTIFACTS, `a11y-settings-${scheme}-${size.name}.png`), fullPage: true });
        expect(await violations(page)).toEqual([]);
        await page.goto(`${api.url}/#/snapshots`);
        await page.waitForSelector("a[data-nav=snapshots].current");
        await page.locator(".snapshots-view .empty").waitFor();
        expect(await violations(page)).toEqual([]);
        await page.goto(`${api.url}/#/s/${sessionId}`);
        await page.waitForSelector(".conn-state[data-state=live]");
        if (size.name === "phone") {
          // The session list, as the ☰ button shows it.
          await page.click(".menu-toggle");
          await page.locator(".app.menu-open").waitFor();
          expect(await violations(page)).toEqual([]);
        }
      }, 60_000);
    }
  }
});

describe("the theme toggle", () => {
  it("overrides the system's choice both ways, with no contrast violation either way", async () => {
    browser = await openBrowser();
    const { page } = browser;
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await page.emulateMedia({ colorScheme: "light" });
    await page.goto(api.url);
    await page.waitForSelector("input[name=username]");
    expect(await background()).toBe("rgb(246, 247, 249)");
    await page.click(".theme-toggle");
    expect(await page.getAttribute("html", "data-theme")).toBe("dark");
    expect(await background()).toBe("rgb(16, 19, 23)");
    expect(await violations(page)).toEqual([]);
    // The system turning dark changes nothing while a theme is picked; picking light holds against it.
    await page.emulateMedia({ colorScheme: "dark" });
    expect(await background()).toBe("rgb(16, 19, 23)");
    await page.click(".theme-toggle");
    expect(await page.getAttribute("html", "data-theme")).toBe("light");
    expect(await background()).toBe("rgb(246, 247, 249)");
    expect(await violations(page)).toEqual([]);
  });
});

// The cards say what they grant, in a real browser (Debian's chromium via
// playwright-core) against the real API, the real approvals and the real
// runner over SSH to the Proxmox double: the plan card and the step card
// state duration, targets and what still asks before the click, a
// destructive step says what it does in plain words, "Approve this step"
// runs the step and opens no window, and the autonomy badge shows its scope
// on hover or tap.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { approvalView } from "../src/approvals/approval-view.js";
import { operatorCreate } from "../src/auth/operators.js";
import { executionsPortFrom } from "../src/executions/executions-port.js";
import { executionGet } from "../src/executions/lifecycle.js";
import { ExecutionRunner } from "../src/executions/runner.js";
import { createLogger } from "../src/log/logger.js";
import { pctCreate } from "../src/pct/pct-create.js";
import { SshPool } from "../src/ssh/connection-pool.js";
import { makeRedactor } from "../src/ssh/redact.js";
import { TargetRegistry } from "../src/targets/registry.js";
import { useAgentHarness } from "./helpers/agent-harness.js";
import { ARTIFACTS, type BrowserSession, openSignedIn, type ServedApi, serveApi } from "./helpers/browser.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeExecution, makeSession } from "./helpers/factories.js";
import { SshTestHost } from "./helpers/ssh-test-host.js";
import { appendEvents, makeApproval, makeAssentWindow, makePlan, makeTurn } from "./helpers/web-factories.js";

const t = useTestDatabase();
const h = useAgentHarness(t);
const log = createLogger({ level: "silent" });
let api: ServedApi;
let browser: BrowserSession | undefined;
let host: SshTestHost;
let pool: SshPool;
let runner: ExecutionRunner;
const db = () => t.db.kysely;

beforeAll(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  host = await SshTestHost.start();
  pool = new SshPool({ log });
  const registry = new TargetRegistry({ db: db(), fileTargets: [host.targetsFileEntry()] });
  await registry.sync();
  runner = new ExecutionRunner({ db: t.db, registry, pool, log, redact: makeRedactor(), sweepEveryMs: 600_000 });
  await runner.start();
  const executions = executionsPortFrom({
    runner,
    registry,
    pctCreate: (input, ctx) => pctCreate({ db: db(), registry, pool, redact: makeRedactor(), log }, input, ctx),
  });
  const approvalDeps = { ...h.approvalDeps, executions, assentMinutes: 30 };
  api = await serveApi(t.db, t.url, { turns: h.turns, approvals: approvalDeps, assentMinutes: 30 });
  await operatorCreate(db(), { username: "alice", password: "correct horse battery", actor: "system:test" });
});
afterEach(async () => {
  await browser?.close();
  browser = undefined;
});
afterAll(async () => {
  await api.close();
  await runner.stop();
  await pool.stop();
  await host.stop();
});

async function loggedIn(): Promise<Page> {
  browser = await openSignedIn(api.url);
  return browser.page;
}

async function openSession(page: Page, sessionId: string) {
  await page.goto(`${api.url}/#/s/${sessionId}`);
  await page.waitForSelector(".chat-head .title");
  await page.waitForSelector(".conn", { state: "detached" });
}

describe("cards that say what they grant", () => {
  it("the plan card states duration, targets, what still asks and a destructive step's effect", async () => {
    const s = await makeSession(db(), { title: "Replace web" });
    const turn = await makeTurn(db(), { session_id: s.id });
    const steps = [
      { title: "Install nginx", target: "web1", command: "apt-get install -y nginx" },
      { title: "Remove the old container", target: "pve1", command: "pct destroy 100", destructive: true },
    ];
    const plan = await makePlan(db(), { session_id: s.id, goal: "nginx on web1 replaces ct 100", steps });
    const approval = await makeApproval(db(), { session_id: s.id, kind: "plan", plan_id: plan.id });
    await appendEvents(db(), s.id, turn.id, [
      ["turn_started", { turnId: turn.id, kind: "operator" }],
      ["plan_proposed", { planId: plan.id, approvalId: approval.id, goal: plan.goal, steps }],
      ["approval_requested", { approval: await approvalView(db(), { approvalId: approval.id }) }],
    ]);
    const page = await loggedIn();
    await openSession(page, s.id);
    const card = page.locator(`.plan[data-approval="${approval.id}"]`);
    const grants = await card.locator(".grants").innerText();
    expect(grants).toContain("Approve opens autonomy for 30 minutes on web1 and pve1");
    expect(grants).toContain("Pre-authorizes the destructive step named above, exactly as written.");
    expect(grants).toContain("Still asks: any destructive step not named in this plan, and any step on another target.");
    expect(await card.locator(".effect").innerText()).toBe("This step deletes container 100 and its disks.");
    await page.screenshot({ path: join(ARTIFACTS, "consent-plan-card.png") });
  });

  it("'Approve this step' runs the step on the host and opens no window", async () => {
    const s = await makeSession(db(), { title: "One step" });
    const turn = await makeTurn(db(), { session_id: s.id });
    const x = await makeExecution(db(), {
      session_id: s.id,
      target: "pve1",
      command: "echo installed",
      risk: "config_mutation",
      mode: "async",
      status: "pending_approval",
    });
    await db().insertInto("nomos_plan_executions").values({ execution_id: x.id, session_id: s.id }).execute();
    const approval = await makeApproval(db(), { session_id: s.id, kind: "execution", execution_id: x.id });
    await appendEvents(db(), s.id, turn.id, [
      ["turn_started", { turnId: turn.id, kind: "operator" }],
      ["approval_requested", { approval: await approvalView(db(), { approvalId: approval.id }) }],
    ]);
    const page = await loggedIn();
    await openSession(page, s.id);
    const card = page.locator(`.approval[data-approval="${approval.id}"]`);
    const grants = await card.locator(".grants").innerText();
    expect(grants).toContain("Approve this step: runs this step only and opens no autonomy window.");
    expect(grants).toContain("Approve and continue: runs it and opens autonomy for 30 minutes on pve1");
    expect(grants).toContain("Still asks: destructive steps, and any step on another target.");
    await page.screenshot({ path: join(ARTIFACTS, "consent-step-card.png") });
    await card.locator("button.approve-step").click();
    await card.locator(".decided:text('Approved by alice')").waitFor();
    await expect.poll(async () => (await executionGet(db(), { executionId: x.id }))?.status, { timeout: 15_000 }).toBe("completed");
    expect(host.log.map((l) => l.command)).toContain("echo installed");
    expect(await db().selectFrom("assent_windows").select("id").where("session_id", "=", s.id).execute()).toEqual([]);
    expect(await page.locator(".assent.on").count()).toBe(0);
  });

  it("the autonomy badge shows the window's scope on hover and on tap", async () => {
    const s = await makeSession(db(), { title: "Badge" });
    const turn = await makeTurn(db(), { session_id: s.id });
    const w = await makeAssentWindow(db(), { session_id: s.id });
    await appendEvents(db(), s.id, turn.id, [
      ["turn_started", { turnId: turn.id, kind: "operator" }],
      ["assent_changed", { open: true, expiresAt: w.expires_at.toISOString(), scopeTargets: ["pve1"] }],
    ]);
    const page = await loggedIn();
    await openSession(page, s.id);
    const badge = page.locator(".assent.on .badge");
    expect(await badge.getAttribute("title")).toContain("Autonomy covers pve1");
    await badge.click();
    expect(await page.locator(".assent-scope").innerText()).toContain("Autonomy covers pve1");
  });
});

// The operator's page in a real browser (Debian's chromium via
// playwright-core) against the real API and PostgreSQL. What the agent would
// do, the tests do through the real tables: they append session_events rows
// (and plans, approvals, windows), and watch the page render them live.
// The agent port records what the buttons asked for. Each test saves a
// screenshot under tests/artifacts/.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { operatorCreate } from "../src/auth/operators.js";
import { echoPolicy } from "../src/model-double/messages-double.js";
import { SETUP_CODE } from "./helpers/api-harness.js";
import { ARTIFACTS, type BrowserSession, openBrowser, openSignedIn, type ServedApi, serveApi } from "./helpers/browser.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeExecution, makeSession } from "./helpers/factories.js";
import { appendEvents, makeApproval, makeAssentWindow, makePlan, makeTurn } from "./helpers/web-factories.js";

const t = useTestDatabase();
let api: ServedApi;
let browser: BrowserSession | undefined;
const XSS = `<img src=x onerror="document.title='pwned'">`;

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

async function loggedIn(viewport?: { width: number; height: number }, username = "alice"): Promise<Page> {
  browser = await openSignedIn(api.url, { username, viewport });
  return browser.page;
}

async function openSession(page: Page, sessionId: string) {
  await page.goto(`${api.url}/#/s/${sessionId}`);
  await page.waitForSelector(".chat-head .title");
  await page.waitForSelector(".conn", { state: "detached" }); // the stream is live
}

const turnText = (page: Page, turnId: string) => page.locator(`[data-turn="${turnId}"] .md`).innerText();

/**
 * A session as a teammate left it: an open window, a running execution, a
 * pending plan (with a destructive step) and a pending destructive step;
 * and an operator `username` with `role` to look at it.
 */
async function sharedWork(username: string, role: "viewer" | "operator") {
  await operatorCreate(t.db.kysely, { username, password: "correct horse battery", actor: "system:test", role });
  const s = await makeSession(t.db.kysely, { title: "Shared work" });
  const window = await makeAssentWindow(t.db.kysely, { session_id: s.id, minutes: 30 });
  const turn = await makeTurn(t.db.kysely, { session_id: s.id });
  const plan = await makePlan(t.db.kysely, {
    session_id: s.id,
    steps: [
      { title: "Remove the old container", target: "pve1", command: "pct destroy 103", destructive: true },
      { title: "Install nginx", target: "web1", command: "apt-get install -y nginx" },
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
  const x = await makeExecution(t.db.kysely, {
    session_id: s.id,
    target: "web1",
    command: "apt-get install -y nginx",
    risk: "config_mutation",
  });
  await appendEvents(t.db.kysely, s.id, turn.id, [
    ["assent_changed", { open: true, expiresAt: window.expires_at.toISOString() }],
    ["turn_started", { turnId: turn.id, kind: "operator" }],
    ["plan_proposed", { planId: plan.id, approvalId: planApproval.id, goal: plan.goal, steps: plan.steps }],
    ["approval_requested", { approval: { id: planApproval.id, kind: "plan", status: "pending", planId: plan.id } }],
    ["approval_requested", { approval: { id: destructive.id, kind: "execution", status: "pending", executionId: doomed.id } }],
    ["tool_use", { id: "re1", name: "request_execution", input: { target: "web1", command: "apt-get install -y nginx" } }],
    ["tool_result", { toolUseId: "re1", isError: false, content: `execution ${x.id} queued`, executionId: x.id }],
    ["execution_updated", { execution: { ...x, status: "running" } }],
  ]);
  return { sessionId: s.id, plan: planApproval.id, destructive: destructive.id };
}

describe("the page", () => {
  it("asks for the first operator when there is none, then logs in and out", async () => {
    await t.db.kysely.deleteFrom("operators").execute();
    browser = await openBrowser();
    const { page } = browser;
    await page.goto(api.url);
    await page.waitForSelector("text=Create the first operator account.");
    await page.fill("input[name=username]", "alice");
    await page.fill("input[name=password]", "correct horse battery");
    await page.click("button[type=submit]");
    expect(await page.locator(".form-error").innerText()).toMatch(/^The setup code is missing or wrong/);
    await page.fill("input[name=setupCode]", SETUP_CODE.toLowerCase());
    // Errors read as sentences, not as the API's field paths.
    await page.fill("input[name=password]", "short");
    await page.click("button[type=submit]");
    await page.locator(".form-error:text('Password must be at least 8 characters')").waitFor();
    await page.fill("input[name=password]", "correct horse battery");
    await page.click("button[type=submit]");
    await page.waitForSelector(".sidebar");
    expect(await page.locator(".who").innerText()).toContain("alice");
    await shot(page, "first-operator");
    await page.click("text=Log out");
    await page.waitForSelector("text=Log in to operate your homelab.");
    await page.fill("input[name=username]", "alice");
    await page.fill("input[name=password]", "wrong password");
    await page.click("button[type=submit]");
    expect(await page.locator(".form-error").innerText()).toBe("Wrong username or password");
  });

  it("sends a message and streams the reply from session_events as it is written", async () => {
    // The real turn starts and waits on the model double; the reply is written here, event by event.
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    api.double.setPolicy(() => ({ content: [{ type: "text", text: "(held)" }], hold: gate }));
    const page = await loggedIn();
    await page.click("text=+ New");
    await page.waitForSelector(".composer textarea");
    await page.waitForSelector(".conn", { state: "detached" });
    await page.fill(".composer textarea", "What is running on pve1?");
    await page.keyboard.press("Enter");
    await page.waitForSelector(".msg.operator:not(.pending)");
    const queued = await t.db.kysely
      .selectFrom("turns")
      .select(["id", "session_id", "input"])
      .where("kind", "=", "operator")
      .orderBy("created_at", "desc")
      .executeTakeFirstOrThrow();
    expect(queued.input).toEqual({ text: "What is running on pve1?", actor: "operator:alice" });
    const sessionId = queued.session_id;
    const turnId = queued.id;
    await appendEvents(t.db.kysely, sessionId, turnId, [
      ["turn_started", { turnId, kind: "operator" }],
      ["text_delta", { text: "Let me **look**" }],
    ]);
    await page.waitForSelector(`[data-turn="${turnId}"] strong:text("look")`);
    await appendEvents(t.db.kysely, sessionId, turnId, [
      ["text_delta", { text: " at the node.\n" }],
      ["tool_use", { id: "tu1", name: "run", input: { target: "pve1", command: "pct list" } }],
    ]);
    await page.waitForSelector('[data-tool="run"] .cmd:text("pct list")');
    await appendEvents(t.db.kysely, sessionId, turnId, [
      ["tool_result", { toolUseId: "tu1", isError: false, content: "VMID Status Name\n101  running web1" }],
      ["text_delta", { text: "One container, `web1`, is running." }],
      ["turn_finished", { turnId, status: "completed" }],
    ]);
    await page.waitForSelector(`[data-turn="${turnId}"] code:text("web1")`);
    await page.click('[data-tool="run"] summary');
    expect(await page.locator('[data-tool="run"] pre.output').innerText()).toContain("101  running web1");
    expect(await page.locator(`[data-turn="${turnId}"] .md`).allInnerTexts()).toEqual([
      "Let me look at the node.",
      "One container, web1, is running.",
    ]);
    await page.waitForSelector(".typing", { state: "detached" });
    expect(await page.locator(".session.current .session-title").innerText()).toBe("What is running on pve1?");
    await shot(page, "chat-streaming");
    release();
    await api.turns.idle(sessionId);
    api.double.setPolicy(echoPolicy);
  });

  it("approves a plan with the button; the continuation turn streams in with nobody typing", async () => {
    const s = await makeSession(t.db.kysely, { title: "Nginx container" });
    const turn = await makeTurn(t.db.kysely, { session_id: s.id, status: "completed" });
    const plan = await makePlan(t.db.kysely, { session_id: s.id });
    const approval = await makeApproval(t.db.kysely, { session_id: s.id, kind: "plan", plan_id: plan.id });
    await t.db.kysely
      .insertInto("messages")
      .values({
        session_id: s.id,
        kind: "operator",
        content: [{ type: "text", text: "Give me nginx in a container" }],
        created_at: new Date(Date.now() - 5000),
      })
      .execute();
    await appendEvents(t.db.kysely, s.id, turn.id, [
      ["turn_started", { turnId: turn.id, kind: "operator" }],
      ["text_delta", { text: "Let me see what I can use." }],
      ["tool_use", { id: "lt1", name: "list_targets", input: {} }],
      ["tool_result", { toolUseId: "lt1", isError: false, content: "pve1 (proxmox)\nnas (ssh)" }],
      [
        "text_delta",
        { text: "Here is the plan. **Approve** it and I will carry it out; each step runs on `pve1` or in the new container." },
      ],
      ["plan_proposed", { planId: plan.id, approvalId: approval.id, goal: plan.goal, steps: plan.steps }],
      ["approval_requested", { approval: { id: approval.id, kind: "plan", status: "pending", planId: plan.id } }],
      ["turn_finished", { turnId: turn.id, status: "completed" }],
    ]);
    const page = await loggedIn();
    await openSession(page, s.id);
    const card = page.locator(`.plan[data-approval="${approval.id}"]`);
    await card.waitFor();
    expect(await card.locator(".steps li").count()).toBe(2);
    await shot(page, "plan-card");
    await card.locator("button.approve").click();
    await card.locator(".decided:text('Approved by alice')").waitFor();
    // approvalDecide opened the window, as the operator, by button.
    const window = await t.db.kysely.selectFrom("assent_windows").selectAll().where("session_id", "=", s.id).executeTakeFirstOrThrow();
    expect(window).toMatchObject({ opened_by: "operator:alice", closed_at: null, plan_id: plan.id });
    // What the agent does next, with nobody typing: a continuation turn runs.
    const cont = await makeTurn(t.db.kysely, { session_id: s.id, kind: "continuation" });
    const x = await makeExecution(t.db.kysely, {
      session_id: s.id,
      target: "pve1",
      command: "pct create 105 local:vztmpl/debian-12.tar.zst",
    });
    await appendEvents(t.db.kysely, s.id, cont.id, [
      ["assent_changed", { open: true, expiresAt: window.expires_at.toISOString() }],
      ["turn_started", { turnId: cont.id, kind: "continuation", executionIds: [x.id], reason: "plan approved" }],
      ["text_delta", { text: "The plan is approved; creating the container now." }],
      ["execution_updated", { execution: { ...x, status: "running" } }],
    ]);
    const contView = page.locator(`[data-turn="${cont.id}"]`);
    // It says which step woke it, in words: the command and its target, not an id.
    await contView.locator(".system-start:has-text('pct create 105 local:vztmpl/debian-12.tar.zst on pve1 finished')").waitFor();
    await page.locator(".assent.on .time-left").waitFor();
    expect(await turnText(page, cont.id)).toBe("The plan is approved; creating the container now.");
    await shot(page, "continuation");
  });

  it("a refresh in the middle of a turn shows everything and keeps streaming, with no gap or duplicate", async () => {
    const s = await makeSession(t.db.kysely, { title: "Streaming" });
    const turn = await makeTurn(t.db.kysely, { session_id: s.id });
    await appendEvents(t.db.kysely, s.id, turn.id, [
      ["turn_started", { turnId: turn.id, kind: "operator" }],
      ["text_delta", { text: "one " }],
      ["text_delta", { text: "two " }],
    ]);
    const page = await loggedIn();
    await openSession(page, s.id);
    await appendEvents(t.db.kysely, s.id, turn.id, [["text_delta", { text: "three " }]]);
    await page.waitForFunction((id) => document.querySelector(`[data-turn="${id}"] .md`)?.textContent?.trim() === "one two three", turn.id);
    await page.reload();
    await appendEvents(t.db.kysely, s.id, turn.id, [["text_delta", { text: "four " }]]);
    await page.waitForSelector(".conn", { state: "detached" });
    await appendEvents(t.db.kysely, s.id, turn.id, [["text_delta", { text: "five" }]]);
    await page.waitForFunction((id) => document.querySelector(`[data-turn="${id}"] .md`)?.textContent?.endsWith("five"), turn.id);
    expect(await turnText(page, turn.id)).toBe("one two three four five");
    expect(await page.locator(".typing").count()).toBe(1);
    await shot(page, "refresh-mid-turn");
  });

  it("a destructive step's Approve waits for its typed phrase, and Enter in the box approves with it", async () => {
    const s = await makeSession(t.db.kysely, { title: "Cleanup" });
    const turn = await makeTurn(t.db.kysely, { session_id: s.id });
    const x = await makeExecution(t.db.kysely, {
      session_id: s.id,
      target: "pve1",
      command: "pct destroy 104 --purge",
      risk: "destructive",
    });
    const approval = await makeApproval(t.db.kysely, {
      session_id: s.id,
      kind: "execution",
      execution_id: x.id,
      confirmation_phrase: "destroy 104",
    });
    await appendEvents(t.db.kysely, s.id, turn.id, [
      ["turn_started", { turnId: turn.id, kind: "operator" }],
      ["text_delta", { text: "Container 104 is the old test box. Destroying it loses its disk." }],
      ["approval_requested", { approval: { id: approval.id, kind: "execution", status: "pending", executionId: x.id } }],
    ]);
    const page = await loggedIn();
    await openSession(page, s.id);
    const card = page.locator(`.approval[data-approval="${approval.id}"]`);
    await card.locator(".chip.risk-destructive").waitFor();
    expect(await card.locator("pre.cmd").innerText()).toBe("pct destroy 104 --purge");
    // Approve waits for the phrase: disabled while the box is empty or holds another phrase.
    expect(await card.locator("button.approve").isDisabled()).toBe(true);
    await card.locator("input.confirm-input").fill("destroy 105");
    expect(await card.locator("button.approve").isDisabled()).toBe(true);
    // Enter with the wrong phrase approves nothing and says why.
    await card.locator("input.confirm-input").press("Enter");
    expect(await card.locator(".form-error").innerText()).toBe('Type "destroy 104" exactly to approve this step.');
    const still = await t.db.kysely.selectFrom("approvals").select("status").where("id", "=", approval.id).executeTakeFirstOrThrow();
    expect(still.status).toBe("pending");
    await shot(page, "destructive-refused");
    // The right phrase enables Approve, and Enter in the box approves.
    await card.locator("input.confirm-input").fill("destroy 104");
    expect(await card.locator("button.approve").isDisabled()).toBe(false);
    await card.locator("input.confirm-input").press("Enter");
    await card.locator(".decided:text('Approved by alice')").waitFor();
    const decided = await t.db.kysely.selectFrom("approvals").selectAll().where("id", "=", approval.id).executeTakeFirstOrThrow();
    expect(decided).toMatchObject({ status: "approved", decided_by: "operator:alice", decided_via: "button" });
    const approved = await t.db.kysely.selectFrom("executions").select("status").where("id", "=", x.id).executeTakeFirstOrThrow();
    expect(approved.status).not.toBe("pending_approval");
  });

  it("Stop asks the server to stop everything of the session and shows what it stopped", async () => {
    const s = await makeSession(t.db.kysely, { title: "Long job" });
    const window = await makeAssentWindow(t.db.kysely, { session_id: s.id, minutes: 30 });
    const turn = await makeTurn(t.db.kysely, { session_id: s.id, kind: "continuation" });
    await appendEvents(t.db.kysely, s.id, turn.id, [
      ["assent_changed", { open: true, expiresAt: window.expires_at.toISOString() }],
      ["turn_started", { turnId: turn.id, kind: "continuation", reason: "plan approved" }],
      ["text_delta", { text: "Installing packages…" }],
    ]);
    const page = await loggedIn({ width: 390, height: 780 }); // a phone
    await openSession(page, s.id);
    expect(await page.locator(".assent.on .time-left").innerText()).toMatch(/^(29|30):\d\d$/);
    await shot(page, "stop-phone");
    await page.click("button.stop");
    await page.locator(".assent.on").waitFor({ state: "detached" });
    await page.locator(".stopped-marker:text('Stopped by alice: nothing was running.')").waitFor();
    const closed = await t.db.kysely
      .selectFrom("assent_windows")
      .select("close_reason")
      .where("id", "=", window.id)
      .executeTakeFirstOrThrow();
    expect(closed.close_reason).toBe("revoked");
  });

  it("execution status updates live on its card, and a running one can be cancelled from it", async () => {
    const s = await makeSession(t.db.kysely, { title: "Async step" });
    const turn = await makeTurn(t.db.kysely, { session_id: s.id });
    const x = await makeExecution(t.db.kysely, {
      session_id: s.id,
      target: "web1",
      command: "apt-get install -y nginx",
      risk: "config_mutation",
    });
    await appendEvents(t.db.kysely, s.id, turn.id, [
      ["turn_started", { turnId: turn.id, kind: "operator" }],
      ["tool_use", { id: "re1", name: "request_execution", input: { target: "web1", command: "apt-get install -y nginx" } }],
      ["tool_result", { toolUseId: "re1", isError: false, content: `execution ${x.id} queued`, executionId: x.id }],
      ["execution_updated", { execution: { ...x, status: "running" } }],
    ]);
    const page = await loggedIn();
    await openSession(page, s.id);
    const card = page.locator('[data-tool="request_execution"]');
    await card.locator(".chip.st-running").waitFor();
    await card.locator("summary").click();
    await card.locator("button:text('Cancel')").click();
    await card.locator(".chip.st-cancelled").waitFor();
    const cancelled = await t.db.kysely
      .selectFrom("executions")
      .select(["status", "error"])
      .where("id", "=", x.id)
      .executeTakeFirstOrThrow();
    expect(cancelled).toEqual({ status: "cancelled", error: "cancelled by operator:alice" });
    // Another one finishing, as the runner reports it.
    await appendEvents(t.db.kysely, s.id, turn.id, [
      ["tool_use", { id: "re2", name: "request_execution", input: { target: "web1", command: "systemctl is-active nginx" } }],
      ["tool_result", { toolUseId: "re2", isError: false, content: "queued", executionId: "11111111-1111-4111-8111-111111111111" }],
      [
        "execution_updated",
        {
          execution: {
            id: "11111111-1111-4111-8111-111111111111",
            target: "web1",
            command: "systemctl is-active nginx",
            status: "completed",
            exitCode: 0,
            stdout: "active\n",
            stderr: "",
          },
        },
      ],
    ]);
    const second = page.locator('[data-tool="request_execution"]').nth(1);
    await second.locator(".chip.st-completed").waitFor();
    expect(await second.locator(".chip").innerText()).toBe("completed · exit 0");
    await shot(page, "execution-live");
  });

  it("shows a viewer everything to read and nothing to press: no composer, no approve, reject, Stop or Cancel", async () => {
    const w = await sharedWork("vera", "viewer");
    const page = await loggedIn(undefined, "vera");
    expect(await page.locator(".who").innerText()).toContain("(viewer)");
    await openSession(page, w.sessionId);
    await page.locator(`.approval[data-approval="${w.destructive}"] pre.cmd`).waitFor();
    await page.locator(`.plan[data-approval="${w.plan}"] .steps li`).first().waitFor();
    await page.locator('[data-tool="request_execution"] .chip.st-running').waitFor();
    await page.locator('[data-tool="request_execution"] summary').click();
    await page.locator(".assent.on").waitFor();
    await shot(page, "viewer");
    expect(await page.locator(".composer").count()).toBe(0);
    expect(await page.locator("button.approve, button.reject, button.stop, input.confirm-input").count()).toBe(0);
    expect(await page.locator('[data-tool="request_execution"] button:text("Cancel")').count()).toBe(0);
    expect(await page.locator("text=+ New").count()).toBe(0);
    expect(await page.locator(".decided.st-pending").count()).toBe(2);
  }, 60_000);

  it("shows an operator chat, Stop and Approve, but no way to confirm a destructive step", async () => {
    const w = await sharedWork("otto", "operator");
    const page = await loggedIn(undefined, "otto");
    await openSession(page, w.sessionId);
    const destructive = page.locator(`.approval[data-approval="${w.destructive}"]`);
    await destructive.locator("pre.cmd").waitFor();
    expect(await page.locator(".composer textarea").count()).toBe(1);
    expect(await page.locator("button.stop").count()).toBe(1);
    expect(await page.locator(`.plan[data-approval="${w.plan}"] button.approve`).count()).toBe(1);
    expect(await destructive.locator("button.reject").count()).toBe(1);
    expect(await destructive.locator("button.approve, input.confirm-input").count()).toBe(0);
    expect(await destructive.innerText()).toContain("only an admin can confirm it");
    await shot(page, "operator-destructive");
  }, 60_000);

  it("HTML in model text and command output is shown as text and never runs", async () => {
    const s = await makeSession(t.db.kysely, { title: "Hostile output" });
    const turn = await makeTurn(t.db.kysely, { session_id: s.id });
    await appendEvents(t.db.kysely, s.id, turn.id, [
      ["turn_started", { turnId: turn.id, kind: "operator" }],
      ["text_delta", { text: `The banner says ${XSS} and **bold ${XSS}**\n\n\`\`\`\n${XSS}\n\`\`\`\n[link](javascript:alert(1))` }],
      ["tool_use", { id: "tu9", name: "run", input: { target: "pve1", command: `echo '${XSS}'` } }],
      ["tool_result", { toolUseId: "tu9", isError: false, content: [{ type: "text", text: `stdout:\n${XSS}\nexit code 0` }] }],
    ]);
    const page = await loggedIn();
    await openSession(page, s.id);
    await page.locator('[data-tool="run"] summary').click();
    await page.locator('[data-tool="run"] pre.output').waitFor();
    expect(await page.locator(".scroll img").count()).toBe(0);
    expect(await page.locator('.scroll a[href^="javascript"]').count()).toBe(0);
    // The title is the page's own (issue 16 makes it say what waits), never the injected <title>.
    expect(await page.title()).toMatch(/^(\(\d+\) )?Nomos( — [a-z ]+)?$/);
    expect(await page.locator(".md p").first().innerText()).toContain(XSS);
    expect(await page.locator('[data-tool="run"] pre.output').innerText()).toContain(XSS);
    await shot(page, "html-as-text");
  });
});

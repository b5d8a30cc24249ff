// Consent that means what the operator said (issue 13), through the agent
// with the real SDK against the Messages API double, on real PostgreSQL:
// typed confirmation in chat, Reject by button and in chat, forward words
// resuming an unfinished plan, "Approve this step" (continue: false), and
// report_outcome ending the plan and its window.
import { describe, expect, it } from "vitest";
import { agentTurn } from "../src/agent/loop.js";
import { approvalDecide } from "../src/approvals/decide.js";
import { approvalsSettledNotes } from "../src/approvals/settled-notes.js";
import { assentWindowCurrent } from "../src/assent/window.js";
import { carryPendingResults } from "../src/continuation/carry.js";
import { ContinuationDispatcher } from "../src/continuation/dispatcher.js";
import { createLogger } from "../src/log/logger.js";
import { scriptedPolicy } from "../src/model-double/messages-double.js";
import { Turns } from "../src/turns/turns.js";
import { useAgentHarness } from "./helpers/agent-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeNodeTarget } from "./helpers/db-executions-port.js";
import { finishExecution, makeRunningExecution, makeSession } from "./helpers/factories.js";

const t = useTestDatabase();
const h = useAgentHarness(t);
const log = createLogger({ level: "silent" });
const db = () => t.db.kysely;

/** The agent asks for one command with `run`; returns nothing (the card is pending or it ran). */
async function agentAsks(sessionId: string, target: string, command: string) {
  h.double.setPolicy(
    scriptedPolicy([
      { content: [{ type: "tool_use", name: "run", input: { target, command } }] },
      { content: [{ type: "text", text: "Waiting for your approval." }] },
    ]),
  );
  await h.turns.chat(sessionId, `please: ${command}`, "operator:alice", { mayConfirmDestructive: true });
  await h.turns.idle(sessionId);
}

/** The agent proposes a plan; returns its approval and plan ids. */
async function agentProposes(sessionId: string, steps: { title: string; target?: string; command?: string; destructive?: boolean }[]) {
  h.double.setPolicy(
    scriptedPolicy([
      { content: [{ type: "tool_use", name: "propose_plan", input: { goal: "nginx serves the site", steps } }] },
      { content: [{ type: "text", text: "Here is the plan." }] },
    ]),
  );
  await h.turns.chat(sessionId, "set up nginx", "operator:alice", { mayConfirmDestructive: true });
  await h.turns.idle(sessionId);
  return db()
    .selectFrom("approvals")
    .select(["id", "plan_id"])
    .where("session_id", "=", sessionId)
    .where("kind", "=", "plan")
    .orderBy("created_at", "desc")
    .executeTakeFirstOrThrow();
}

const approvalOf = (id: string) => db().selectFrom("approvals").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
const pendingOf = (sessionId: string) =>
  db().selectFrom("approvals").selectAll().where("session_id", "=", sessionId).where("status", "=", "pending").execute();
const windowsOf = (sessionId: string) =>
  db().selectFrom("assent_windows").selectAll().where("session_id", "=", sessionId).orderBy("opened_at").execute();
/** The text of the last user-role message the model was sent. */
const lastUserText = () =>
  (h.double.requests.at(-1)!.messages.at(-1)!.content as Array<{ type: string; text?: string }>).map((b) => b.text ?? "").join("\n");

describe("typed confirmation in chat", () => {
  it("a message that mentions the phrase inside a negation, question or revocation approves nothing, and the agent is told", async () => {
    await makeNodeTarget(db(), "pve1");
    const s = await makeSession(db());
    await agentAsks(s.id, "pve1", "pct destroy 105");
    const [card] = await pendingOf(s.id);
    expect(card!.confirmation_phrase).toBe("destroy 105");

    for (const text of [
      "No! Do NOT destroy 105, that is the production database.",
      "why would you destroy 105?",
      "stop, do not destroy 105",
    ]) {
      h.double.setPolicy(() => ({ content: [{ type: "text", text: "Understood, I will not." }] }));
      await h.turns.chat(s.id, text, "operator:alice", { mayConfirmDestructive: true });
      await h.turns.idle(s.id);
      expect(await approvalOf(card!.id)).toMatchObject({ status: "pending", decided_at: null });
      expect(lastUserText()).toContain("the operator mentioned 'destroy 105' but did not confirm it");
    }
    const execution = await db().selectFrom("executions").selectAll().where("id", "=", card!.execution_id!).executeTakeFirstOrThrow();
    expect(execution.status).toBe("pending_approval");
    expect((await assentWindowCurrent(db(), { sessionId: s.id })).open).toBe(false);
    expect(await windowsOf(s.id)).toEqual([]);

    h.double.setPolicy(() => ({ content: [{ type: "text", text: "Destroying it." }] }));
    await h.turns.chat(s.id, "Yes, destroy 105.", "operator:alice", { mayConfirmDestructive: true });
    await h.turns.idle(s.id);
    expect(await approvalOf(card!.id)).toMatchObject({ status: "approved", decided_via: "chat", decided_by: "operator:alice" });
    expect(lastUserText()).toContain(`The operator approved execution ${card!.execution_id}`);
  });
});

describe("Reject", () => {
  it("by button leaves a closed window closed and an open one unextended, audited; the agent hears it with nobody typing", async () => {
    await makeNodeTarget(db(), "pve1").catch(() => {});
    const s = await makeSession(db());
    // The decision reaches the agent through the dispatcher, as main.ts wires it.
    const dispatcher = new ContinuationDispatcher({
      db: t.db,
      log,
      owner: "test",
      maxContinuations: 10,
      startTurn: ({ sessionId, notes, executionIds, reason }) => h.turns.chatWith(sessionId, notes, { executionIds, reason }),
    });
    const deps = {
      ...h.approvalDeps,
      onApprovalsSettled: async (sessionId: string) => dispatcher.poke(sessionId, await approvalsSettledNotes(db(), { sessionId })),
    };

    // Closed stays closed.
    await agentAsks(s.id, "pve1", "apt-get install -y nginx");
    const [first] = await pendingOf(s.id);
    h.double.setPolicy(() => ({ content: [{ type: "text", text: "I will propose something else." }] }));
    await approvalDecide(deps, {
      approvalId: first!.id,
      decision: "reject",
      actor: "operator:alice",
      via: "button",
      mayConfirmDestructive: true,
    });
    await dispatcher.idle();
    await h.turns.idle(s.id);
    expect(await windowsOf(s.id)).toEqual([]);
    expect(lastUserText()).toContain(`The operator (alice) rejected execution ${first!.execution_id}`);
    expect(lastUserText()).toContain("rejected by the operator");
    const turns = await db().selectFrom("turns").select(["kind", "status"]).where("session_id", "=", s.id).orderBy("created_at").execute();
    expect(turns.at(-1)).toEqual({ kind: "continuation", status: "completed" });

    // Open is not extended: approve one (opens), reject the next (leaves it).
    await agentAsks(s.id, "pve1", "apt-get install -y curl");
    const [second] = await pendingOf(s.id);
    await approvalDecide(deps, {
      approvalId: second!.id,
      decision: "approve",
      actor: "operator:alice",
      via: "button",
      mayConfirmDestructive: true,
    });
    await dispatcher.idle();
    await h.turns.idle(s.id);
    const opened = (await windowsOf(s.id))[0]!;
    await agentAsks(s.id, "pve1", "pct destroy 106");
    const [third] = await pendingOf(s.id);
    await approvalDecide(deps, {
      approvalId: third!.id,
      decision: "reject",
      actor: "operator:alice",
      via: "button",
      mayConfirmDestructive: true,
    });
    await dispatcher.idle();
    await h.turns.idle(s.id);
    // (Its continuation counter moves: the rejection reached the agent as a continuation under it.)
    const after = await windowsOf(s.id);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ id: opened.id, expires_at: opened.expires_at, closed_at: null, scope_targets: opened.scope_targets });

    // Audited: the rejection names the operator, and its transaction touched no window.
    const audit = await db()
      .selectFrom("audit.events")
      .select(["txid", "actor", "table_name", "operation"])
      .where("row_key", "=", third!.id)
      .where("operation", "=", "UPDATE")
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ actor: "operator:alice", table_name: "approvals" });
    const sameTx = await db().selectFrom("audit.events").select("table_name").where("txid", "=", audit.txid).execute();
    expect(sameTx.map((r) => r.table_name)).not.toContain("assent_windows");
    await dispatcher.stop();
  });

  it("in chat rejects the pending approvals and leaves the window as it was", async () => {
    const s = await makeSession(db());
    await agentAsks(s.id, "pve1", "systemctl restart nginx");
    const [card] = await pendingOf(s.id);
    h.double.setPolicy(() => ({ content: [{ type: "text", text: "OK, not restarting." }] }));
    await h.turns.chat(s.id, "reject", "operator:alice", { mayConfirmDestructive: true });
    await h.turns.idle(s.id);
    expect(await approvalOf(card!.id)).toMatchObject({ status: "rejected", decided_via: "chat", decided_by: "operator:alice" });
    expect(await windowsOf(s.id)).toEqual([]);
    expect(lastUserText()).toContain(`The operator rejected execution ${card!.execution_id}`);
    expect(lastUserText()).toContain("rejected by the operator");
  });

  it("rejecting a plan closes the window that was opened for it", async () => {
    const s = await makeSession(db());
    const plan = await agentProposes(s.id, [{ title: "install", target: "pve1", command: "apt-get install -y nginx" }]);
    await db()
      .insertInto("assent_windows")
      .values({ session_id: s.id, plan_id: plan.plan_id, opened_by: "operator:alice", expires_at: new Date(Date.now() + 600_000) })
      .execute();
    await approvalDecide(h.approvalDeps, {
      approvalId: plan.id,
      decision: "reject",
      actor: "operator:alice",
      via: "button",
      mayConfirmDestructive: true,
    });
    expect(await windowsOf(s.id)).toMatchObject([{ close_reason: "rejected" }]);
    expect((await db().selectFrom("plans").select("status").where("id", "=", plan.plan_id!).executeTakeFirstOrThrow()).status).toBe(
      "rejected",
    );
  });
});

describe("Approve this step (continue: false)", () => {
  it("approves the step and opens no window; the default opens one for the step's target", async () => {
    const s = await makeSession(db());
    await agentAsks(s.id, "pve1", "apt-get install -y htop");
    const [card] = await pendingOf(s.id);
    await approvalDecide(h.approvalDeps, {
      approvalId: card!.id,
      decision: "approve",
      continue: false,
      actor: "operator:alice",
      via: "button",
      mayConfirmDestructive: true,
    });
    expect(await approvalOf(card!.id)).toMatchObject({ status: "approved" });
    const e = await db()
      .selectFrom("executions")
      .select(["status", "mode"])
      .where("id", "=", card!.execution_id!)
      .executeTakeFirstOrThrow();
    expect(e).toEqual({ status: "approved", mode: "async" });
    expect(await windowsOf(s.id)).toEqual([]);
    expect((await approvalsSettledNotes(db(), { sessionId: s.id })).join("\n")).toContain("this step only");

    await agentAsks(s.id, "pve1", "apt-get install -y jq");
    const [next] = await pendingOf(s.id);
    await approvalDecide(h.approvalDeps, {
      approvalId: next!.id,
      decision: "approve",
      actor: "operator:alice",
      via: "button",
      mayConfirmDestructive: true,
    });
    expect(await assentWindowCurrent(db(), { sessionId: s.id })).toMatchObject({ open: true, scopeTargets: ["pve1"] });
  });
});

describe("forward words resume an approved, unfinished plan", () => {
  it("'continue' after expiry re-opens the plan's window and delivers waiting results exactly once", async () => {
    const s = await makeSession(db());
    // Turns with the carry of waiting results, as main.ts wires it.
    const turns = new Turns({
      db: db(),
      runTurn: (ctx) => agentTurn(h.agentDeps, ctx),
      approvals: h.approvalDeps,
      log,
      owner: "test-resume",
      flushMs: 5,
      carryNotes: carryPendingResults({ db: t.db, owner: "test-resume" }),
    });
    const plan = await agentProposes(s.id, [
      { title: "install", target: "pve1", command: "apt-get install -y nginx" },
      { title: "remove old", target: "pve1", command: "pct destroy 107", destructive: true },
    ]);
    await approvalDecide(h.approvalDeps, {
      approvalId: plan.id,
      decision: "approve",
      actor: "operator:alice",
      via: "button",
      mayConfirmDestructive: true,
    });
    // The window lapses while a step is still running; the step then finishes.
    const running = await makeRunningExecution(db(), s.id, { target: "pve1", command: "apt-get install -y nginx" });
    await db()
      .updateTable("assent_windows")
      .set({ opened_at: new Date(Date.now() - 7_200_000), expires_at: new Date(Date.now() - 60_000) })
      .where("session_id", "=", s.id)
      .execute();
    await finishExecution(db(), running.id, { stdout: "nginx installed\n" });
    expect((await assentWindowCurrent(db(), { sessionId: s.id })).open).toBe(false);

    h.double.setPolicy(() => ({ content: [{ type: "text", text: "Carrying on." }] }));
    await turns.chat(s.id, "continue", "operator:alice", { mayConfirmDestructive: true });
    await turns.idle(s.id);
    const window = await assentWindowCurrent(db(), { sessionId: s.id });
    expect(window).toMatchObject({ open: true, planId: plan.plan_id, scopeTargets: ["pve1"] });
    expect(window.preauthorized).toEqual([{ target: "pve1", command: "pct destroy 107" }]);
    const told = lastUserText();
    expect(told).toContain(`resumed plan ${plan.plan_id}`);
    expect(told).toContain(`execution ${running.id} completed`);
    // The transcript says so too.
    const notes = await db()
      .selectFrom("messages")
      .select("content")
      .where("session_id", "=", s.id)
      .where("kind", "=", "system_note")
      .execute();
    expect(JSON.stringify(notes)).toContain("resumed plan");

    // Delivered once: the next message carries nothing, and re-opens nothing (the window is open).
    await turns.chat(s.id, "continue", "operator:alice", { mayConfirmDestructive: true });
    await turns.idle(s.id);
    expect(lastUserText()).not.toContain(`execution ${running.id}`);
    expect(await windowsOf(s.id)).toHaveLength(2);
    await turns.stop();
  });

  it("with nothing to resume, forward words open nothing", async () => {
    const s = await makeSession(db());
    h.double.setPolicy(() => ({ content: [{ type: "text", text: "There is nothing to continue." }] }));
    await h.turns.chat(s.id, "go ahead", "operator:alice", { mayConfirmDestructive: true });
    await h.turns.idle(s.id);
    expect(await windowsOf(s.id)).toEqual([]);
  });
});

describe("report_outcome", () => {
  it("records the plan's outcome, closes the window with that reason, emits plan_finished; 'continue' then resumes nothing", async () => {
    const s = await makeSession(db());
    const plan = await agentProposes(s.id, [{ title: "install", target: "pve1", command: "apt-get install -y nginx" }]);
    await approvalDecide(h.approvalDeps, {
      approvalId: plan.id,
      decision: "approve",
      actor: "operator:alice",
      via: "button",
      mayConfirmDestructive: true,
    });
    expect((await assentWindowCurrent(db(), { sessionId: s.id })).open).toBe(true);

    h.double.setPolicy(
      scriptedPolicy([
        {
          content: [{ type: "tool_use", name: "report_outcome", input: { outcome: "verified", summary: "nginx answers 200 on :80" } }],
        },
        { content: [{ type: "text", text: "Done: nginx answers." }] },
      ]),
    );
    await h.turns.chatWith(s.id, ["execution x completed (exit 0)"], { reason: "test" });
    await h.turns.idle(s.id);
    expect(await db().selectFrom("plans").selectAll().where("id", "=", plan.plan_id!).executeTakeFirstOrThrow()).toMatchObject({
      outcome: "verified",
      outcome_summary: "nginx answers 200 on :80",
      outcome_needs: null,
    });
    expect(await windowsOf(s.id)).toMatchObject([{ close_reason: "plan_verified" }]);
    const types = await h.eventTypes(s.id);
    expect(types).toContain("plan_finished");

    h.double.setPolicy(() => ({ content: [{ type: "text", text: "It is done already." }] }));
    await h.turns.chat(s.id, "continue", "operator:alice", { mayConfirmDestructive: true });
    await h.turns.idle(s.id);
    expect(await windowsOf(s.id)).toHaveLength(1);
  });

  it("blocked: records what the agent needs; with no plan and no window it records nothing and says so", async () => {
    const s = await makeSession(db());
    h.double.setPolicy(
      scriptedPolicy([
        { content: [{ type: "tool_use", name: "report_outcome", input: { outcome: "blocked", summary: "no", needs: "a password" } }] },
        { content: [{ type: "text", text: "Nothing to report." }] },
      ]),
    );
    await h.turns.chat(s.id, "how is it going", "operator:alice", { mayConfirmDestructive: true });
    await h.turns.idle(s.id);
    const result = (h.double.requests.at(-1)!.messages.at(-1)!.content as Array<{ type: string; content: string }>)[0]!;
    expect(result.content).toContain("nothing was recorded");
    expect(await h.eventTypes(s.id)).not.toContain("plan_finished");
  });
});

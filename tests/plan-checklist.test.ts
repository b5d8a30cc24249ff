// The plan as a live checklist (issue 16): update_plan and the `step` of
// run / request_execution, through the agent with the real SDK against the
// Messages API double, on real PostgreSQL: statuses change in plan_steps,
// each change is announced as plan_updated with the whole checklist, and
// step numbers or changes the plan cannot take are clear tool errors that
// change nothing.
import { beforeAll, describe, expect, it } from "vitest";
import { approvalDecide } from "../src/approvals/decide.js";
import type { PlanChecklistView } from "../src/events/contract.js";
import { sessionEventsAfter } from "../src/events/session-events.js";
import { type DoubleReply, scriptedPolicy } from "../src/model-double/messages-double.js";
import { useAgentHarness } from "./helpers/agent-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeNodeTarget } from "./helpers/db-executions-port.js";
import { makeSession } from "./helpers/factories.js";

const t = useTestDatabase();
const h = useAgentHarness(t);
const db = () => t.db.kysely;

beforeAll(async () => {
  await makeNodeTarget(db(), "pve1");
});

const STEPS = [
  { title: "Install nginx", target: "pve1", command: "apt-get install -y nginx" },
  { title: "Check the version", target: "pve1", command: "nginx -v" },
  { title: "Open the firewall", target: "pve1" },
];

/** A session whose plan (STEPS) the operator approved by button: the window is open for it. */
async function approvedPlan(): Promise<{ sessionId: string; planId: string }> {
  const s = await makeSession(db());
  h.double.setPolicy(
    scriptedPolicy([
      { content: [{ type: "tool_use", name: "propose_plan", input: { goal: "nginx serves the site", steps: STEPS } }] },
      { content: [{ type: "text", text: "Here is the plan." }] },
    ]),
  );
  await h.turns.chat(s.id, "set up nginx", "operator:alice", { mayConfirmDestructive: true });
  await h.turns.idle(s.id);
  const approval = await db()
    .selectFrom("approvals")
    .select(["id", "plan_id"])
    .where("session_id", "=", s.id)
    .where("kind", "=", "plan")
    .executeTakeFirstOrThrow();
  await approvalDecide(h.approvalDeps, {
    approvalId: approval.id,
    decision: "approve",
    actor: "operator:alice",
    via: "button",
    mayConfirmDestructive: true,
  });
  return { sessionId: s.id, planId: approval.plan_id! };
}

/** One operator turn in which the model makes these replies in order. */
async function turn(sessionId: string, replies: DoubleReply[]): Promise<void> {
  h.double.setPolicy(scriptedPolicy(replies));
  await h.turns.chat(sessionId, "carry on", "operator:alice", { mayConfirmDestructive: true });
  await h.turns.idle(sessionId);
}

const statuses = async (planId: string) =>
  (await db().selectFrom("plan_steps").select(["position", "status"]).where("plan_id", "=", planId).orderBy("position").execute()).map(
    (r) => r.status,
  );

const planUpdates = async (sessionId: string) =>
  (await sessionEventsAfter(db(), { sessionId, afterId: "0", limit: 10_000 }))
    .filter((e) => e.type === "plan_updated")
    .map((e) => e.data as PlanChecklistView);

const toolResults = async (sessionId: string) =>
  (await sessionEventsAfter(db(), { sessionId, afterId: "0", limit: 10_000 }))
    .filter((e) => e.type === "tool_result")
    .map((e) => e.data as { isError: boolean; content: string });

describe("update_plan and the steps commands serve", () => {
  it("a proposed plan has a checklist with every step pending", async () => {
    const { planId } = await approvedPlan();
    expect(await statuses(planId)).toEqual(["pending", "pending", "pending"]);
  });

  it("marks steps as the agent goes, announcing the whole checklist on every change", async () => {
    const { sessionId, planId } = await approvedPlan();
    await turn(sessionId, [
      { content: [{ type: "tool_use", name: "update_plan", input: { steps: [{ step: 1, status: "running" }] } }] },
      { content: [{ type: "tool_use", name: "run", input: { target: "pve1", command: "nginx -v", step: 2 } }] },
      {
        content: [
          {
            type: "tool_use",
            name: "update_plan",
            input: {
              steps: [
                { step: 1, status: "done" },
                { step: 2, status: "done", note: "nginx/1.22" },
                { step: 3, status: "skipped", note: "no firewall on this node" },
              ],
            },
          },
        ],
      },
      { content: [{ type: "text", text: "All done." }] },
    ]);
    expect(await statuses(planId)).toEqual(["done", "done", "skipped"]);

    const updates = await planUpdates(sessionId);
    // 1 running; 2 running (run's step); then the three in one call.
    expect(updates.map((u) => u.steps.map((s) => s.status))).toEqual([
      ["running", "pending", "pending"],
      ["running", "running", "pending"],
      ["done", "done", "skipped"],
    ]);
    const last = updates.at(-1)!;
    expect(last).toMatchObject({ planId, goal: "nginx serves the site", status: "approved", outcome: null });
    expect(last.steps.map((s) => [s.step, s.title, s.note])).toEqual([
      [1, "Install nginx", null],
      [2, "Check the version", "nginx/1.22"],
      [3, "Open the firewall", "no firewall on this node"],
    ]);

    // The execution records the step it served; the audit trail has every change.
    const e = await db()
      .selectFrom("executions")
      .select(["plan_step", "plan_id"])
      .where("session_id", "=", sessionId)
      .executeTakeFirstOrThrow();
    expect(e).toEqual({ plan_step: 2, plan_id: planId });
    const audited = await db()
      .selectFrom("audit.events")
      .select("actor")
      .where("table_name", "=", "plan_steps")
      .where("session_id", "=", sessionId)
      .where("operation", "=", "UPDATE")
      .execute();
    expect(audited.length).toBe(5);
    expect(new Set(audited.map((a) => a.actor))).toEqual(new Set([`agent:${sessionId}`]));
  });

  it("refuses step numbers the plan does not have, and changes the plan cannot take, changing nothing", async () => {
    const { sessionId, planId } = await approvedPlan();
    await turn(sessionId, [
      {
        content: [
          {
            type: "tool_use",
            name: "update_plan",
            input: {
              steps: [
                { step: 1, status: "done" },
                { step: 9, status: "done" },
              ],
            },
          },
        ],
      },
      { content: [{ type: "tool_use", name: "update_plan", input: { steps: [{ step: 0, status: "done" }] } }] },
      { content: [{ type: "tool_use", name: "run", input: { target: "pve1", command: "nginx -v", step: 7 } }] },
      { content: [{ type: "tool_use", name: "update_plan", input: { steps: [{ step: 2, status: "done" }] } }] },
      { content: [{ type: "tool_use", name: "update_plan", input: { steps: [{ step: 2, status: "running" }] } }] },
      { content: [{ type: "text", text: "Sorry." }] },
    ]);
    const results = (await toolResults(sessionId)).slice(1); // after propose_plan's
    expect(results.map((r) => r.isError)).toEqual([true, true, true, false, true]);
    expect(results[0]!.content).toMatch(
      /^update_plan: step 9 is not a step of plan \S+: its steps are numbered 1 to 3; nothing was changed$/,
    );
    expect(results[1]!.content).toMatch(/steps\.0\.step: steps are numbered from 1/);
    expect(results[2]!.content).toBe("step: the approved plan has steps 1 to 3; there is no step 7");
    expect(results[4]!.content).toMatch(/step 2 is done; it cannot become running \(done and skipped steps are final/);
    // Step 1 was not marked by the refused call; no command ran for step 7.
    expect(await statuses(planId)).toEqual(["pending", "done", "pending"]);
    expect(await db().selectFrom("executions").select("id").where("session_id", "=", sessionId).execute()).toEqual([]);
    expect((await planUpdates(sessionId)).length).toBe(1);
  });

  it("without an approved plan, update_plan says so and a `step` is refused", async () => {
    const s = await makeSession(db());
    await turn(s.id, [
      { content: [{ type: "tool_use", name: "update_plan", input: { steps: [{ step: 1, status: "done" }] } }] },
      { content: [{ type: "tool_use", name: "run", input: { target: "pve1", command: "uptime", step: 1 } }] },
      { content: [{ type: "text", text: "No plan." }] },
    ]);
    const results = await toolResults(s.id);
    expect(results.map((r) => [r.isError, r.content])).toEqual([
      [true, "update_plan: this session has no approved, unfinished plan; nothing was changed"],
      [true, "step: this session has no approved, unfinished plan; leave `step` out or propose a plan"],
    ]);
  });

  it("report_outcome freezes the checklist and plan_finished carries the outcome and the plan's usage", async () => {
    const { sessionId, planId } = await approvedPlan();
    await turn(sessionId, [
      { content: [{ type: "tool_use", name: "update_plan", input: { steps: [1, 2, 3].map((step) => ({ step, status: "done" })) } }] },
      { content: [{ type: "tool_use", name: "report_outcome", input: { outcome: "verified", summary: "nginx answers" } }] },
      { content: [{ type: "tool_use", name: "update_plan", input: { steps: [{ step: 1, status: "failed" }] } }] },
      { content: [{ type: "text", text: "Done." }] },
    ]);
    const events = await sessionEventsAfter(db(), { sessionId, afterId: "0", limit: 10_000 });
    const finished = events.find((e) => e.type === "plan_finished")!.data as {
      outcome: string;
      windowClosed: boolean;
      usage: { inputTokens: number; outputTokens: number };
    };
    expect(finished).toMatchObject({ outcome: "verified", windowClosed: true });
    expect(finished.usage.inputTokens).toBeGreaterThan(0);
    expect(finished.usage.outputTokens).toBeGreaterThan(0);
    const results = await toolResults(sessionId);
    expect(results.at(-1)).toMatchObject({ isError: true, content: expect.stringMatching(/no approved, unfinished plan/) });
    expect(await statuses(planId)).toEqual(["done", "done", "done"]);
  });
});

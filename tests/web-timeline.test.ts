// The page's state machine (src/web/client/timeline.ts), without a browser:
// events apply once, text streams into one part, results find their tool
// cards, approvals and executions update in place, and operator messages
// sort before the turns they started.
import { describe, expect, it } from "vitest";
import { type ApiEvent, applyEvent, emptyTimeline, entries, type Timeline } from "../src/web/client/timeline.js";
import { toolLabel } from "../src/web/client/tool-labels.js";

let n = 0;
const ev = (type: ApiEvent["type"], data: Record<string, unknown>, turnId: string | null = "t1"): ApiEvent => {
  n += 1;
  return { id: String(n), type, turnId, createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(), data };
};
const run = (events: ApiEvent[], from: Timeline = emptyTimeline()) => events.reduce(applyEvent, from);

describe("timeline", () => {
  it("applies each event id once: a resent event never duplicates text", () => {
    const a = ev("text_delta", { text: "Hel" });
    const b = ev("text_delta", { text: "lo" });
    const t = run([a, b, a, b]);
    expect(t.turns[0]!.parts).toEqual([{ type: "text", text: "Hello" }]);
    expect(t.lastEventId).toBe(b.id);
  });

  it("builds a turn: start, text, tool card with its result, error, finish", () => {
    const t = run([
      ev("turn_started", { turnId: "t1", kind: "continuation", executionIds: ["x1"] }),
      ev("text_delta", { text: "Checking." }),
      ev("tool_use", { id: "u1", name: "run", input: { target: "pve1", command: "uptime" } }),
      ev("tool_result", { toolUseId: "u1", isError: false, content: [{ type: "text", text: "up 3 days" }], executionId: "x2" }),
      ev("text_delta", { text: "Fine." }),
      ev("turn_finished", { turnId: "t1", status: "completed" }),
    ]);
    const turn = t.turns[0]!;
    expect(turn).toMatchObject({ kind: "continuation", executionIds: ["x1"], status: "completed" });
    expect(turn.parts).toEqual([
      { type: "text", text: "Checking." },
      {
        type: "tool",
        id: "u1",
        name: "run",
        input: { target: "pve1", command: "uptime" },
        result: { isError: false, text: "up 3 days", executionId: "x2" },
        // When the call started and when its result came: the card's elapsed time.
        at: "2026-01-01T00:00:05.000Z",
        doneAt: "2026-01-01T00:00:06.000Z",
      },
      { type: "text", text: "Fine." },
    ]);
  });

  it("shows a failed turn's message (turn_failed)", () => {
    const t = run([
      ev("turn_started", { turnId: "t1", kind: "operator" }),
      ev("turn_failed", { message: "the model is unavailable" }),
      ev("turn_finished", { turnId: "t1", status: "failed" }),
    ]);
    expect(t.turns[0]!.parts).toEqual([{ type: "error", message: "the model is unavailable" }]);
    expect(t.turns[0]!.status).toBe("failed");
  });

  it("tracks approvals and executions from camelCase or snake_case rows, and the assent window", () => {
    const t = run([
      ev("approval_requested", {
        approval: { id: "a1", kind: "execution", status: "pending", execution_id: "x1", confirmation_phrase: "destroy 104" },
      }),
      ev("approval_decided", { approval: { id: "a1", status: "approved", decidedBy: "operator:alice" } }),
      ev("execution_updated", { execution: { id: "x1", status: "running", exit_code: null, target: "pve1" } }),
      ev("execution_updated", { execution: { id: "x1", status: "completed", exitCode: 0, target: "pve1" } }),
      ev("assent_changed", { open: true, expiresAt: "2026-01-01T00:30:00.000Z" }, null),
    ]);
    expect(t.approvals.a1).toMatchObject({
      status: "approved",
      decidedBy: "operator:alice",
      confirmationPhrase: "destroy 104",
      executionId: "x1",
    });
    expect(t.turns[0]!.parts).toEqual([{ type: "approval", approvalId: "a1" }]);
    expect(t.executions.x1).toMatchObject({ status: "completed", exitCode: 0 });
    expect(t.assent).toEqual({ open: true, expiresAt: "2026-01-01T00:30:00.000Z" });
  });

  it("shows a plan's approval on the plan card, not as a second card", () => {
    const t = run([
      ev("plan_proposed", { planId: "p1", approvalId: "a9", goal: "nginx", steps: [{ title: "install" }] }),
      ev("approval_requested", { approval: { id: "a9", kind: "plan", status: "pending", planId: "p1" } }),
    ]);
    expect(t.turns[0]!.parts.map((p) => p.type)).toEqual(["plan"]);
  });

  it("shows a plan's outcome where the agent reported it, and keeps the window's scope", () => {
    const t = run([
      ev("assent_changed", { open: true, expiresAt: "2026-01-01T00:30:00.000Z", scopeTargets: ["pve1", "web1"] }),
      ev("plan_finished", { planId: "p1", outcome: "blocked", summary: "port 80 is taken", needs: "which port to use" }),
      ev("assent_changed", { open: false, expiresAt: null, reason: "plan_blocked" }),
    ]);
    expect(t.turns[0]!.parts).toEqual([{ type: "outcome", outcome: "blocked", summary: "port 80 is taken", needs: "which port to use" }]);
    expect(t.assent).toEqual({ open: false, expiresAt: null });
    expect(run([ev("assent_changed", { open: true, expiresAt: null, scopeTargets: ["pve1"] })]).assent.scopeTargets).toEqual(["pve1"]);
  });

  it("orders operator messages before the turn they started, and merges the echo of a message sent here", () => {
    const start = ev("turn_started", { turnId: "t7", kind: "operator" }, "t7");
    const base = emptyTimeline();
    base.operator = [{ key: "local1", text: "hi", at: new Date(Date.parse(start.createdAt) - 1).toISOString(), local: true }];
    const t = run([start, ev("message", { message: { id: "42", kind: "operator", content: [{ type: "text", text: "hi" }] } }, "t7")], base);
    expect(t.operator).toHaveLength(1);
    expect(t.operator[0]!.key).toBe("m42");
    expect(entries(t).map((e) => e.kind)).toEqual(["operator", "turn"]);
  });
});

describe("tool card labels", () => {
  const tool = (name: string, input: Record<string, unknown>, done = true) => ({
    type: "tool" as const,
    id: "t1",
    name,
    input,
    ...(done ? { result: { isError: false, text: "ok" } } : {}),
  });

  it("say which checklist steps update_plan marked, in words", () => {
    expect(toolLabel(tool("update_plan", { steps: [{ step: 3, status: "done" }] })).text).toBe("Marked step 3 done");
    expect(
      toolLabel(
        tool("update_plan", {
          steps: [
            { step: 2, status: "done" },
            { step: 3, status: "done" },
            { step: 4, status: "running" },
          ],
        }),
      ).text,
    ).toBe("Marked steps 2 and 3 done, step 4 running");
    expect(toolLabel(tool("update_plan", { steps: [{ step: 5, status: "failed" }] }, false)).text).toBe("Marking step 5 failed");
  });

  it("name a tool this build does not know in words", () => {
    expect(toolLabel(tool("restart_the_world", {})).text).toBe("Restart the world");
  });
});

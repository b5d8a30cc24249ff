// The propose_plan tool (src/agent/tools/propose-plan.ts): the plan, its
// plan_proposed event and its approval commit together, plan_proposed first.
import { describe, expect, it } from "vitest";
import { toolRun } from "../src/agent/tool-runner.js";
import { sessionEventsAfter } from "../src/events/session-events.js";
import { useTestDatabase } from "./helpers/database.js";
import { toolCallSetup } from "./helpers/tool-call.js";

const t = useTestDatabase();

describe("propose_plan", () => {
  it("records the plan, announces it and asks for its approval, in that order", async () => {
    const { deps, ctx } = await toolCallSetup(t);
    const steps = [{ title: "install nginx", target: "pve1", command: "apt-get install -y nginx" }];
    const out = await toolRun(deps, ctx, "propose_plan", { goal: "nginx serves on :80", steps });
    expect(out).toMatchObject({
      isError: false,
      readOnly: false,
      content: expect.stringMatching(/^plan \S+ proposed; it awaits the operator's approval/),
    });
    const events = await sessionEventsAfter(t.db.kysely, { sessionId: ctx.sessionId, afterId: "0" });
    expect(events.map((e) => e.type)).toEqual(["plan_proposed", "approval_requested"]);
    const [proposed, requested] = events;
    expect(proposed?.type === "plan_proposed" && proposed.data).toMatchObject({ goal: "nginx serves on :80", steps });
    expect(proposed?.type === "plan_proposed" && requested?.type === "approval_requested" && proposed.data.approvalId).toBe(
      requested?.type === "approval_requested" && requested.data.approval.id,
    );
  });
});

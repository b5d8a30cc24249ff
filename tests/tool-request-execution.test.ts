// The request_execution tool (src/agent/tools/request-execution.ts): gated
// like run, and never run in this turn.
import { describe, expect, it } from "vitest";
import { toolRun } from "../src/agent/tool-runner.js";
import { useTestDatabase } from "./helpers/database.js";
import { toolCallSetup } from "./helpers/tool-call.js";

const t = useTestDatabase();

describe("request_execution", () => {
  it("outside a window queues nothing to run: a pending approval, with the step's description kept", async () => {
    const { deps, ctx } = await toolCallSetup(t);
    const out = await toolRun(deps, ctx, "request_execution", {
      target: "pve1",
      command: "apt-get install -y nginx",
      description: "install nginx",
    });
    expect(out).toMatchObject({ isError: false, content: expect.stringMatching(/^Not run: .* awaits the operator's approval/) });
    const e = await t.db.kysely.selectFrom("executions").selectAll().where("id", "=", out.executionId!).executeTakeFirstOrThrow();
    expect(e).toMatchObject({ status: "pending_approval", mode: "async", description: "install nginx" });
    expect(deps.executions.inlineRuns).toEqual([]);
  });
});

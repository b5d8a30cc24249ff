// The run tool (src/agent/tools/run.ts): gated by the assent window.
import { describe, expect, it } from "vitest";
import { toolRun } from "../src/agent/tool-runner.js";
import { useTestDatabase } from "./helpers/database.js";
import { toolCallSetup } from "./helpers/tool-call.js";

const t = useTestDatabase();

describe("run", () => {
  it("run outside a window creates a pending approval and runs nothing", async () => {
    const { deps, ctx } = await toolCallSetup(t);
    const out = await toolRun(deps, ctx, "run", { target: "pve1", command: "apt-get install -y nginx" });
    expect(out).toMatchObject({
      isError: false,
      readOnly: false,
      content: expect.stringMatching(/^Not run: .* awaits the operator's approval/),
    });
    expect(deps.executions.inlineRuns).toEqual([]);
  });
});

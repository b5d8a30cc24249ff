// The report_outcome tool (src/agent/tools/report-outcome.ts).
import { describe, expect, it } from "vitest";
import { toolRun } from "../src/agent/tool-runner.js";
import { useTestDatabase } from "./helpers/database.js";
import { toolCallSetup } from "./helpers/tool-call.js";

const t = useTestDatabase();

describe("report_outcome", () => {
  it("report_outcome with no plan and no window records nothing and says so", async () => {
    const { deps, ctx } = await toolCallSetup(t);
    expect(await toolRun(deps, ctx, "report_outcome", { outcome: "verified", summary: "done" })).toMatchObject({
      isError: true,
      content: expect.stringMatching(/no approved, unfinished plan and no open assent window/),
    });
  });
});

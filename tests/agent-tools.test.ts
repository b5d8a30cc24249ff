// The agent's tool registry (src/agent/tools.ts) and the runner
// (src/agent/tool-runner.ts): names are DESIGN.md's, each definition the
// model sees is built from the schema that validates its input, and the
// model's mistakes come back as error results. Each tool has its own test,
// tests/tool-<name>.test.ts.
import { describe, expect, it } from "vitest";
import { toolRun } from "../src/agent/tool-runner.js";
import { TOOL_NAMES, TOOLS, toolDefinitions } from "../src/agent/tools.js";
import { useTestDatabase } from "./helpers/database.js";
import { toolCallSetup } from "./helpers/tool-call.js";

const t = useTestDatabase();

describe("the tool registry", () => {
  it("names DESIGN.md's tools, once each, in the order the model sees them", () => {
    expect(TOOL_NAMES).toEqual([
      "list_targets",
      "run",
      "request_execution",
      "get_execution_status",
      "pct_create",
      "propose_plan",
      "update_plan",
      "report_outcome",
    ]);
    expect(new Set(TOOL_NAMES).size).toBe(TOOL_NAMES.length);
  });
  it("describes each tool to the model with its own description and schema; the last one carries the cache mark", () => {
    const defs = toolDefinitions();
    expect(defs.map((d) => d.name)).toEqual(TOOL_NAMES);
    for (const [i, tool] of TOOLS.entries()) {
      expect(defs[i]!.description).toBe(tool.description);
      expect(defs[i]!.input_schema.type).toBe("object");
    }
    expect(defs.at(-1)!.cache_control).toEqual({ type: "ephemeral" });
    expect(toolDefinitions({ cache: false }).some((d) => d.cache_control)).toBe(false);
  });
  it("refuses an unknown tool and a bad input by name, without throwing", async () => {
    const { deps, ctx } = await toolCallSetup(t);
    expect(await toolRun(deps, ctx, "make_coffee", {})).toMatchObject({
      isError: true,
      content: expect.stringMatching(/unknown tool "make_coffee"; the tools are: list_targets, run/),
    });
    expect(await toolRun(deps, ctx, "run", { target: "pve1" })).toMatchObject({
      isError: true,
      content: expect.stringMatching(/^invalid input for run: command:/),
    });
  });
});

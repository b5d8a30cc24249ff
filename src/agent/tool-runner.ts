// Runs one tool call of the model: finds the tool in the registry
// (agent/tools.ts), validates its input with the tool's zod schema, runs it,
// and turns any failure into the text of an error tool_result. Invariants:
// - A bad input, an unknown tool or target, or a failure inside a tool
//   becomes an error tool_result naming what is wrong; the loop goes on.
//   Nothing here throws for the model's mistakes.
// - No tool opens or extends an assent window: command output and model
//   text are data. The only window changes are a container created by
//   pct_create joining the window it was created under, and report_outcome
//   closing it (assent/plan-outcome.ts).
// - What the model reads about an execution is executions/execution-note.ts's
//   text (capped, fenced and labelled as data).

import { type ToolCallContext, type ToolOutcome, type ToolRunDeps, toolFail } from "./tools/tool.js";
import { TOOL_NAMES, toolByName, toolInputParse } from "./tools.js";

export async function toolRun(deps: ToolRunDeps, ctx: ToolCallContext, name: string, input: unknown): Promise<ToolOutcome> {
  const tool = toolByName(name);
  if (!tool) return toolFail(`unknown tool "${name}"; the tools are: ${TOOL_NAMES.join(", ")}`);
  const parsed = toolInputParse(tool.name as (typeof TOOL_NAMES)[number], input);
  if (!parsed.ok) return toolFail(parsed.error);
  try {
    return await tool.run(deps, ctx, parsed.value);
  } catch (err) {
    if (ctx.signal.aborted) {
      const detail = name === "pct_create" ? `: ${(err as Error).message}` : "";
      return toolFail(`stopped by the operator before this tool finished${detail}`, false);
    }
    return toolFail(`${name} failed: ${(err as Error).message}`, false);
  }
}

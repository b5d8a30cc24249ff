// The agent's tool registry: the tools of DESIGN.md, one file each under
// agent/tools/, listed here in the order the model sees them. Adding a tool
// is its file, its test, a line here and a line in the SOUL. Invariants:
// - Names are part of the contract (DESIGN.md "Agent tools") and unique.
// - The definitions sent to the model (input_schema from zod 4's
//   z.toJSONSchema) and the validation of what the model sends back come
//   from the same schema, so the two cannot drift.
import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { unstorablePath } from "../db/storable.js";
import { getExecutionStatus } from "./tools/get-execution-status.js";
import { listTargets } from "./tools/list-targets.js";
import { pctCreate } from "./tools/pct-create.js";
import { proposePlan } from "./tools/propose-plan.js";
import { reportOutcome } from "./tools/report-outcome.js";
import { requestExecution } from "./tools/request-execution.js";
import { run } from "./tools/run.js";
import type { AgentTool } from "./tools/tool.js";
import { updatePlan } from "./tools/update-plan.js";

export const TOOLS = [listTargets, run, requestExecution, getExecutionStatus, pctCreate, proposePlan, updatePlan, reportOutcome] as const;

type RegisteredTool = (typeof TOOLS)[number];
export type ToolName = RegisteredTool["name"];
export type ToolOf<N extends ToolName> = Extract<RegisteredTool, { name: N }>;
export type ToolInput<N extends ToolName> = z.output<ToolOf<N>["inputSchema"]>;

export const TOOL_NAMES: ToolName[] = TOOLS.map((t) => t.name);

/** The tool of that name, or undefined for a name the model made up. */
export function toolByName(name: string): AgentTool | undefined {
  return (TOOLS as readonly AgentTool[]).find((t) => t.name === name);
}

// A tool's JSON schema never changes: converted once, not on every turn
// (z.toJSONSchema for every tool cost ~0.7 ms of CPU per model call).
const inputSchemas = new WeakMap<z.ZodType, Anthropic.Tool.InputSchema>();

function inputSchema(schema: z.ZodType): Anthropic.Tool.InputSchema {
  const known = inputSchemas.get(schema);
  if (known) return known;
  const json = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  delete json.$schema;
  inputSchemas.set(schema, json as Anthropic.Tool.InputSchema);
  return json as Anthropic.Tool.InputSchema;
}

/**
 * The tool definitions for messages.stream; the last carries cache_control,
 * caching the tools with the system prompt, unless caching is off (servers
 * that refuse the field: NOMOS_MODEL_CACHE=off).
 */
export function toolDefinitions(options: { cache?: boolean } = {}): Anthropic.Tool[] {
  const defs: Anthropic.Tool[] = TOOLS.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: inputSchema(t.inputSchema),
  }));
  if (options.cache !== false) defs[defs.length - 1] = { ...defs[defs.length - 1]!, cache_control: { type: "ephemeral" } };
  return defs;
}

/** Validates a tool input; the error names each bad field, for an error tool_result. */
export function toolInputParse<N extends ToolName>(
  name: N,
  input: unknown,
): { ok: true; value: ToolInput<N> } | { ok: false; error: string } {
  const tool = toolByName(name);
  if (!tool) return { ok: false, error: `unknown tool "${name}"` };
  const parsed = tool.inputSchema.safeParse(input ?? {});
  if (parsed.success) {
    // A NUL or lone surrogate can be neither run nor stored: refuse it by name.
    const bad = unstorablePath(parsed.data);
    if (!bad) return { ok: true, value: parsed.data as ToolInput<N> };
    return {
      ok: false,
      error: `invalid input for ${name}: ${bad.join(".") || "(input)"}: must not contain a NUL character or a lone UTF-16 surrogate`,
    };
  }
  const problems = parsed.error.issues.map((i) => {
    const field = i.path.length > 0 ? i.path.join(".") : "(input)";
    return `${field}: ${i.message}`;
  });
  return { ok: false, error: `invalid input for ${name}: ${problems.join("; ")}` };
}

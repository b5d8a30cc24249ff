// What an agent tool is: a name (part of DESIGN.md's contract), a zod input
// schema, a description for the model, and run. Each tool is one file in
// this folder built with toolDefine; agent/tools.ts lists them. Invariants:
// - The schema that describes a tool to the model is the schema that
//   validates what the model sends back (agent/tools.ts builds both from it),
//   so the two cannot drift; run receives the parsed input only.
// - run returns the model's mistakes (unknown target, nothing to report) as
//   an error outcome naming what is wrong; it throws only for failures, which
//   agent/tool-runner.ts turns into an error outcome too.
import type { Kysely } from "kysely";
import { z } from "zod";
import type { Database } from "../../db/schema.js";
import type { EventWriter } from "../../events/event-writer.js";
import type { ExecutionsPort } from "../../executions/executions-port.js";

export interface ToolRunDeps {
  db: Kysely<Database>;
  executions: ExecutionsPort;
  approvalMinutes: number;
}

export interface ToolCallContext {
  sessionId: string;
  turnId: string;
  signal: AbortSignal;
  writer: EventWriter;
}

export interface ToolOutcome {
  content: string;
  isError: boolean;
  /** An observation (reads state, changes nothing): weighs less against the iteration cap. */
  readOnly: boolean;
  executionId?: string;
}

export interface AgentTool<N extends string = string, S extends z.ZodType = z.ZodType> {
  name: N;
  description: string;
  inputSchema: S;
  run(deps: ToolRunDeps, ctx: ToolCallContext, input: z.output<S>): Promise<ToolOutcome>;
}

/** Declares a tool, keeping its name's literal type and its input's type. */
export const toolDefine = <N extends string, S extends z.ZodType>(tool: AgentTool<N, S>): AgentTool<N, S> => tool;

/** An error outcome for the model; readOnly unless the call may have changed something. */
export const toolFail = (content: string, readOnly = true): ToolOutcome => ({ content, isError: true, readOnly });

/** Schema parts several tools share. */
export const targetName = z.string().min(1, "must name a target (see list_targets)").max(200);
export const command = z.string().min(1, "must not be empty").max(100_000);
/** The approved plan's step a command serves (run, request_execution): it is marked running when it starts. */
export const planStep = z
  .number()
  .int()
  .min(1, "steps are numbered from 1")
  .max(1000)
  .optional()
  .describe("The approved plan's step this serves (from 1)");

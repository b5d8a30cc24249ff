// The request_execution tool: a long-running command, queued. Invariant:
// gated like run (gated-command.ts); it returns the execution id at once and
// the result comes back as a continuation, never in this turn.
import { z } from "zod";
import { gatedCommandRun } from "./gated-command.js";
import { command, planStep, targetName, toolDefine } from "./tool.js";

export const requestExecution = toolDefine({
  name: "request_execution",
  description:
    "Queue a long-running command (installs, builds, docker compose up). Returns at once with the execution id; the " +
    "result is delivered to you automatically as a system note when it finishes. Never poll for it.",
  inputSchema: z
    .object({
      target: targetName.describe("Target name, or <node>/<vmid> for a container"),
      command: command.describe("A long-running shell command (installs, builds, compose up)"),
      description: z.string().max(500).optional().describe("What this step does, for the operator"),
      step: planStep,
    })
    .strict(),
  run: (deps, ctx, input) => gatedCommandRun(deps, ctx, "async", input),
});

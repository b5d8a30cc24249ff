// The run tool: a short command, synchronous. Invariant: it runs inline only
// when the assent gate allows it (gated-command.ts); otherwise it becomes a
// pending approval and the result says so.
import { z } from "zod";
import { gatedCommandRun } from "./gated-command.js";
import { command, planStep, targetName, toolDefine } from "./tool.js";

export const run = toolDefine({
  name: "run",
  description:
    "Run a short command on a target and get its stdout, stderr and exit code back in this turn. Inside an open " +
    "assent window and in its scope, read-only and config-changing commands run at once; anything else creates a " +
    "pending approval and says so.",
  inputSchema: z
    .object({
      target: targetName.describe("Target name, or <node>/<vmid> for a container"),
      command: command.describe("A shell command, run with bash on the target"),
      timeout_s: z.number().int().min(1).max(3600).optional().describe("Seconds before it is killed (default 600)"),
      step: planStep,
    })
    .strict(),
  run: (deps, ctx, input) => gatedCommandRun(deps, ctx, "sync", input),
});

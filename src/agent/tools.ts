// The agent tools of DESIGN.md: their names (part of the contract),
// their zod input schemas, and the tool definitions sent to the model
// (input_schema from zod 4's z.toJSONSchema). Invariant: the schema that
// describes a tool to the model is the schema that validates what the model
// sends back, so the two cannot drift.
import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { unstorablePath } from "../db/storable.js";

const targetName = z.string().min(1, "must name a target (see list_targets)").max(200);
const command = z.string().min(1, "must not be empty").max(100_000);

export const toolInputs = {
  list_targets: z.object({}).strict(),
  run: z
    .object({
      target: targetName.describe("Target name, or <node>/<vmid> for a container"),
      command: command.describe("A shell command, run with bash on the target"),
      timeout_s: z.number().int().min(1).max(3600).optional().describe("Seconds before it is killed (default 600)"),
    })
    .strict(),
  request_execution: z
    .object({
      target: targetName.describe("Target name, or <node>/<vmid> for a container"),
      command: command.describe("A long-running shell command (installs, builds, compose up)"),
      description: z.string().max(500).optional().describe("What this step does, for the operator"),
    })
    .strict(),
  get_execution_status: z.object({ execution_id: z.uuid("must be an execution id (a UUID)") }).strict(),
  pct_create: z
    .object({
      node: targetName.describe("The Proxmox node to create the container on"),
      hostname: z
        .string()
        .regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, "must be a DNS label: lowercase letters, digits and -")
        .describe("Container hostname; it becomes the target name"),
      ostemplate: z.string().min(1).describe("e.g. local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"),
      vmid: z.number().int().min(100).max(999_999_999).optional(),
      cores: z.number().int().min(1).max(128).optional(),
      memory_mb: z.number().int().min(64).max(1_048_576).optional(),
      disk_gb: z.number().int().min(1).max(65_536).optional(),
      storage: z.string().min(1).optional(),
      bridge: z.string().min(1).optional(),
      ip: z.string().min(1).optional().describe('"dhcp" or CIDR like 192.168.1.50/24'),
      nesting: z.boolean().optional(),
      keyctl: z.boolean().optional(),
      unprivileged: z.boolean().optional(),
    })
    .strict(),
  propose_plan: z
    .object({
      goal: z.string().min(1).max(2000).describe("What will be true when the plan is done"),
      steps: z
        .array(
          z
            .object({
              title: z.string().min(1).max(500),
              target: targetName.optional(),
              command: command.optional(),
              destructive: z.boolean().optional().describe("true if the step loses data or availability"),
            })
            .strict(),
        )
        .min(1, "a plan needs at least one step")
        .max(100),
    })
    .strict(),
  report_outcome: z
    .object({
      outcome: z
        .enum(["verified", "blocked"])
        .describe("verified: the goal is shown working; blocked: you cannot go on without the operator"),
      summary: z.string().min(1).max(4000).describe("What you did and how you verified it, or why you are blocked"),
      needs: z.string().min(1).max(4000).optional().describe("When blocked: exactly what you need from the operator"),
    })
    .strict(),
} as const;

export type ToolName = keyof typeof toolInputs;
export type ToolInput<N extends ToolName> = z.output<(typeof toolInputs)[N]>;

export const TOOL_NAMES = Object.keys(toolInputs) as ToolName[];

const DESCRIPTIONS: Record<ToolName, string> = {
  list_targets: "List the hosts you may act on (Proxmox nodes, SSH hosts, containers) and their kinds.",
  run:
    "Run a short command on a target and get its stdout, stderr and exit code back in this turn. Inside an open " +
    "assent window and in its scope, read-only and config-changing commands run at once; anything else creates a " +
    "pending approval and says so.",
  request_execution:
    "Queue a long-running command (installs, builds, docker compose up). Returns at once with the execution id; the " +
    "result is delivered to you automatically as a system note when it finishes. Never poll for it.",
  get_execution_status: "The status and captured result of one execution of this session.",
  pct_create:
    "Create and start an LXC container on a Proxmox node and register it as a target named after its hostname. " +
    "Nothing else: install, configure and verify with separate run steps.",
  propose_plan:
    "Record a plan (goal and steps) and ask the operator to approve it. Approval opens an assent window over the " +
    "targets the steps name; destructive steps with an exact command are pre-authorized by it. End your turn after " +
    "proposing.",
  report_outcome:
    "End the approved plan: report its goal verified (with the evidence) or yourself blocked (with what you need). " +
    "This closes the assent window and notifies the operator; further changes need a new approval.",
};

function inputSchema(schema: z.ZodType): Anthropic.Tool.InputSchema {
  const json = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  delete json.$schema;
  return json as Anthropic.Tool.InputSchema;
}

/**
 * The tool definitions for messages.stream; the last carries cache_control,
 * caching the tools with the system prompt, unless caching is off (servers
 * that refuse the field: NOMOS_MODEL_CACHE=off).
 */
export function toolDefinitions(options: { cache?: boolean } = {}): Anthropic.Tool[] {
  const defs: Anthropic.Tool[] = TOOL_NAMES.map((name) => ({
    name,
    description: DESCRIPTIONS[name],
    input_schema: inputSchema(toolInputs[name]),
  }));
  if (options.cache !== false) defs[defs.length - 1] = { ...defs[defs.length - 1]!, cache_control: { type: "ephemeral" } };
  return defs;
}

/** Validates a tool input; the error names each bad field, for an error tool_result. */
export function toolInputParse<N extends ToolName>(
  name: N,
  input: unknown,
): { ok: true; value: ToolInput<N> } | { ok: false; error: string } {
  const parsed = toolInputs[name].safeParse(input ?? {});
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

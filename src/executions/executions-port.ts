// What the executions side (src/risk, src/executions, src/targets, src/pct)
// offers the agent and the approvals, behind one narrow port, so the agent
// loop is tested with the host's replies scripted while everything else is
// real (tests/helpers/db-executions-port.ts), and startExecutions
// (start-executions.ts) plugs the production parts in with executionsPortFrom
// below. It lives here, with the concept it fronts, so agent/ and approvals/
// both depend on executions/ and not on each other.
//
// Invariant: the agent changes executions only through this port; the port's
// create/approve/reject/cancel take the caller's transaction (a withActor
// tx), so an execution, its approval and their events commit together.
import type { Kysely } from "kysely";
import type { Database, Execution, Risk } from "../db/schema.js";
import {
  type ExecutionCreateParams,
  executionApprove,
  executionCancel,
  executionCreate,
  executionReject,
} from "../executions/lifecycle.js";
import { classifyCommand } from "../risk/classify.js";

/** What the agent needs to know about a target. */
export interface AgentTarget {
  name: string;
  kind: "proxmox" | "ssh" | "container";
  /** For containers: the node they live on and their vmid. */
  node?: string | null;
  vmid?: number | null;
  /** For containers: the session whose plan created it (joins that window's scope). */
  createdBySessionId?: string | null;
  /** For an ssh host that is a QEMU VM: its node and vmid (snapshots, issue 17). */
  vm?: { node: string; vmid: number } | null;
}

export type { ExecutionCreateParams };

/** The input of the pct_create tool, already validated by the agent's zod schema. */
export interface PctCreateToolInput {
  node: string;
  hostname: string;
  ostemplate: string;
  vmid?: number | undefined;
  cores?: number | undefined;
  memory_mb?: number | undefined;
  disk_gb?: number | undefined;
  storage?: string | undefined;
  bridge?: string | undefined;
  ip?: string | undefined;
  nesting?: boolean | undefined;
  keyctl?: boolean | undefined;
  unprivileged?: boolean | undefined;
}

export interface ExecutionsPort {
  classify(command: string): { risk: Risk; reasons: string[] };
  create(tx: Kysely<Database>, params: ExecutionCreateParams): Promise<Execution>;
  approve(tx: Kysely<Database>, params: { executionId: string }): Promise<Execution>;
  reject(tx: Kysely<Database>, params: { executionId: string; reason?: string }): Promise<Execution>;
  cancel(tx: Kysely<Database>, params: { executionId: string; reason?: string }): Promise<Execution>;
  /** Runs one approved sync execution in this process and returns its terminal row. */
  runInline(executionId: string, options?: { signal?: AbortSignal }): Promise<Execution>;
  listTargets(): Promise<AgentTarget[]>;
  resolveTarget(nameOrNodeSlashVmid: string): Promise<AgentTarget | undefined>;
  pctCreate(
    input: PctCreateToolInput,
    /** signal: the turn's; Stop aborts it and the remote command is killed (the container is left as it is). */
    ctx: { sessionId: string; actor: string; signal?: AbortSignal },
  ): Promise<{ target: string; node: string; vmid: number; hostname: string }>;
}

/**
 * Builds the production port: the classifier and the lifecycle directly, and
 * the stateful parts main.ts builds (runner, registry, pct_create's deps):
 *
 *   executionsPortFrom({ runner, registry, pctCreate: (input, ctx) => pctCreate(pctDeps, input, ctx) })
 */
export function executionsPortFrom(parts: {
  runner: { runInline(executionId: string, options?: { signal?: AbortSignal }): Promise<Execution> };
  registry: { list(): Promise<AgentTarget[]>; resolve(name: string): Promise<AgentTarget | undefined> };
  pctCreate: ExecutionsPort["pctCreate"];
}): ExecutionsPort {
  return {
    classify: classifyCommand,
    create: executionCreate,
    approve: executionApprove,
    reject: executionReject,
    cancel: executionCancel,
    runInline: (id, options) => parts.runner.runInline(id, options),
    listTargets: () => parts.registry.list(),
    resolveTarget: (name) => parts.registry.resolve(name),
    pctCreate: parts.pctCreate,
  };
}

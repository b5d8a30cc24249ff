// The snapshot tests' world: the Proxmox double on loopback (real SSH, with
// pve1 in the targets and an existing container web1 = pve1/105 registered
// by hand, not by any session; and a QEMU VM 200 on pve1 that is also the
// ssh target vm200, its own SSH double, named in the targets file's `vm`),
// the REAL executions side (TargetRegistry,
// SshPool, ExecutionRunner, pctCreate, behind executionsPortFrom as
// production builds it), the real SDK against the Messages API double, and
// Turns with the agent loop. `const w = useSnapshotWorld(t)` at the top of a
// file; everything stops after it.
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll } from "vitest";
import { type AgentDeps, agentTurn } from "../../src/agent/loop.js";
import { type ApprovalDeps, approvalDecide } from "../../src/approvals/decide.js";
import { withActor } from "../../src/db/with-actor.js";
import { type ExecutionsPort, executionsPortFrom } from "../../src/executions/executions-port.js";
import { ExecutionRunner } from "../../src/executions/runner.js";
import { createLogger } from "../../src/log/logger.js";
import { type MessagesDouble, scriptedPolicy, startMessagesDouble } from "../../src/model-double/messages-double.js";
import { pctCreate } from "../../src/pct/pct-create.js";
import { SshPool } from "../../src/ssh/connection-pool.js";
import { makeRedactor } from "../../src/ssh/redact.js";
import { TargetRegistry, targetRegisterContainer } from "../../src/targets/registry.js";
import { Turns } from "../../src/turns/turns.js";
import type { TestDatabase } from "./database.js";
import { SshTestHost } from "./ssh-test-host.js";

export interface SnapshotWorld {
  host: SshTestHost;
  /** The QEMU VM 200 as an ssh host (target vm200). */
  vmHost: SshTestHost;
  double: MessagesDouble;
  port: ExecutionsPort;
  runner: ExecutionRunner;
  approvalDeps: ApprovalDeps;
  turns: Turns;
  /** Has the model propose a plan with these steps, and the operator approve it by button (opening the window). */
  approvePlan(
    sessionId: string,
    steps: Array<{ title: string; target?: string; command?: string; destructive?: boolean; without_snapshot?: boolean }>,
  ): Promise<string>;
  /** One operator turn in which the model calls these tools in order, then says "done". */
  agentDoes(sessionId: string, calls: Array<{ name: string; input: Record<string, unknown> }>): Promise<void>;
  /** The tool_result texts the model received in its last request. */
  lastToolResults(): string[];
}

export const WEB1 = { vmid: 105, hostname: "web1" };
export const VM200 = { vmid: 200, name: "vm200" };

export function useSnapshotWorld(t: TestDatabase): SnapshotWorld {
  const w = {} as SnapshotWorld;
  let pool: SshPool;
  beforeAll(async () => {
    const log = createLogger({ level: "silent" });
    w.host = await SshTestHost.start();
    w.host.containers.set(WEB1.vmid, {
      vmid: WEB1.vmid,
      hostname: WEB1.hostname,
      status: "running",
      ostemplate: "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst",
      options: { rootfs: "local-lvm:8", memory: "512" },
    });
    w.host.vms.set(VM200.vmid, {
      vmid: VM200.vmid,
      hostname: VM200.name,
      status: "running",
      ostemplate: "",
      options: { scsi0: "local-lvm:vm-200-disk-0" },
    });
    w.vmHost = await SshTestHost.start({ nodeName: VM200.name });
    const vmEntry = { ...w.vmHost.targetsFileEntry(), kind: "ssh" as const, vm: { node: "pve1", vmid: VM200.vmid } };
    const registry = new TargetRegistry({ db: t.db.kysely, fileTargets: [w.host.targetsFileEntry(), vmEntry] });
    await registry.sync();
    await withActor(t.db.kysely, "system:test", (tx) =>
      targetRegisterContainer(tx, { name: WEB1.hostname, node: "pve1", vmid: WEB1.vmid, createdBySessionId: null }),
    );
    pool = new SshPool({ log });
    const redact = makeRedactor();
    w.runner = new ExecutionRunner({ db: t.db, registry, pool, log, redact, owner: "snapshot-test", sweepEveryMs: 600_000 });
    await w.runner.start();
    w.port = executionsPortFrom({
      runner: w.runner,
      registry,
      pctCreate: (input, ctx) => pctCreate({ db: t.db.kysely, registry, pool, redact, log, startWaitMs: 5_000 }, input, ctx),
    });
    w.double = await startMessagesDouble();
    const client = new Anthropic({ apiKey: "test-key", baseURL: w.double.url, maxRetries: 0 });
    w.approvalDeps = { db: t.db.kysely, executions: w.port, assentMinutes: 30, log };
    const agentDeps: AgentDeps = {
      db: t.db.kysely,
      client,
      model: "claude-test",
      maxIterations: 40,
      soul: "You are Nomos (snapshot test soul).",
      executions: w.port,
      approvalMinutes: 60,
      log,
    };
    w.turns = new Turns({
      db: t.db.kysely,
      runTurn: (ctx) => agentTurn(agentDeps, ctx),
      approvals: w.approvalDeps,
      log,
      owner: "snapshot-test",
      flushMs: 5,
    });
  });
  afterAll(async () => {
    await w.turns?.stop();
    await w.runner?.stop();
    await pool?.stop();
    await w.double?.close();
    await w.host?.stop();
    await w.vmHost?.stop();
  });

  w.approvePlan = async (sessionId, steps) => {
    w.double.setPolicy(
      scriptedPolicy([
        { content: [{ type: "tool_use", name: "propose_plan", input: { goal: "change web1", steps } }] },
        { content: [{ type: "text", text: "Plan proposed." }] },
      ]),
    );
    await w.turns.chat(sessionId, "make a plan", "operator:alice", { mayConfirmDestructive: true });
    await w.turns.idle(sessionId);
    const card = await t.db.kysely
      .selectFrom("approvals")
      .select(["id", "plan_id"])
      .where("session_id", "=", sessionId)
      .where("kind", "=", "plan")
      .where("status", "=", "pending")
      .executeTakeFirstOrThrow();
    await approvalDecide(w.approvalDeps, {
      approvalId: card.id,
      decision: "approve",
      actor: "operator:alice",
      via: "button",
      mayConfirmDestructive: true,
    });
    return card.plan_id!;
  };

  w.agentDoes = async (sessionId, calls) => {
    w.double.setPolicy(
      scriptedPolicy([
        ...calls.map((c) => ({ content: [{ type: "tool_use" as const, name: c.name, input: c.input }] })),
        { content: [{ type: "text", text: "done" }] },
      ]),
    );
    await w.turns.chat(sessionId, "carry on", "operator:alice", { mayConfirmDestructive: true });
    await w.turns.idle(sessionId);
  };

  w.lastToolResults = () => {
    const out: string[] = [];
    for (const req of w.double.requests) {
      const last = req.messages.at(-1);
      if (!last || typeof last.content === "string") continue;
      for (const b of last.content as Array<{ type: string; content?: unknown }>) {
        if (b.type === "tool_result") out.push(typeof b.content === "string" ? b.content : JSON.stringify(b.content));
      }
    }
    return out;
  };
  return w;
}

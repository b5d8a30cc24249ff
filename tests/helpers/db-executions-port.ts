// The executions port for the agent's own tests: the REAL lifecycle
// (executionCreate/Approve/Reject/Cancel, executionClaim/Finish: the ledger
// row, the guard trigger, NOTIFY, events and audit as in production) and
// the REAL risk classifier, with the host replaced by a script: a test
// supplies `respond(target, command)`, what the host prints and returns, and
// runInline records exactly that. Tests of the agent loop care what the
// agent does with a result, not how SSH carried it; the runner over real SSH
// is pinned by tests/execution-runner.test.ts and the end-to-end tests.
// Targets come from the targets table; pctCreate inserts a container row.
import type { Kysely } from "kysely";
import type { Database } from "../../src/db/schema.js";
import { withActor } from "../../src/db/with-actor.js";
import type { AgentTarget, ExecutionsPort } from "../../src/executions/executions-port.js";
import {
  executionApprove,
  executionCancel,
  executionClaim,
  executionCreate,
  executionFinish,
  executionReject,
} from "../../src/executions/lifecycle.js";
import { classifyCommand } from "../../src/risk/classify.js";

export interface HostReply {
  exitCode: number;
  stdout?: string;
  stderr?: string;
}

export interface TestPortOptions {
  respond?: (target: string, command: string) => HostReply | Promise<HostReply>;
}

const toTarget = (r: {
  name: string;
  kind: string;
  node: string | null;
  vmid: number | null;
  created_by_session_id: string | null;
}): AgentTarget => ({
  name: r.name,
  kind: r.kind as AgentTarget["kind"],
  node: r.node,
  vmid: r.vmid,
  createdBySessionId: r.created_by_session_id,
});

export function dbExecutionsPort(db: Kysely<Database>, options: TestPortOptions = {}): ExecutionsPort & { inlineRuns: string[] } {
  const respond = options.respond ?? ((): HostReply => ({ exitCode: 0, stdout: "ok\n" }));
  const inlineRuns: string[] = [];
  const owner = "test-host";
  return {
    inlineRuns,
    classify: classifyCommand,
    create: executionCreate,
    approve: executionApprove,
    reject: executionReject,
    cancel: executionCancel,
    async runInline(executionId) {
      inlineRuns.push(executionId);
      const running = await withActor(db, "system:runner", (tx) =>
        executionClaim(tx, { executionId, mode: "sync", owner, leaseMs: 60_000 }),
      );
      const reply = await respond(running.target, running.command);
      return withActor(db, "system:runner", (tx) =>
        executionFinish(tx, {
          executionId,
          owner,
          outcome: {
            status: reply.exitCode === 0 ? "completed" : "failed",
            exitCode: reply.exitCode,
            stdout: reply.stdout ?? "",
            stderr: reply.stderr ?? "",
          },
        }),
      );
    },
    async listTargets() {
      return (await db.selectFrom("targets").selectAll().orderBy("name").execute()).map(toTarget);
    },
    async resolveTarget(name) {
      const slash = /^([^/]+)\/(\d+)$/.exec(name);
      const row = slash
        ? await db.selectFrom("targets").selectAll().where("node", "=", slash[1]!).where("vmid", "=", Number(slash[2])).executeTakeFirst()
        : await db.selectFrom("targets").selectAll().where("name", "=", name).executeTakeFirst();
      return row ? toTarget(row) : undefined;
    },
    async pctCreate(input, ctx) {
      const vmid = input.vmid ?? 100 + Math.floor(Math.random() * 800);
      await withActor(db, ctx.actor, (tx) =>
        tx
          .insertInto("targets")
          .values({ name: input.hostname, kind: "container", node: input.node, vmid, created_by_session_id: ctx.sessionId })
          .execute(),
      );
      return { target: input.hostname, node: input.node, vmid, hostname: input.hostname };
    },
  };
}

/** A Proxmox node target row (not reachable: the test port never dials). */
export async function makeNodeTarget(db: Kysely<Database>, name = "pve1") {
  return db
    .insertInto("targets")
    .values({
      name,
      kind: "proxmox",
      host: "127.0.0.1",
      port: 22,
      username: "root",
      private_key_path: "/nonexistent/test-key",
      host_key_sha256: `SHA256:${"A".repeat(43)}`,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

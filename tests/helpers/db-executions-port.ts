// A database-backed ExecutionsPort for the agent's tests while issue 3's
// real one (SSH runner, risk parser, target registry, pct) lands elsewhere.
// It is honest about what it is:
// - executions are real rows: created with their nomos_plan_executions row
//   in the caller's transaction, moved through the real lifecycle by
//   conditional UPDATEs (approved -> running -> completed/failed), so the
//   guard trigger, NOTIFY and audit behave as in production;
// - nothing runs over SSH: a test supplies `respond(target, command)`, the
//   output the "host" gives, and runInline records exactly that;
// - classify is a small rule table for the commands these tests use, not
//   the real shell-word parser;
// - targets come from the targets table; pctCreate inserts a container row.
import { type Kysely, sql, type UpdateObject } from "kysely";
import type { ExecutionCreateParams, ExecutionsPort, AgentTarget } from "../../src/agent/tool-deps.js";
import type { Database, Execution, Risk } from "../../src/db/schema.js";
import { withActor } from "../../src/db/with-actor.js";

export interface HostReply {
  exitCode: number;
  stdout?: string;
  stderr?: string;
}

export interface TestPortOptions {
  respond?: (target: string, command: string) => HostReply | Promise<HostReply>;
}

const DESTRUCTIVE = [/\bpct\s+destroy\b/, /\brm\s+-\w*r\w*f?\s+\/(?!tmp\b)/, /\bmkfs\b/, /\bzfs\s+destroy\b/, /\bwipefs\b/, /\breboot\b/];
const READ_ONLY = /^(cat|ls|df|du|free|uptime|pveversion|pct\s+(list|status|config)|systemctl\s+status|journalctl|echo|ps|ip\s+a|hostname|uname)\b/;

export function testClassify(command: string): { risk: Risk; reasons: string[] } {
  const hit = DESTRUCTIVE.find((r) => r.test(command));
  if (hit) return { risk: "destructive", reasons: [`matches ${hit.source}`] };
  if (READ_ONLY.test(command.trim())) return { risk: "read_only", reasons: [] };
  return { risk: "config_mutation", reasons: ["changes the system"] };
}

const toTarget = (r: { name: string; kind: string; node: string | null; vmid: number | null; created_by_session_id: string | null }): AgentTarget => ({
  name: r.name,
  kind: r.kind as AgentTarget["kind"],
  node: r.node,
  vmid: r.vmid,
  createdBySessionId: r.created_by_session_id,
});

export function dbExecutionsPort(db: Kysely<Database>, options: TestPortOptions = {}): ExecutionsPort & { inlineRuns: string[] } {
  const respond = options.respond ?? ((): HostReply => ({ exitCode: 0, stdout: "ok\n" }));
  const inlineRuns: string[] = [];
  const transition = async (
    tx: Kysely<Database>,
    id: string,
    from: Execution["status"],
    set: UpdateObject<Database, "executions">,
  ): Promise<Execution> => {
    const row = await tx.updateTable("executions").set(set).where("id", "=", id).where("status", "=", from).returningAll().executeTakeFirst();
    if (!row) throw new Error(`execution ${id} is not ${from}`);
    return row;
  };
  return {
    inlineRuns,
    classify: testClassify,
    async create(tx, p: ExecutionCreateParams) {
      const e = await tx
        .insertInto("executions")
        .values({
          session_id: p.sessionId,
          plan_id: p.planId ?? null,
          turn_id: p.turnId ?? null,
          target: p.target,
          command: p.command,
          description: p.description ?? null,
          risk: p.risk,
          mode: p.mode,
          status: p.status,
          timeout_s: p.timeoutS ?? 600,
          approved_at: p.status === "approved" ? sql`now()` : null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      if (p.sessionId) {
        await tx
          .insertInto("nomos_plan_executions")
          .values({
            execution_id: e.id,
            session_id: p.sessionId,
            plan_id: p.planId ?? null,
            ...(p.deliveredInline ? { continued_at: sql`now()`, claimed_by: "inline" } : {}),
          })
          .execute();
      }
      return e;
    },
    approve: (tx, { executionId }) => transition(tx, executionId, "pending_approval", { status: "approved", approved_at: sql`now()` }),
    reject: (tx, { executionId, reason }) =>
      transition(tx, executionId, "pending_approval", { status: "rejected", finished_at: sql`now()`, error: reason ?? "rejected" }),
    cancel: (tx, { executionId, reason }) =>
      transition(tx, executionId, "pending_approval", { status: "cancelled", finished_at: sql`now()`, error: reason ?? "cancelled" }),
    async runInline(executionId) {
      inlineRuns.push(executionId);
      const running = await withActor(db, "system:runner", (tx) =>
        transition(tx, executionId, "approved", {
          status: "running",
          started_at: sql`now()`,
          runner_owner: "test-port",
          lease_expires_at: sql`now() + interval '1 minute'`,
        }),
      );
      const reply = await respond(running.target, running.command);
      return withActor(db, "system:runner", (tx) =>
        transition(tx, executionId, "running", {
          status: reply.exitCode === 0 ? "completed" : "failed",
          exit_code: reply.exitCode,
          stdout: reply.stdout ?? "",
          stderr: reply.stderr ?? "",
          finished_at: sql`now()`,
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

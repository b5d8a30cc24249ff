// Stop stops everything of the session, end to end on the production
// executions port (the real runner over SSH to the Proxmox double, the real
// pct_create), with the agent on the real SDK against the Messages API
// double: the remote process is killed (the double records the signal),
// the execution ends cancelled, the transcript ends with one marker, and no
// continuation follows; the result reaches the agent with the operator's
// next message. Same for a pct_create in flight: aborted, container left.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentTurn } from "../src/agent/loop.js";
import { carryPendingResults } from "../src/continuation/carry.js";
import { ContinuationDispatcher } from "../src/continuation/dispatcher.js";
import { executionsPortFrom } from "../src/executions/executions-port.js";
import { executionGet } from "../src/executions/lifecycle.js";
import { ExecutionRunner } from "../src/executions/runner.js";
import { createLogger } from "../src/log/logger.js";
import { scriptedPolicy } from "../src/model-double/messages-double.js";
import { pctCreate } from "../src/pct/pct-create.js";
import { SshPool } from "../src/ssh/connection-pool.js";
import { makeRedactor } from "../src/ssh/redact.js";
import { TargetRegistry } from "../src/targets/registry.js";
import { Turns } from "../src/turns/turns.js";
import { useAgentHarness } from "./helpers/agent-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";
import { SshTestHost } from "./helpers/ssh-test-host.js";

const t = useTestDatabase();
const h = useAgentHarness(t);
const log = createLogger({ level: "silent" });
let host: SshTestHost;
let pool: SshPool;
let runner: ExecutionRunner;
let turns: Turns;
let dispatcher: ContinuationDispatcher;
const db = () => t.db.kysely;

beforeAll(async () => {
  host = await SshTestHost.start();
  pool = new SshPool({ log });
  const registry = new TargetRegistry({ db: db(), fileTargets: [host.targetsFileEntry()] });
  await registry.sync();
  runner = new ExecutionRunner({ db: t.db, registry, pool, log, redact: makeRedactor(), sweepEveryMs: 600_000 });
  await runner.start();
  const executions = executionsPortFrom({
    runner,
    registry,
    pctCreate: (input, ctx) => pctCreate({ db: db(), registry, pool, redact: makeRedactor(), log, startWaitMs: 1500 }, input, ctx),
  });
  turns = new Turns({
    db: db(),
    runTurn: (ctx) => agentTurn({ ...h.agentDeps, executions }, ctx),
    approvals: { ...h.approvalDeps, executions },
    log,
    owner: "test-stop",
    flushMs: 5,
    carryNotes: carryPendingResults({ db: t.db, owner: "test-stop" }),
  });
  dispatcher = new ContinuationDispatcher({
    db: t.db,
    log,
    owner: "test-stop",
    maxContinuations: 10,
    startTurn: ({ sessionId, notes, executionIds, reason }) => turns.chatWith(sessionId, notes, { executionIds, reason }),
  });
});
afterAll(async () => {
  await dispatcher.stop();
  await turns.stop();
  await runner.stop();
  await pool.stop();
  await host.stop();
});

async function sessionWithWindow() {
  const s = await makeSession(db());
  await db()
    .insertInto("assent_windows")
    .values({ session_id: s.id, opened_by: "operator:alice", scope_targets: ["pve1"], expires_at: new Date(Date.now() + 1_800_000) })
    .execute();
  return s;
}

const transcript = (sessionId: string) =>
  db().selectFrom("messages").select(["kind", "content"]).where("session_id", "=", sessionId).orderBy("id").execute();
const turnsOf = (sessionId: string) =>
  db().selectFrom("turns").select(["kind", "status"]).where("session_id", "=", sessionId).orderBy("created_at").execute();
const text = (m: { content: unknown[] }) => (m.content as Array<{ text?: string }>).map((b) => b.text ?? "").join("");

describe("Stop", () => {
  it("during a background step: kills the remote process, the execution ends cancelled, one marker, no continuation", async () => {
    const s = await sessionWithWindow();
    let started!: () => void;
    const isRunning = new Promise<void>((r) => (started = r));
    host.handle("docker compose up", async (ctx) => {
      started();
      await ctx.sleep(600_000);
    });
    h.double.setPolicy(
      scriptedPolicy([
        { content: [{ type: "tool_use", name: "request_execution", input: { target: "pve1", command: "docker compose up" } }] },
        { content: [{ type: "text", text: "Started it; I will be re-invoked with the result." }] },
      ]),
    );
    await turns.chat(s.id, "bring the stack up", "operator:alice", { mayConfirmDestructive: true });
    await turns.idle(s.id);
    await isRunning;
    const execution = await db().selectFrom("executions").selectAll().where("session_id", "=", s.id).executeTakeFirstOrThrow();
    expect(execution.status).toBe("running");

    const stopped = await turns.stopSession(s.id, "operator:alice");
    expect(stopped.marker).toMatch(/^Stopped by alice: cancelled 1 running step \(docker compose up on pve1\)\./);

    await expect.poll(async () => (await executionGet(db(), { executionId: execution.id }))?.status, { timeout: 15_000 }).toBe("cancelled");
    expect(await executionGet(db(), { executionId: execution.id })).toMatchObject({ exit_code: 143, error: "stopped by alice" });
    expect(host.kills).toContainEqual(expect.objectContaining({ signal: "TERM", command: "docker compose up" }));
    expect(host.running).toBe(0);

    // The transcript ends with the one marker.
    const rows = await transcript(s.id);
    expect(rows.at(-1)!.kind).toBe("system_note");
    expect(text(rows.at(-1)!)).toBe(stopped.marker);
    expect(rows.filter((m) => text(m).startsWith("Stopped by"))).toHaveLength(1);

    // The cancelled result reaches no continuation (the window is closed) ...
    const before = await turnsOf(s.id);
    await dispatcher.notify(execution.id);
    await dispatcher.idle();
    await turns.idle(s.id);
    expect(await turnsOf(s.id)).toEqual(before);
    expect((await db().selectFrom("assent_windows").select("close_reason").where("session_id", "=", s.id).execute())[0]).toEqual({
      close_reason: "revoked",
    });

    // ... and rides the operator's next message.
    h.double.setPolicy(() => ({ content: [{ type: "text", text: "It was cancelled." }] }));
    await turns.chat(s.id, "what happened?", "operator:alice", { mayConfirmDestructive: true });
    await turns.idle(s.id);
    const told = (h.double.requests.at(-1)!.messages.at(-1)!.content as Array<{ text?: string }>).map((b) => b.text ?? "").join("\n");
    expect(told).toContain(`execution ${execution.id} cancelled`);
  });

  it("during pct_create: the remote command is killed, the container is left as it is, the marker says so", async () => {
    const s = await sessionWithWindow();
    let started!: () => void;
    const isCreating = new Promise<void>((r) => (started = r));
    host.handle(/^pct create 120 /, async (ctx) => {
      started();
      await ctx.sleep(600_000);
    });
    h.double.setPolicy(
      scriptedPolicy([
        {
          content: [
            {
              type: "tool_use",
              name: "pct_create",
              input: { node: "pve1", hostname: "web2", ostemplate: "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst", vmid: 120 },
            },
          ],
        },
        { content: [{ type: "text", text: "unreachable: Stop ends the turn" }] },
      ]),
    );
    await turns.chat(s.id, "make a container", "operator:alice", { mayConfirmDestructive: true });
    await isCreating;
    const stopped = await turns.stopSession(s.id, "operator:alice");
    expect(stopped.marker).toContain("aborted pct_create of web2 on pve1 (the container is left as it is");
    expect(host.kills).toContainEqual(expect.objectContaining({ signal: "TERM", command: expect.stringMatching(/^pct create 120 /) }));
    expect(await db().selectFrom("targets").select("name").where("name", "=", "web2").executeTakeFirst()).toBeUndefined();
    expect((await turnsOf(s.id)).at(-1)).toEqual({ kind: "operator", status: "aborted" });
    const rows = await transcript(s.id);
    expect(text(rows.at(-1)!)).toBe(stopped.marker);
    const toolResult = rows.find((m) => m.kind === "tool_results")!;
    expect(JSON.stringify(toolResult.content)).toContain("stopped by the operator");
  });
});

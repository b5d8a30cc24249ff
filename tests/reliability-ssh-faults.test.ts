// SSH faults through the execution runner (what the agent and the operator
// see): a host that accepts TCP and then says nothing (the connect timeout
// is honoured, and its late close crashes nothing), a host whose connection drops mid-command (failed, saying it
// may or may not have completed, and never run again, even by a second
// runner's sweep), and a command that hangs (its timeout ends it).
// ssh-pool.test.ts pins unreachable hosts, wrong keys and host key changes
// at the pool; execution-runner.test.ts a changed host key at the runner.
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executionCreate } from "../src/executions/lifecycle.js";
import { ExecutionRunner } from "../src/executions/runner.js";
import { createLogger } from "../src/log/logger.js";
import { SshPool } from "../src/ssh/connection-pool.js";
import { makeRedactor } from "../src/ssh/redact.js";
import { TargetRegistry } from "../src/targets/registry.js";
import { useTestDatabase } from "./helpers/database.js";
import { SshTestHost } from "./helpers/ssh-test-host.js";

const t = useTestDatabase();
const log = createLogger({ level: "silent" });
let host: SshTestHost;
let silent: Server;
const sockets: Socket[] = [];
let registry: TargetRegistry;
const runners: ExecutionRunner[] = [];
const pools: SshPool[] = [];

beforeAll(async () => {
  host = await SshTestHost.start();
  // Accepts TCP, never sends the SSH banner: a hung sshd or a black hole behind NAT.
  silent = createServer((s) => sockets.push(s));
  await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
  const port = (silent.address() as { port: number }).port;
  registry = new TargetRegistry({
    db: t.db.kysely,
    fileTargets: [host.targetsFileEntry(), { ...host.targetsFileEntry(), name: "hung", port, kind: "ssh" }],
  });
  await registry.sync();
});
afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop()));
  await Promise.all(pools.map((p) => p.stop()));
  for (const s of sockets) s.destroy();
  await new Promise((r) => silent.close(r));
  await host.stop();
});

function makeRunner(connectTimeoutMs = 10_000) {
  const pool = new SshPool({ log, connectTimeoutMs });
  pools.push(pool);
  const runner = new ExecutionRunner({
    db: t.db,
    registry,
    pool,
    log,
    redact: makeRedactor(),
    sweepEveryMs: 600_000,
    leaseMs: 1000,
    renewEveryMs: 200,
  });
  runners.push(runner);
  return runner;
}
const create = (target: string, command: string, timeoutS?: number) =>
  executionCreate(t.db.kysely, {
    sessionId: null,
    target,
    command,
    risk: "read_only",
    mode: "sync",
    status: "approved",
    ...(timeoutS ? { timeoutS } : {}),
  });

describe("SSH faults, as the runner reports them", () => {
  it("a host that never answers fails after the connect timeout, saying it cannot connect", async () => {
    const runner = makeRunner(700);
    const e = await create("hung", "uptime");
    const started = Date.now();
    const done = await runner.runInline(e.id);
    const took = Date.now() - started;
    expect(done.status).toBe("failed");
    expect(done.error).toMatch(/cannot connect to hung/);
    expect(done.error).toMatch(/timed? ?out/i);
    // Honoured: well before the 10 s default, not instantly either.
    expect(took).toBeGreaterThanOrEqual(600);
    expect(took).toBeLessThan(8000);
    // The hung host finally closes its sockets: the late ssh2 error must not
    // be an uncaught exception (it was; vitest fails the file on one).
    for (const s of sockets.splice(0)) s.destroy();
    await new Promise((r) => setTimeout(r, 200));
  });

  it("a connection dropped mid-command fails the execution as maybe-done, and nothing runs it again", async () => {
    const runner = makeRunner();
    host.handle("apt-get install -y drop", async (ctx) => {
      ctx.out("Reading package lists...\n");
      await ctx.sleep(50);
      ctx.dropConnection();
      await ctx.sleep(60_000);
    });
    const e = await create("pve1", "apt-get install -y drop");
    const done = await runner.runInline(e.id);
    expect(done.status).toBe("failed");
    expect(done.error).toMatch(/may or may not have completed/);
    // A second runner starting and sweeping finds nothing to run or mark.
    const second = makeRunner();
    await second.start();
    await new Promise((r) => setTimeout(r, 300));
    expect(host.log.filter((l) => l.command === "apt-get install -y drop")).toHaveLength(1);
    host.resetHandlers();
  });

  it("a command that hangs is ended by its timeout and reported timed_out", async () => {
    const runner = makeRunner();
    host.handle("hang-forever", async (ctx) => {
      await ctx.sleep(600_000);
    });
    const e = await create("pve1", "hang-forever", 1);
    const done = await runner.runInline(e.id);
    expect(done.status).toBe("timed_out");
    expect(done.error).toMatch(/timed out after 1 s/);
    host.resetHandlers();
  });
});

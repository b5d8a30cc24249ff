// The runner against the Proxmox double: NOTIFY starts approved executions
// at once, runInline runs sync ones, outcomes (completed, failed, timed_out,
// cancelled, unreachable, wrong host key) land in the row, two runners never
// start the same execution, and a runner killed mid-command leaves its
// execution reported lost, never re-run.
import { type ChildProcess, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../src/db/connect.js";
import { withActor } from "../src/db/with-actor.js";
import { executionCancel, executionCreate, executionGet } from "../src/executions/lifecycle.js";
import { ExecutionRunner } from "../src/executions/runner.js";
import { createLogger } from "../src/log/logger.js";
import { SshPool } from "../src/ssh/connection-pool.js";
import { sshHostKeyRefusalRecord } from "../src/ssh/host-key-refusals.js";
import { makeRedactor } from "../src/ssh/redact.js";
import { TargetRegistry, targetRegisterContainer } from "../src/targets/registry.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";
import { SshTestHost } from "./helpers/ssh-test-host.js";

const t = useTestDatabase();
const log = createLogger({ level: "silent" });
let host: SshTestHost;
let registry: TargetRegistry;
const runners: ExecutionRunner[] = [];
const pools: SshPool[] = [];

beforeAll(async () => {
  host = await SshTestHost.start();
  const imposter = await SshTestHost.start({ nodeName: "pve9" });
  // pve9 is pinned to pve1's key, so its (different) key is refused.
  registry = new TargetRegistry({
    db: t.db.kysely,
    fileTargets: [host.targetsFileEntry(), { ...imposter.targetsFileEntry(), hostKeySha256: host.hostKeySha256 }],
  });
  await registry.sync();
  await withActor(t.db.kysely, "system:test", (tx) =>
    targetRegisterContainer(tx, { name: "web1", node: "pve1", vmid: 105, createdBySessionId: null }),
  );
  host.containers.set(105, { vmid: 105, hostname: "web1", status: "running", ostemplate: "", options: {} });
  afterAll(() => imposter.stop());
});
afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.stop()));
  await Promise.all(pools.splice(0).map((p) => p.stop()));
  host.resetHandlers();
});
afterAll(async () => {
  await host.stop();
});

function makeRunner(options: { db?: Db; owner?: string; leaseMs?: number; sweepEveryMs?: number } = {}) {
  const db = options.db ?? t.db;
  const pool = new SshPool({ log, onHostKeyRefused: (r) => sshHostKeyRefusalRecord(db.kysely, "system:runner", r) });
  pools.push(pool);
  const runner = new ExecutionRunner({
    db,
    registry,
    pool,
    log,
    redact: makeRedactor(),
    owner: options.owner,
    leaseMs: options.leaseMs ?? 30_000,
    sweepEveryMs: options.sweepEveryMs ?? 600_000,
  });
  runners.push(runner);
  return runner;
}

const create = async (
  command: string,
  extra: { target?: string; mode?: "sync" | "async"; timeoutS?: number; sessionId?: string | null } = {},
) =>
  executionCreate(t.db.kysely, {
    sessionId: extra.sessionId ?? null,
    target: extra.target ?? "pve1",
    command,
    risk: "read_only",
    mode: extra.mode ?? "async",
    status: "approved",
    timeoutS: extra.timeoutS,
  });

const terminal = async (id: string) => {
  await expect
    .poll(async () => (await executionGet(t.db.kysely, { executionId: id }))?.status, { timeout: 15_000 })
    .toMatch(/^(completed|failed|timed_out|cancelled)$/);
  return (await executionGet(t.db.kysely, { executionId: id }))!;
};

describe("async executions", () => {
  it("start on NOTIFY (the sweep is 10 minutes away) and record their result", async () => {
    await makeRunner().start();
    const s = await makeSession(t.db.kysely);
    const e = await create("echo started by notify", { sessionId: s.id });
    const done = await terminal(e.id);
    expect(done).toMatchObject({ status: "completed", exit_code: 0, stdout: "started by notify\n", stderr: "" });
    expect(done.runner_owner).toBe(runners[0]!.owner);
    const statuses = await t.db.kysely.selectFrom("session_events").select("data").where("session_id", "=", s.id).orderBy("id").execute();
    expect(statuses.map((r) => (r.data as { execution: { status: string } }).execution.status)).toEqual([
      "approved",
      "running",
      "completed",
    ]);
  });

  it("picks up approved executions that were waiting when it started", async () => {
    const e = await create("echo backlog");
    await makeRunner().start();
    expect((await terminal(e.id)).stdout).toBe("backlog\n");
  });

  it("runs a container's command inside it", async () => {
    await makeRunner().start();
    const e = await create("hostname", { target: "pve1/105" });
    expect(await terminal(e.id)).toMatchObject({ status: "completed", stdout: "web1\n" });
    expect(host.log.at(-1)).toMatchObject({ vmid: 105, command: "hostname" });
  });

  it("cancels a running execution: the remote process is killed, the row ends cancelled", async () => {
    await makeRunner().start();
    let started!: () => void;
    const isRunning = new Promise<void>((r) => (started = r));
    host.handle("long-job", async (ctx) => {
      started();
      await ctx.sleep(60_000);
    });
    const e = await create("long-job");
    await isRunning;
    await executionCancel(t.db.kysely, { executionId: e.id, reason: "operator pressed Stop" });
    const done = await terminal(e.id);
    expect(done).toMatchObject({ status: "cancelled", exit_code: 143, error: "operator pressed Stop" });
    expect(host.running).toBe(0);
  });

  it("two runners on one database never both start the same execution", async () => {
    const a = makeRunner({ db: t.connect({ max: 4, applicationName: "nomos-runner-a" }), owner: "runner-a" });
    const b = makeRunner({ db: t.connect({ max: 4, applicationName: "nomos-runner-b" }), owner: "runner-b" });
    await Promise.all([a.start(), b.start()]);
    host.handle(/^work (\d+)$/, async (ctx, m) => {
      await ctx.sleep(20);
      ctx.out(`${m![1]}\n`);
    });
    const ids = [];
    for (let i = 0; i < 24; i++) ids.push((await create(`work ${i}`)).id);
    const rows = await Promise.all(ids.map((id) => terminal(id)));
    expect(rows.every((r) => r.status === "completed")).toBe(true);
    const runs = host.log.filter((l) => /^work \d+$/.test(l.command)).map((l) => l.command);
    expect(runs.sort()).toEqual(Array.from({ length: 24 }, (_, i) => `work ${i}`).sort());
    expect(new Set(rows.map((r) => r.runner_owner))).toEqual(new Set(["runner-a", "runner-b"]));
  });
});

describe("runInline", () => {
  it("runs a sync execution here and returns its terminal row", async () => {
    const r = makeRunner();
    await r.start();
    host.handle("apt-get install -y nginxx", (ctx) => {
      ctx.err("E: Unable to locate package nginxx\n");
      return 100;
    });
    const ok = await create("echo inline", { mode: "sync" });
    expect(await r.runInline(ok.id)).toMatchObject({ status: "completed", stdout: "inline\n" });
    const bad = await create("apt-get install -y nginxx", { mode: "sync" });
    expect(await r.runInline(bad.id)).toMatchObject({
      status: "failed",
      exit_code: 100,
      stderr: "E: Unable to locate package nginxx\n",
    });
    const slow = await create("sleep 30", { mode: "sync", timeoutS: 1 });
    expect(await r.runInline(slow.id)).toMatchObject({
      status: "timed_out",
      exit_code: 124,
      error: "timed out after 1 s; the remote process was ended",
    });
    await expect(r.runInline(ok.id)).rejects.toThrow(/is completed, not approved \(mode sync\)/);
  });

  it("fails plainly for an unknown target and for a host key that does not match, recording the refusal", async () => {
    const r = makeRunner();
    await r.start();
    const unknown = await create("uptime", { mode: "sync", target: "nas" });
    expect(await r.runInline(unknown.id)).toMatchObject({
      status: "failed",
      error: expect.stringMatching(/unknown target "nas"/),
    });
    const spoofed = await create("uptime", { mode: "sync", target: "pve9" });
    expect(await r.runInline(spoofed.id)).toMatchObject({
      status: "failed",
      error: expect.stringMatching(/refused to connect to pve9: its SSH host key is SHA256:/),
    });
    await expect.poll(() => t.db.kysely.selectFrom("ssh_host_key_refusals").select("target").execute()).toEqual([{ target: "pve9" }]);
  });

  it("stops a sync execution when the caller aborts", async () => {
    const r = makeRunner();
    await r.start();
    const ac = new AbortController();
    host.handle("long-sync", async (ctx) => {
      ac.abort();
      await ctx.sleep(60_000);
    });
    const e = await create("long-sync", { mode: "sync" });
    expect(await r.runInline(e.id, { signal: ac.signal })).toMatchObject({ status: "cancelled", exit_code: 143 });
  });
});

describe("a runner killed mid-command", () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    child?.kill("SIGKILL");
  });

  it("leaves its execution reported lost when the next runner starts, and it is not re-run", async () => {
    const file = join(host.clientKeyPath, "..", "targets.json");
    await writeFile(file, JSON.stringify([host.targetsFileEntry()]));
    let started!: () => void;
    const isRunning = new Promise<void>((r) => (started = r));
    host.handle("migrate-database", async (ctx) => {
      started();
      await ctx.sleep(60_000);
    });
    child = spawn(process.execPath, ["--import", "tsx", "tests/fixtures/runner-child.ts"], {
      env: { ...process.env, DATABASE_URL: t.url, NOMOS_TARGETS_FILE: file, RUNNER_LEASE_MS: "1000" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      child!.stdout!.on("data", (d: Buffer) => d.toString().includes("ready") && resolve());
      child!.once("exit", (code) => reject(new Error(`runner child exited with ${code}`)));
    });
    const e = await create("migrate-database");
    await isRunning;
    expect((await executionGet(t.db.kysely, { executionId: e.id }))!.runner_owner).toBe("child-runner");
    const exited = new Promise((r) => child!.once("exit", r));
    child.kill("SIGKILL");
    await exited;
    // Its lease runs out; the next runner to start reports the execution lost.
    await expect
      .poll(async () => (await t.db.sql`SELECT lease_expires_at < now() AS expired FROM executions WHERE id = ${e.id}`)[0]!.expired, {
        timeout: 10_000,
      })
      .toBe(true);
    await makeRunner().start();
    const row = (await executionGet(t.db.kysely, { executionId: e.id }))!;
    expect(row).toMatchObject({ status: "failed" });
    expect(row.error).toMatch(/may or may not have completed/);
    expect(host.log.filter((l) => l.command === "migrate-database")).toHaveLength(1);
  });
});

// SSH against the Proxmox double: one pooled connection per target, host key
// pinning (refused before authentication, audited), timeouts, capped output,
// UTF-8 across chunks, redaction, drops, cancel and container commands.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/log/logger.js";
import { SshPool } from "../src/ssh/connection-pool.js";
import { HostKeyMismatchError, SshConnectError, SshConnectionLostError } from "../src/ssh/errors.js";
import { sshHostKeyRefusalRecord } from "../src/ssh/host-key-refusals.js";
import { makeRedactor } from "../src/ssh/redact.js";
import { runCommand } from "../src/ssh/run-command.js";
import { useTestDatabase } from "./helpers/database.js";
import { SshTestHost } from "./helpers/ssh-test-host.js";

const t = useTestDatabase();
const log = createLogger({ level: "silent" });
let host: SshTestHost;
let pool: SshPool;
const redact = makeRedactor(["hunter2-configured-secret"]);
const run = (command: string, extra: { timeoutS?: number; vmid?: number; signal?: AbortSignal; cap?: number } = {}) =>
  runCommand(pool, host.endpoint(), {
    command,
    timeoutS: extra.timeoutS ?? 60,
    vmid: extra.vmid,
    outputCapBytes: extra.cap ?? 64 * 1024,
    signal: extra.signal,
    redact,
  });

beforeAll(async () => {
  host = await SshTestHost.start();
});
afterAll(async () => {
  await host.stop();
});
afterEach(async () => {
  await pool.stop();
  host.resetHandlers();
  // No SSH connection outlives its pool.
  await expect.poll(() => host.clientCount).toBe(0);
});
/** A fresh pool per test, so connection counts are per test. */
const freshPool = (extra: Partial<ConstructorParameters<typeof SshPool>[0]> = {}) => {
  pool = new SshPool({ log, ...extra });
  return pool;
};

describe("running commands", () => {
  it("runs a command and returns its output and exit code, without the pid line", async () => {
    freshPool();
    const r = await run("echo hello world");
    expect(r).toMatchObject({ exitCode: 0, stdout: "hello world\n", stderr: "", timedOut: false, cancelled: false });
    expect(host.log.at(-1)).toMatchObject({ command: "echo hello world", vmid: null });
  });

  it("reports a non-zero exit with its stderr", async () => {
    freshPool();
    host.handle(/^apt-get install/, (ctx) => {
      ctx.err("E: Unable to locate package nginxx\n");
      return 100;
    });
    const r = await run("apt-get install -y nginxx");
    expect(r).toMatchObject({ exitCode: 100, stderr: "E: Unable to locate package nginxx\n" });
  });

  it("reuses one connection for many commands, concurrent or not", async () => {
    freshPool();
    const before = host.connections;
    await Promise.all(Array.from({ length: 20 }, (_, i) => run(`echo ${i}`)));
    for (let i = 0; i < 5; i++) await run("true");
    expect(host.connections - before).toBe(1);
    expect(pool.size).toBe(1);
  });

  it("runs a container's command through pct exec on its node", async () => {
    freshPool();
    host.containers.set(105, { vmid: 105, hostname: "web1", status: "running", ostemplate: "", options: {} });
    const r = await run("hostname", { vmid: 105 });
    expect(r.stdout).toBe("web1\n");
    expect(host.log.at(-1)).toMatchObject({ command: "hostname", vmid: 105 });
    expect(host.log.at(-1)!.raw).toMatch(/^pct exec 105 -- bash -c '/);
  });

  it("times out a slow command: the remote timeout ends it and it reports timed_out", async () => {
    freshPool();
    const r = await run("sleep 30", { timeoutS: 1 });
    expect(r).toMatchObject({ timedOut: true, exitCode: 124, cancelled: false });
    expect(host.running).toBe(0);
  });

  it("does not call a command that exits 124 quickly a timeout", async () => {
    freshPool();
    const r = await run("exit 124", { timeoutS: 30 });
    expect(r).toMatchObject({ timedOut: false, exitCode: 124 });
  });

  it("does not start a command whose signal was aborted before it ran", async () => {
    freshPool();
    const before = host.log.length;
    const r = await run("echo never", { signal: AbortSignal.abort() });
    expect(r).toMatchObject({ cancelled: true, exitCode: null, stdout: "" });
    expect(host.log.length).toBe(before);
  });

  it("cancels a running command by killing the remote process", async () => {
    freshPool();
    const ac = new AbortController();
    const started = new Promise<void>((resolve) =>
      host.handle("long-job", async (ctx) => {
        resolve();
        await ctx.sleep(60_000);
      }),
    );
    const pending = run("long-job", { signal: ac.signal });
    await started;
    ac.abort();
    const r = await pending;
    expect(r).toMatchObject({ cancelled: true, exitCode: 143, timedOut: false });
    expect(host.log.some((l) => /^kill -TERM \d+$/.test(l.command))).toBe(true);
  });

  it("caps huge output, keeping head and tail and counting what it dropped", async () => {
    freshPool();
    const total = 20 * 1024 * 1024;
    host.handle("cat /var/log/huge.log", async (ctx) => {
      const line = Buffer.alloc(64 * 1024, "x");
      ctx.out("HEAD-START\n");
      for (let sent = 11; sent < total - 9; sent += line.length) {
        ctx.out(line.subarray(0, Math.min(line.length, total - 9 - sent)));
        await new Promise((r) => setImmediate(r));
      }
      ctx.out("TAIL-END\n");
    });
    const r = await run("cat /var/log/huge.log", { cap: 4096 });
    expect(r.stdout.startsWith("HEAD-START\n")).toBe(true);
    expect(r.stdout.endsWith("TAIL-END\n")).toBe(true);
    expect(r.stdoutDroppedBytes).toBe(total - 4096);
    expect(r.stdout).toContain(`[... ${total - 4096} bytes dropped ...]`);
  });

  it("decodes multi-byte UTF-8 split across chunks", async () => {
    freshPool();
    const text = "héllo wörld ✓ 🚀 ünïcødé";
    const bytes = Buffer.from(text);
    host.handle("utf8", async (ctx) => {
      for (const b of bytes) {
        ctx.out(Buffer.from([b]));
        await new Promise((r) => setImmediate(r));
      }
    });
    expect((await run("utf8")).stdout).toBe(text);
  });

  it("redacts secrets before returning output", async () => {
    freshPool();
    host.handle("leak", (ctx) => {
      ctx.out("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n");
      ctx.out("DB_PASSWORD=s3cr3tvalue\nconfigured: hunter2-configured-secret\n");
      ctx.err("token ghp_abcdefghijklmnopqrstuvwxyz0123456789\n");
    });
    const r = await run("leak");
    expect(r.stdout).not.toMatch(/b3BlbnNzaC1rZXktdjEAAAAA|s3cr3tvalue|hunter2-configured-secret/);
    expect(r.stdout).toContain("[REDACTED PRIVATE KEY]");
    expect(r.stderr).toBe("token [REDACTED]\n");
  });
});

describe("connections", () => {
  it("reports a connection dropped mid-command as lost, and reconnects for the next", async () => {
    freshPool();
    host.handle("drop-me", async (ctx) => {
      ctx.out("partial output\n");
      await ctx.sleep(50);
      ctx.dropConnection();
      await ctx.sleep(60_000);
    });
    const before = host.connections;
    const err = await run("drop-me").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshConnectionLostError);
    expect((err as Error).message).toMatch(/may or may not have completed/);
    expect((await run("echo again")).stdout).toBe("again\n");
    expect(host.connections - before).toBe(2);
  });

  it("refuses a host whose key differs from the pinned one, before authenticating, and audits it", async () => {
    const other = await SshTestHost.start({ nodeName: "pve1" });
    try {
      freshPool({ onHostKeyRefused: (r) => sshHostKeyRefusalRecord(t.db.kysely, "system:runner", r) });
      // The endpoint pins pve1's real key; the "other" server presents a different one.
      const endpoint = { ...other.endpoint(), hostKeySha256: host.hostKeySha256 };
      const err = await runCommand(pool, endpoint, {
        command: "true",
        timeoutS: 5,
        outputCapBytes: 1024,
        redact,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HostKeyMismatchError);
      expect((err as Error).message).toContain(other.hostKeySha256);
      expect((err as Error).message).toMatch(/refused to connect to pve1/);
      expect(other.authAttempts).toBe(0);
      expect(other.log).toHaveLength(0);
      await expect.poll(() => t.db.kysely.selectFrom("ssh_host_key_refusals").selectAll().execute()).toHaveLength(1);
      const audit = await t.db.kysely
        .selectFrom("audit.events")
        .select(["actor", "table_name"])
        .where("table_name", "=", "ssh_host_key_refusals")
        .execute();
      expect(audit).toEqual([{ actor: "system:runner", table_name: "ssh_host_key_refusals" }]);
    } finally {
      await other.stop();
    }
  });

  it("says plainly when a host cannot be reached or the key is not accepted", async () => {
    freshPool({ connectTimeoutMs: 2000 });
    const closed = await runCommand(pool, host.endpoint({ port: 1 }), {
      command: "true",
      timeoutS: 5,
      outputCapBytes: 1024,
      redact,
    }).catch((e: unknown) => e);
    expect(closed).toBeInstanceOf(SshConnectError);
    expect((closed as Error).message).toMatch(/cannot connect to pve1 \(root@127\.0\.0\.1:1\)/);
    const other = await SshTestHost.start();
    try {
      const badKey = await runCommand(pool, host.endpoint({ privateKeyPath: other.clientKeyPath }), {
        command: "true",
        timeoutS: 5,
        outputCapBytes: 1024,
        redact,
      }).catch((e: unknown) => e);
      expect(badKey).toBeInstanceOf(SshConnectError);
      expect((badKey as Error).message).toMatch(/authentication/i);
      const noKey = await runCommand(pool, host.endpoint({ privateKeyPath: "/nonexistent/key" }), {
        command: "true",
        timeoutS: 5,
        outputCapBytes: 1024,
        redact,
      }).catch((e: unknown) => e);
      expect((noKey as Error).message).toMatch(/cannot read the private key for pve1 at \/nonexistent\/key: ENOENT/);
    } finally {
      await other.stop();
    }
  });
});

// npm run bench:ssh — what a command costs over SSH, against a real OpenSSH
// sshd on loopback (started here, as in the tests): `true` over a warm pooled
// connection, over a new connection per command, and through the `ssh`
// binary; plus the runner's full path (timeout wrapper, pid line, capture).
// Prints p50/p99 per mode. Not a test: numbers depend on the machine.
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { createLogger } from "../src/log/logger.js";
import { SshPool } from "../src/ssh/connection-pool.js";
import { makeRedactor } from "../src/ssh/redact.js";
import { runCommand } from "../src/ssh/run-command.js";
import { startOpenSshServer } from "../tests/helpers/openssh-server.js";

const RUNS = Number(process.env.BENCH_RUNS ?? 500);
const run = promisify(execFile);
const log = createLogger({ level: "silent" });

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function measure(name: string, once: () => Promise<void>) {
  for (let i = 0; i < 5; i++) await once(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await once();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const row = { name, p50: percentile(times, 50), p99: percentile(times, 99) };
  process.stdout.write(`| ${name.padEnd(44)} | ${row.p50.toFixed(2).padStart(8)} | ${row.p99.toFixed(2).padStart(8)} |\n`);
  return row;
}

const sshd = await startOpenSshServer();
try {
  const endpoint = sshd.endpoint();
  const knownHosts = join(sshd.dir, "known_hosts");
  await writeFile(
    knownHosts,
    `[127.0.0.1]:${sshd.port} ${(await import("node:fs")).readFileSync(join(sshd.dir, "host_ed25519.pub"), "utf8")}`,
  );
  process.stdout.write(`bench:ssh — ${RUNS} runs each of \`true\` against OpenSSH on 127.0.0.1:${sshd.port}, times in ms\n\n`);
  process.stdout.write(`| mode                                         |      p50 |      p99 |\n|---|---:|---:|\n`);

  const pool = new SshPool({ log });
  const warm = await measure("warm pooled connection (ssh2 channel)", async () => {
    const r = await pool.exec(endpoint, "true", { outputCapBytes: 1024 });
    if (r.exitCode !== 0) throw new Error(`exit ${r.exitCode}`);
  });
  const redact = makeRedactor();
  await measure("warm pooled, runner's full path (timeout -k)", async () => {
    const r = await runCommand(pool, endpoint, { command: "true", timeoutS: 60, outputCapBytes: 1024, redact });
    if (r.exitCode !== 0) throw new Error(`exit ${r.exitCode}`);
  });
  await pool.stop();

  const cold = await measure("new connection per command (ssh2)", async () => {
    const p = new SshPool({ log });
    try {
      const r = await p.exec(endpoint, "true", { outputCapBytes: 1024 });
      if (r.exitCode !== 0) throw new Error(`exit ${r.exitCode}`);
    } finally {
      await p.stop();
    }
  });

  const binary = await measure("ssh binary per command", async () => {
    await run("ssh", [
      "-i",
      sshd.clientKeyPath,
      "-p",
      String(sshd.port),
      "-o",
      "BatchMode=yes",
      "-o",
      "StrictHostKeyChecking=yes",
      "-o",
      `UserKnownHostsFile=${knownHosts}`,
      "-o",
      "ControlMaster=no",
      "-o",
      "ControlPath=none",
      `${sshd.username}@127.0.0.1`,
      "true",
    ]);
  });

  process.stdout.write(
    `\nwarm vs new connection: ${(cold.p50 / warm.p50).toFixed(1)}x faster at p50; ` +
      `vs ssh binary: ${(binary.p50 / warm.p50).toFixed(1)}x. Goal: warm p50 under 5 ms and at least 10x faster than a new connection.\n`,
  );
} finally {
  await sshd.stop();
}

// The wiring in main.ts: the service loads the targets file (a bad one stops
// start-up naming the entry and field), and its runner carries out an
// approved execution against the Proxmox double.
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executionCreate, executionGet } from "../src/executions/lifecycle.js";
import { useTestDatabase } from "./helpers/database.js";
import { startService } from "./helpers/service-process.js";
import { SshTestHost } from "./helpers/ssh-test-host.js";

const t = useTestDatabase();
let host: SshTestHost;
let dir: string;

beforeAll(async () => {
  host = await SshTestHost.start();
  dir = join(host.clientKeyPath, "..");
});
afterAll(async () => {
  await host.stop();
});

describe("the service's runner", () => {
  it("refuses to start with a bad targets file, naming the entry and the field", async () => {
    const file = join(dir, "bad-targets.json");
    await writeFile(file, JSON.stringify([{ ...host.targetsFileEntry(), hostKeySha256: "md5:00" }]));
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: {
        PATH: process.env.PATH,
        PORT: "0",
        NOMOS_LOG_FORMAT: "json",
        DATABASE_URL: t.url,
        NOMOS_TARGETS_FILE: file,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code).not.toBe(0);
    expect(out).toMatch(/entry 0 \(\\?"pve1\\?"\): hostKeySha256 must be an OpenSSH fingerprint/);
  });

  it("runs an approved execution on a target from the targets file", async () => {
    const file = join(dir, "targets.json");
    await writeFile(file, JSON.stringify([host.targetsFileEntry()]));
    const service = await startService({ DATABASE_URL: t.url, NOMOS_TARGETS_FILE: file });
    try {
      const e = await executionCreate(t.db.kysely, {
        sessionId: null,
        target: "pve1",
        command: "echo via the service",
        risk: "read_only",
        mode: "async",
        status: "approved",
      });
      await expect
        .poll(async () => (await executionGet(t.db.kysely, { executionId: e.id }))?.status, { timeout: 15_000 })
        .toBe("completed");
      expect((await executionGet(t.db.kysely, { executionId: e.id }))!.stdout).toBe("via the service\n");
      const health = (await (await fetch(`${service.url}/healthz`)).json()) as {
        checks: Record<string, { ok: boolean }>;
      };
      expect(health.checks.executionRunner).toMatchObject({ ok: true, running: 0 });
    } finally {
      expect(await service.stop()).toBe(0);
    }
  });
});

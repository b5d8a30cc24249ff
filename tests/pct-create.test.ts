// pct_create against the Proxmox double: validated input, next free vmid
// (retrying when a concurrent create took it), create + start + wait for
// running, registration as a target reached through its node.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/log/logger.js";
import { PctCreateError, pctCreate } from "../src/pct/pct-create.js";
import { SshPool } from "../src/ssh/connection-pool.js";
import { makeRedactor } from "../src/ssh/redact.js";
import { TargetRegistry } from "../src/targets/registry.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";
import { SshTestHost } from "./helpers/ssh-test-host.js";

const t = useTestDatabase();
const log = createLogger({ level: "silent" });
let host: SshTestHost;
let pool: SshPool;
let deps: Parameters<typeof pctCreate>[0];
let sessionId: string;
const template = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst";

beforeAll(async () => {
  host = await SshTestHost.start();
  pool = new SshPool({ log });
  const registry = new TargetRegistry({
    db: t.db.kysely,
    fileTargets: [host.targetsFileEntry(), { ...host.targetsFileEntry(), name: "nas", kind: "ssh" }],
  });
  await registry.sync();
  deps = { db: t.db.kysely, registry, pool, redact: makeRedactor(), log, startWaitMs: 1500 };
  sessionId = (await makeSession(t.db.kysely)).id;
});
afterAll(async () => {
  await pool.stop();
  await host.stop();
});

const ctx = () => ({ sessionId, actor: `agent:${sessionId}` });

describe("pctCreate", () => {
  it("creates, starts and registers a container with the next free vmid", async () => {
    host.containers.set(100, { vmid: 100, hostname: "old", status: "running", ostemplate: template, options: {} });
    const r = await pctCreate(
      deps,
      {
        node: "pve1",
        hostname: "immich",
        ostemplate: template,
        cores: 2,
        memory_mb: 2048,
        nesting: true,
        keyctl: true,
      },
      ctx(),
    );
    expect(r).toEqual({ target: "immich", node: "pve1", vmid: 101, hostname: "immich" });
    expect(host.containers.get(101)).toMatchObject({
      hostname: "immich",
      status: "running",
      options: {
        cores: "2",
        memory: "2048",
        features: "nesting=1,keyctl=1",
        net0: "name=eth0,bridge=vmbr0,ip=dhcp",
        rootfs: "local-lvm:8",
        unprivileged: "1",
      },
    });
    const target = await deps.registry.resolve("immich");
    expect(target).toMatchObject({ kind: "container", node: "pve1", vmid: 101, createdBySessionId: sessionId });
    expect(await deps.registry.resolve("pve1/101")).toMatchObject({ name: "immich" });
    const audit = await t.db.kysely
      .selectFrom("audit.events")
      .select("actor")
      .where("table_name", "=", "targets")
      .where("row_key", "=", "immich")
      .execute();
    expect(audit).toEqual([{ actor: `agent:${sessionId}` }]);
    expect(host.log.map((l) => l.command.split(" ").slice(0, 2).join(" "))).toEqual(
      expect.arrayContaining(["pvesh get", "pct create", "pct start", "pct status"]),
    );
  });

  it("tries the next vmid when a concurrent create took the one nextid gave", async () => {
    let calls = 0;
    host.handle("pvesh get /cluster/nextid", (c) => {
      calls++;
      // The first answer is stale: another create already took 101.
      let id = calls === 1 ? 101 : 100;
      while (calls > 1 && host.containers.has(id)) id++;
      c.out(`${id}\n`);
    });
    try {
      const r = await pctCreate(deps, { node: "pve1", hostname: "paperless", ostemplate: template }, ctx());
      expect(r.vmid).toBe(102);
      expect(calls).toBe(2);
    } finally {
      host.resetHandlers();
    }
  });

  it("refuses an explicit vmid that exists, with Proxmox's words", async () => {
    await expect(pctCreate(deps, { node: "pve1", hostname: "dup", ostemplate: template, vmid: 101 }, ctx())).rejects.toThrow(
      /pct create 101 failed on pve1 \(exit 255\): unable to create CT 101 - CT 101 already exists/,
    );
  });

  it.each([
    [{ hostname: "-bad" }, /hostname must be an RFC 1123 host name/],
    [{ hostname: "a".repeat(64) }, /hostname must be an RFC 1123/],
    [{ vmid: 99 }, /vmid must be at least 100/],
    [{ vmid: 1_000_000_000 }, /vmid must be at most 999999999/],
    [{ ostemplate: "local:vztmpl/x.tar.zst; reboot" }, /ostemplate must look like/],
    [{ storage: "local lvm" }, /storage must be a Proxmox storage id/],
    [{ bridge: "vmbr0,ip=1.2.3.4" }, /bridge must be a bridge name/],
    [{ ip: "10.0.0.300/24" }, /ip must be dhcp or an IPv4 address/],
    [{ memory_mb: "lots" }, /memory_mb/],
    [{ extra: 1 }, /extra/],
  ])("refuses bad input %j naming the field, touching no host", async (bad, message) => {
    const before = host.log.length;
    const err = await pctCreate(deps, { node: "pve1", hostname: "ok", ostemplate: template, ...bad }, ctx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PctCreateError);
    expect((err as Error).message).toMatch(message);
    expect(host.log.length).toBe(before);
  });

  it("refuses a node that is not a Proxmox node, and a hostname already taken", async () => {
    await expect(pctCreate(deps, { node: "nas", hostname: "x1", ostemplate: template }, ctx())).rejects.toThrow(
      /node "nas" is not a Proxmox node in the targets file \(it is a ssh target\)/,
    );
    await expect(pctCreate(deps, { node: "pve7", hostname: "x1", ostemplate: template }, ctx())).rejects.toThrow(
      /node "pve7" is not a Proxmox node/,
    );
    await expect(pctCreate(deps, { node: "pve1", hostname: "immich", ostemplate: template }, ctx())).rejects.toThrow(
      /"immich" already exists/,
    );
  });

  it("fails plainly when the container never reaches running, and registers nothing", async () => {
    host.handle(/^pct start \d+$/, () => 0);
    try {
      await expect(pctCreate(deps, { node: "pve1", hostname: "stuck", ostemplate: template }, ctx())).rejects.toThrow(
        /waiting for container \d+ to run \(last: status: stopped\)/,
      );
      expect(await deps.registry.resolve("stuck")).toBeUndefined();
    } finally {
      host.resetHandlers();
    }
  });
});

// The pure parts of the safety net (issue 17): snapshot names Proxmox
// accepts, the commands and how the classifier rates them (snapshot a
// change, listsnapshot a read, rollback and delsnapshot destructive: removing
// any snapshot that is not Nomos's own needs a person), the rollback's typed
// phrase and plain-words effect, the gate keeping a rollback behind the
// phrase inside a window unless the approved plan named it exactly, the
// targets file's `vm` for QEMU guests, and the double's snapshot state.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { confirmationPhraseFor, gateDecide } from "../src/assent/gate.js";
import type { AssentWindowState } from "../src/assent/window.js";
import { guestSnapshotCommand } from "../src/demo/guest-snapshots.js";
import type { CommandContext, Container } from "../src/demo/proxmox-double.js";
import { classifyCommand } from "../src/risk/classify.js";
import { destructiveEffect } from "../src/risk/destructive-effect.js";
import {
  guestDelsnapshotCommand,
  guestRollbackCommand,
  guestStatusCommand,
  guestSnapshotCommand as snapshotCommand,
  snapshotUnsupportedReason,
} from "../src/snapshots/guest-commands.js";
import { hasNomosPrefix, isValidSnapshotName, snapshotNameFor } from "../src/snapshots/snapshot-name.js";
import { parseTargets, TargetsFileError } from "../src/targets/targets-file.js";

const lxc = { node: "pve1", vmid: 105, kind: "lxc" as const };
const qemu = { node: "pve1", vmid: 200, kind: "qemu" as const };

describe("names", () => {
  it("names a plan's snapshot validly for Proxmox, with Nomos's prefix", () => {
    const name = snapshotNameFor("3f2a9c1e-0b7d-4c5e-9a1b-2c3d4e5f6a7b");
    expect(name).toBe("nomos-3f2a9c1e0b7d4c5e");
    expect(isValidSnapshotName(name)).toBe(true);
    expect(name.length).toBeLessThanOrEqual(40);
    expect(hasNomosPrefix(name)).toBe(true);
    expect(hasNomosPrefix("before-upgrade")).toBe(false);
    expect(isValidSnapshotName("1abc")).toBe(false);
    expect(isValidSnapshotName("a".repeat(41))).toBe(false);
    expect(() => snapshotCommand(lxc, "bad name; reboot")).toThrow(/not a valid snapshot name/);
  });
});

describe("commands and their risk", () => {
  it("builds pct and qm commands the classifier rates as the issue says", () => {
    const cases: [string, string][] = [
      [guestStatusCommand(lxc), "read_only"],
      [snapshotCommand(lxc, "nomos-x"), "config_mutation"],
      [snapshotCommand(qemu, "nomos-x"), "config_mutation"],
      ["pct listsnapshot 105", "read_only"],
      ["qm listsnapshot 200", "read_only"],
      [guestRollbackCommand(lxc, "nomos-x", true), "destructive"],
      [guestRollbackCommand(qemu, "nomos-x", false), "destructive"],
      [guestDelsnapshotCommand(lxc, "nomos-x"), "destructive"],
      ["pct delsnapshot 105 before-upgrade", "destructive"],
      ["qm delsnapshot 200 before-upgrade", "destructive"],
    ];
    for (const [command, risk] of cases) expect(classifyCommand(command).risk, command).toBe(risk);
    expect(guestRollbackCommand(lxc, "nomos-x", true)).toBe("pct rollback 105 nomos-x --start 1");
    expect(guestRollbackCommand(qemu, "nomos-x", false)).toBe("qm rollback 200 nomos-x");
  });

  it("gives the rollback a typed phrase and says what it does", () => {
    expect(confirmationPhraseFor("pve1", "pct rollback 105 nomos-x --start 1")).toBe("rollback 105");
    expect(confirmationPhraseFor("pve1", "qm rollback 200 nomos-x")).toBe("rollback 200");
    expect(destructiveEffect("pct rollback 105 nomos-x", "pve1")).toMatch(
      /container 105 back to snapshot nomos-x: every change made on it since/,
    );
    expect(destructiveEffect("qm delsnapshot 200 before-upgrade", "pve1")).toMatch(/deletes snapshot before-upgrade of guest 200/);
  });

  it("recognises a storage that cannot snapshot", () => {
    expect(snapshotUnsupportedReason("snapshot feature is not available\n")).toBe("snapshot feature is not available");
    expect(snapshotUnsupportedReason("  Insufficient free space in thin pool\n")).toBeNull();
  });
});

describe("the gate and a rollback inside a window", () => {
  const window: AssentWindowState = {
    open: true,
    expiresAt: new Date(Date.now() + 60_000),
    scopeTargets: ["pve1", "web1"],
    windowId: "w",
    continuations: 0,
    planId: "p",
    preauthorized: [],
  };
  const target = { name: "pve1" };
  const command = "pct rollback 105 nomos-x";

  it("asks for the phrase unless the approved plan named that exact rollback", () => {
    expect(gateDecide({ window, sessionId: "s", target, risk: "destructive", command })).toMatchObject({
      action: "ask",
      confirmationPhrase: "rollback 105",
    });
    const named = { ...window, preauthorized: [{ target: "pve1", command }] };
    expect(gateDecide({ window: named, sessionId: "s", target, risk: "destructive", command })).toMatchObject({ action: "run" });
    expect(gateDecide({ window: named, sessionId: "s", target, risk: "destructive", command: "pct rollback 105 nomos-y" })).toMatchObject({
      action: "ask",
    });
  });
});

describe("the targets file's vm", () => {
  let dir = "";
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const entry = (name: string, kind: "proxmox" | "ssh", extra: Record<string, unknown> = {}) => ({
    name,
    host: "127.0.0.1",
    username: "root",
    privateKeyPath: "id_ed25519",
    hostKeySha256: `SHA256:${"A".repeat(43)}`,
    kind,
    ...extra,
  });

  it("accepts an ssh host naming its node and vmid, and refuses a vm elsewhere", async () => {
    dir = await mkdtemp(join(tmpdir(), "nomos-vm-"));
    await writeFile(join(dir, "id_ed25519"), "not a real key, only needs to exist");
    const file = join(dir, "targets.json");
    const ok = await parseTargets([entry("pve1", "proxmox"), entry("vm200", "ssh", { vm: { node: "pve1", vmid: 200 } })], file);
    expect(ok[1]).toMatchObject({ name: "vm200", vm: { node: "pve1", vmid: 200 } });
    await expect(parseTargets([entry("pve1", "proxmox", { vm: { node: "pve1", vmid: 200 } })], file)).rejects.toThrow(
      /entry 0 \("pve1"\): vm is only for ssh hosts/,
    );
    await expect(parseTargets([entry("vm200", "ssh", { vm: { node: "pve9", vmid: 200 } })], file)).rejects.toThrow(TargetsFileError);
    await expect(parseTargets([entry("vm200", "ssh", { vm: { node: "pve1", vmid: 12 } })], file)).rejects.toThrow(
      /vm\.vmid must be at least 100/,
    );
  });
});

describe("the double's snapshots", () => {
  function run(host: Parameters<typeof guestSnapshotCommand>[1], kind: "lxc" | "qemu", line: string) {
    let out = "";
    let err = "";
    const ctx = { out: (t: string) => (out += t), err: (t: string) => (err += t) } as unknown as CommandContext;
    const code = guestSnapshotCommand(ctx, host, kind, line.split(" ").slice(1));
    return { code, out, err };
  }
  const vm = (): Container => ({
    vmid: 200,
    hostname: "vm200",
    status: "running",
    ostemplate: "",
    options: { scsi0: "local-lvm:vm-200-disk-0", memory: "2048" },
  });

  it("keeps real state: a rollback restores options and stops the guest unless --start, a dir storage refuses", () => {
    const host = {
      node: "pve1",
      containers: new Map<number, Container>(),
      vms: new Map([[200, vm()]]),
      snapshotlessStorages: new Set(["local"]),
    };
    expect(run(host, "qemu", "qm snapshot 200 nomos-a").code).toBe(0);
    host.vms.get(200)!.options.memory = "8192";
    expect(run(host, "qemu", "qm listsnapshot 200").out).toMatch(/nomos-a/);
    expect(run(host, "qemu", "qm rollback 200 nomos-a").code).toBe(0);
    expect(host.vms.get(200)).toMatchObject({ status: "stopped", options: { memory: "2048" } });
    expect(run(host, "qemu", "qm snapshot 200 nomos-a")).toMatchObject({ code: 255, err: "snapshot name 'nomos-a' already used\n" });
    expect(run(host, "qemu", "qm delsnapshot 200 nomos-a").code).toBe(0);
    expect(run(host, "qemu", "qm delsnapshot 200 nomos-a")).toMatchObject({ code: 255, err: "snapshot 'nomos-a' does not exist\n" });
    host.vms.get(200)!.options.scsi0 = "local:200/vm-200-disk-0.raw";
    expect(run(host, "qemu", "qm snapshot 200 nomos-b")).toMatchObject({ code: 255, err: "snapshot feature is not available\n" });
    expect(run(host, "qemu", "qm snapshot 201 nomos-b")).toMatchObject({
      code: 255,
      err: expect.stringMatching(/qemu-server\/201\.conf' does not exist/),
    });
  });
});

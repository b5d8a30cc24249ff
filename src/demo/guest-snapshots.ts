// The Proxmox double's snapshots (issue 17): `pct|qm snapshot|listsnapshot|
// rollback|delsnapshot` (and `qm status|start|stop` for VMs) on the double's
// own guests, with real state: a snapshot keeps a copy of the guest's files
// and options, a rollback puts them back (a file written after the snapshot
// is gone, an option changed since is restored) and leaves the guest stopped
// unless `--start 1`. A guest whose rootfs (or scsi0/virtio0) lives on a
// storage in host.snapshotlessStorages (a `dir` storage) is refused with
// Proxmox's own words: "snapshot feature is not available". Messages and exit
// codes (255) follow Proxmox's.
import type { CommandContext, Container } from "./proxmox-double.js";

export interface GuestSnapshotState {
  files: Map<string, string>;
  options: Record<string, string>;
  takenAt: Date;
  description: string;
}

interface SnapshotHost {
  readonly node: string;
  readonly containers: Map<number, Container>;
  readonly vms: Map<number, Container>;
  readonly snapshotlessStorages: Set<string>;
}

const PROXMOX_SNAPSHOT_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,39}$/;

/** The storage a guest's root disk is on ("local-lvm:8" -> "local-lvm"). */
function storageOf(g: Container): string {
  const disk = g.options.rootfs ?? g.options.scsi0 ?? g.options.virtio0 ?? "local-lvm:8";
  return disk.split(":")[0] ?? "local-lvm";
}

/** Handles a snapshot subcommand for `kind`; undefined when `args` is not one (the caller goes on). */
export function guestSnapshotCommand(ctx: CommandContext, host: SnapshotHost, kind: "lxc" | "qemu", args: string[]): number | undefined {
  const [sub, idText, ...rest] = args;
  const handled = ["snapshot", "listsnapshot", "rollback", "delsnapshot", ...(kind === "qemu" ? ["status", "start", "stop"] : [])];
  if (!handled.includes(sub ?? "")) return undefined;
  const guests = kind === "qemu" ? host.vms : host.containers;
  const vmid = Number(idText);
  const g = guests.get(vmid);
  if (!g) {
    ctx.err(`Configuration file 'nodes/${host.node}/${kind === "qemu" ? "qemu-server" : "lxc"}/${idText ?? ""}.conf' does not exist\n`);
    return 255;
  }
  g.snapshots ??= new Map();
  g.files ??= new Map();
  const snaps = g.snapshots;
  const name = rest[0] ?? "";
  const option = (flag: string) => {
    const i = rest.indexOf(flag);
    return i >= 0 ? rest[i + 1] : undefined;
  };
  switch (sub) {
    case "status":
      ctx.out(`status: ${g.status}\n`);
      return 0;
    case "start":
      g.status = "running";
      return 0;
    case "stop":
      g.status = "stopped";
      return 0;
    case "snapshot": {
      if (!PROXMOX_SNAPSHOT_NAME.test(name)) {
        ctx.err(`snapname: invalid format - invalid configuration ID '${name}'\n`);
        return 255;
      }
      if (snaps.has(name)) {
        ctx.err(`snapshot name '${name}' already used\n`);
        return 255;
      }
      if (host.snapshotlessStorages.has(storageOf(g))) {
        ctx.err("snapshot feature is not available\n");
        return 255;
      }
      snaps.set(name, {
        files: new Map(g.files),
        options: { ...g.options },
        takenAt: new Date(),
        description: option("--description") ?? "",
      });
      ctx.out(`  Logical volume "snap_vm-${vmid}-disk-0_${name}" created.\n`);
      return 0;
    }
    case "listsnapshot":
      for (const [n, snap] of snaps) {
        ctx.out(
          `\`-> ${n.padEnd(24)} ${snap.takenAt.toISOString().slice(0, 19).replace("T", " ")}     ${snap.description || "no-description"}\n`,
        );
      }
      ctx.out(" `-> current                                        You are here!\n");
      return 0;
    case "rollback": {
      const snap = snaps.get(name);
      if (!snap) {
        ctx.err(`snapshot '${name}' does not exist\n`);
        return 255;
      }
      g.files = new Map(snap.files);
      g.options = { ...snap.options };
      const start = option("--start");
      g.status = start === "1" || start === "true" ? "running" : "stopped";
      return 0;
    }
    case "delsnapshot":
      if (!snaps.delete(name)) {
        ctx.err(`snapshot '${name}' does not exist\n`);
        return 255;
      }
      return 0;
  }
  return undefined;
}

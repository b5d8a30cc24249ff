// apt and dpkg in a simulated container: the dpkg lock and who holds it,
// an interrupted dpkg, the mirror's reachability (route and DNS), free
// space for the archives, and the services packages bring. Messages are
// Debian 12's. Invariant: a package is installed only when every one of
// those conditions holds, and installing its service starts it.

import type { ShellIo } from "./container-files.js";
import { addService, type ContainerState, dnsWorks, freeMb, online, PACKAGES, serviceStart, serviceStop } from "./container-state.js";

export const LOCK = "/var/lib/dpkg/lock-frontend";
export const LOCK_FILES = new Set([LOCK, "/var/lib/dpkg/lock", "/var/lib/apt/lists/lock", "/var/cache/apt/archives/lock"]);

export function apt(ct: ContainerState, args: string[], io: ShellIo): number {
  const sub = args.find((a) => !a.startsWith("-"));
  const pkgs = args.filter((a) => !a.startsWith("-") && a !== sub);
  const holder = [...ct.processes.values()].find((p) => p.holdsDpkgLock);
  if (sub !== "update" && holder && !ct.dpkgDamaged) {
    io.err(
      `E: Could not get lock ${LOCK}. It is held by process ${holder.pid} (${holder.command.split(" ")[0]})\nN: Be aware that removing the lock file is not a solution and may break your system.\nE: Unable to acquire the dpkg frontend lock (${LOCK}), is another process using it?\n`,
    );
    return 100;
  }
  if (sub !== "update" && ct.dpkgInterrupted) {
    io.err("E: dpkg was interrupted, you must manually run 'dpkg --configure -a' to correct the problem.\n");
    return 100;
  }
  const unreachable = () => {
    if (!online(ct)) {
      io.err(
        `Err:1 http://deb.debian.org/debian bookworm InRelease\n  ${ct.gateway === null ? "Network is unreachable" : "Could not connect to deb.debian.org:80, connection timed out"}\n`,
      );
      return true;
    }
    if (!dnsWorks(ct)) {
      io.err("Err:1 http://deb.debian.org/debian bookworm InRelease\n  Temporary failure resolving 'deb.debian.org'\n");
      return true;
    }
    return false;
  };
  if (sub === "update") {
    if (unreachable()) {
      io.err("W: Some index files failed to download. They have been ignored, or old ones used instead.\n");
      return 100;
    }
    io.out("Hit:1 http://deb.debian.org/debian bookworm InRelease\nReading package lists... Done\n");
    return 0;
  }
  if (sub === "install") {
    const unknown = pkgs.filter((p) => !(p in PACKAGES) && !ct.packages.has(p));
    if (unknown.length) {
      io.err(`E: Unable to locate package ${unknown[0]}\n`);
      return 100;
    }
    const todo = pkgs.filter((p) => !ct.packages.has(p));
    if (todo.length === 0) {
      io.out(`${pkgs.join(", ")} is already the newest version.\n`);
      return 0;
    }
    const need = todo.reduce((n, p) => n + PACKAGES[p]!.sizeMb, 0);
    if (freeMb(ct) < need + 100) {
      io.err("E: You don't have enough free space in /var/cache/apt/archives/.\n");
      return 100;
    }
    if (unreachable()) {
      io.err(
        `E: Failed to fetch http://deb.debian.org/debian/pool/main/${todo[0]}.deb\nE: Unable to fetch some archives, maybe run apt-get update or try with --fix-missing?\n`,
      );
      return 100;
    }
    for (const p of todo) {
      ct.packages.add(p);
      io.out(`Setting up ${p} ...\n`);
      const pkg = PACKAGES[p]!;
      if (pkg.service && !ct.services.has(pkg.service)) {
        const svc = addService(ct, pkg.service, pkg.spec ?? {});
        const why = serviceStart(ct, svc);
        if (why) io.err(`Job for ${svc.name}.service failed because the control process exited with error code.\n`);
      }
    }
    return 0;
  }
  if (sub === "remove" || sub === "purge") {
    for (const p of pkgs) {
      ct.packages.delete(p);
      const svc = ct.services.get(p);
      if (svc) {
        serviceStop(ct, svc);
        ct.services.delete(p);
      }
    }
    return 0;
  }
  io.err(`E: Invalid operation ${sub}\n`);
  return 100;
}

export function dpkg(ct: ContainerState, args: string[], io: ShellIo): number {
  if (args.includes("--configure")) {
    if ([...ct.processes.values()].some((p) => p.holdsDpkgLock)) {
      io.err("dpkg: error: dpkg frontend lock was locked by another process\n");
      return 2;
    }
    ct.dpkgInterrupted = false;
    io.out("Setting up unattended-upgrades ...\n");
    return 0;
  }
  if (args[0] === "-l" || args[0] === "-s") {
    const pkg = args[1] ?? "";
    if (!ct.packages.has(pkg)) {
      io.err(`dpkg-query: no packages found matching ${pkg}\n`);
      return 1;
    }
    io.out(`ii  ${pkg}  all  installed\n`);
    return 0;
  }
  io.err("dpkg: only --configure -a, -l and -s are simulated\n");
  return 2;
}

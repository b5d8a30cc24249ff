// systemd in a simulated container: systemctl, journalctl, and kill/pkill
// (which end a unit's process, or the dpkg lock's holder). Invariant: a
// unit is active only when serviceStart (container-state.ts) let it run;
// a Type=simple unit that dies says so only to a later look.

import type { ShellIo } from "./container-files.js";
import { type ContainerState, type Service, serviceStart, serviceStop } from "./container-state.js";

function unitOf(ct: ContainerState, name: string): Service | undefined {
  return ct.services.get(name.replace(/\.service$/, ""));
}

export function systemctl(ct: ContainerState, args: string[], io: ShellIo): number {
  const words = args.filter((a) => !a.startsWith("-"));
  const now = args.includes("--now");
  const [sub, ...units] = words;
  if (sub === "daemon-reload") return 0;
  if (sub === "list-units" || sub === "--failed") {
    for (const s of ct.services.values()) io.out(`${s.name}.service loaded ${s.active ? "active running" : "failed failed"}\n`);
    return 0;
  }
  let code = 0;
  for (const u of units) {
    const svc = unitOf(ct, u);
    if (!svc) {
      io.err(
        sub === "status"
          ? `Unit ${u.replace(/\.service$/, "")}.service could not be found.\n`
          : `Failed to ${sub} ${u}: Unit ${u} not found.\n`,
      );
      code = sub === "status" ? 4 : 5;
      continue;
    }
    const start = () => {
      const why = serviceStart(ct, svc);
      // A simple service "starts" and dies a moment later: only a later look shows it.
      if (why && !svc.diesAfterStart) {
        io.err(
          `Job for ${svc.name}.service failed because the control process exited with error code.\nSee "systemctl status ${svc.name}.service" and "journalctl -xeu ${svc.name}.service" for details.\n`,
        );
        code = 1;
      }
    };
    switch (sub) {
      case "start":
        start();
        break;
      case "restart":
      case "reload-or-restart":
        serviceStop(ct, svc);
        start();
        break;
      case "stop":
        serviceStop(ct, svc);
        break;
      case "enable":
        svc.enabled = true;
        if (now) start();
        break;
      case "disable":
        svc.enabled = false;
        if (now) serviceStop(ct, svc);
        break;
      case "mask":
        svc.enabled = false;
        break;
      case "is-active":
        io.out(svc.active ? "active\n" : "failed\n");
        if (!svc.active) code = 3;
        break;
      case "is-enabled":
        io.out(svc.enabled ? "enabled\n" : "disabled\n");
        break;
      case "status":
        io.out(
          `● ${svc.name}.service\n     Loaded: loaded (/lib/systemd/system/${svc.name}.service; ${svc.enabled ? "enabled" : "disabled"})\n     Active: ${svc.active ? "active (running)" : "failed (Result: exit-code)"}\n`,
        );
        for (const l of svc.journal.slice(-5)) io.out(`${l}\n`);
        if (!svc.active) code = 3;
        break;
      default:
        io.err(`Unknown command verb ${sub}.\n`);
        return 1;
    }
  }
  return code;
}

export function journalctl(ct: ContainerState, args: string[], io: ShellIo): number {
  const vacuum = args.find((a) => a.startsWith("--vacuum-size="));
  if (vacuum) {
    const m = /=(\d+)([MG]?)/.exec(vacuum);
    const limit = m ? Number(m[1]) * (m[2] === "G" ? 1024 : 1) : 0;
    const freed = Math.max(0, ct.journalMb - limit);
    ct.journalMb -= freed;
    io.err(`Vacuuming done, freed ${freed}M of archived journals from /var/log/journal.\n`);
    return 0;
  }
  if (args.includes("--disk-usage")) {
    io.out(`Archived and active journals take up ${ct.journalMb}M in the file system.\n`);
    return 0;
  }
  const u = args.indexOf("-u");
  const unitArg = u >= 0 ? args[u + 1] : args.find((a) => a.startsWith("--unit="))?.slice(7);
  const n = args.indexOf("-n");
  const limit = n >= 0 ? Number(args[n + 1]) : 50;
  const lines = unitArg ? (unitOf(ct, unitArg)?.journal ?? []) : [...ct.services.values()].flatMap((s) => s.journal);
  if (lines.length === 0) io.out("-- No entries --\n");
  for (const l of lines.slice(-limit)) io.out(`Nov 30 05:00:00 ${ct.hostname} ${l}\n`);
  return 0;
}

export function kill(ct: ContainerState, name: string, args: string[], io: ShellIo): number {
  const hard = args.includes("-9") || args.includes("-KILL") || args.includes("-SIGKILL");
  const targets =
    name === "pkill"
      ? [...ct.processes.values()].filter((p) => new RegExp(args.filter((a) => !a.startsWith("-")).at(-1) ?? "^$").test(p.command))
      : args.filter((a) => /^\d+$/.test(a)).map((a) => ct.processes.get(Number(a)));
  let code = 0;
  for (const p of targets) {
    if (!p) {
      io.err(`kill: (${args.at(-1)}) - No such process\n`);
      code = 1;
      continue;
    }
    ct.processes.delete(p.pid);
    if (p.holdsDpkgLock && hard) ct.dpkgInterrupted = true;
    const svc = p.unit ? ct.services.get(p.unit) : undefined;
    if (svc && svc.pid === p.pid) {
      svc.active = false;
      svc.journal.push(`systemd[1]: ${svc.name}.service: Main process exited, code=killed`);
    }
  }
  return code;
}

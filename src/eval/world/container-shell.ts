// The shell of a simulated Debian container: interprets the commands an
// operator (or a model) types to look at and repair a container, answering
// from its ContainerState (container-state.ts) as Debian 12 would, errors
// worded like the real tools so the right diagnosis finds the cause.
//
// Understood: lists (`&&`, `||`, `;`), pipes into grep/tail/head/wc, `>`,
// `>>`, `2>&1`, here-documents to cat/tee; files (cat, ls, head, tail, grep,
// echo, printf, tee, sed -i s///, mkdir, touch, cp, mv, rm, truncate, chown,
// chmod, test), apt/dpkg, systemctl/service/journalctl, ps/kill/fuser/lsof,
// df/du, ip route/addr, ping, getent/nslookup/host/dig, curl, docker
// compose/volume. Anything else is "command not found" (exit 127).
//
// Invariant: commands change only the state they name, and every answer is
// read from the state; nothing here knows which scenario is running.
import { posix } from "node:path";
import { parseShell } from "../../risk/shell-words.js";
import {
  addService,
  type ContainerState,
  dnsWorks,
  freeMb,
  listener,
  online,
  PACKAGES,
  type Service,
  serviceStart,
  serviceStop,
  usedMb,
} from "./container-state.js";
import { splitList, splitPipe } from "./shell-split.js";

export interface ShellIo {
  out(text: string): void;
  err(text: string): void;
}

const LOCK = "/var/lib/dpkg/lock-frontend";
const LOCK_FILES = new Set([LOCK, "/var/lib/dpkg/lock", "/var/lib/apt/lists/lock", "/var/cache/apt/archives/lock"]);
/** The working directory of the line being run (`cd` changes it for the rest of the line). */
let cwd = "/root";

const HEREDOC = /^(?:mkdir -p (\S+) && )?(?:cat|tee)( -a)? ?(>>?)? ?(\S+) <<-?\s*'?"?(\w+)'?"?\n([\s\S]*?)\n\5\s*$/;

/** Runs one command line in the container; returns its exit code. */
export function containerShell(ct: ContainerState, line: string, io: ShellIo): number {
  cwd = "/root";
  const doc = HEREDOC.exec(line.trim());
  if (doc) {
    const [, dir, teeAppend, redirect, file, , body] = doc;
    if (dir) mkdirs(ct, dir);
    const path = posix.resolve(cwd, file!);
    if (!ct.files.has(posix.dirname(path)) && !dirExists(ct, posix.dirname(path))) {
      io.err(`bash: line 1: ${path}: No such file or directory\n`);
      return 1;
    }
    const append = redirect === ">>" || teeAppend !== undefined;
    ct.files.set(path, `${append ? (ct.files.get(path) ?? "") : ""}${body}\n`);
    if (!redirect) io.out(`${body}\n`);
    return 0;
  }
  let code = 0;
  for (const item of splitList(line)) {
    if (item.op === "&&" && code !== 0) continue;
    if (item.op === "||" && code === 0) continue;
    code = pipeline(ct, item.text, io);
  }
  return code;
}

function pipeline(ct: ContainerState, text: string, io: ShellIo): number {
  const [first, ...filters] = splitPipe(text);
  if (filters.length === 0) return simple(ct, first ?? "", io);
  let buffered = "";
  let code = simple(ct, first!, { out: (t) => (buffered += t), err: io.err });
  for (const f of filters) {
    const words = wordsOf(f);
    if (!words) return 2;
    if ((words[0] === "sh" || words[0] === "bash") && words.length === 1) {
      io.err("sh: refusing to run a downloaded script in the simulated container\n");
      return 1;
    }
    const filtered = filter(words, buffered);
    if (filtered === undefined) {
      io.err(`bash: line 1: ${words[0]}: command not found\n`);
      return 127;
    }
    buffered = filtered.text;
    code = filtered.code;
  }
  io.out(buffered);
  return code;
}

function filter(words: string[], input: string): { text: string; code: number } | undefined {
  const lines = input.split("\n").filter((l, i, all) => l !== "" || i < all.length - 1);
  const [name, ...args] = words;
  const num = (def: number) => {
    const i = args.indexOf("-n");
    if (i >= 0) return Number(args[i + 1]);
    const short = args.find((a) => /^-\d+$/.test(a));
    return short ? Number(short.slice(1)) : def;
  };
  const join = (ls: string[]) => (ls.length ? `${ls.join("\n")}\n` : "");
  if (name === "grep") {
    const flags = args.filter((a) => a.startsWith("-")).join("");
    const pattern = args.find((a) => !a.startsWith("-")) ?? "";
    const re = new RegExp(pattern.replace(/\\\|/g, "|"), flags.includes("i") ? "i" : "");
    const kept = lines.filter((l) => re.test(l) !== flags.includes("v"));
    return { text: join(kept), code: kept.length ? 0 : 1 };
  }
  if (name === "tail") return { text: join(lines.slice(-num(10))), code: 0 };
  if (name === "head") return { text: join(lines.slice(0, num(10))), code: 0 };
  if (name === "wc" && args[0] === "-l") return { text: `${lines.length}\n`, code: 0 };
  if (name === "sort") return { text: join([...lines].sort()), code: 0 };
  if (name === "cat" || name === "less" || name === "more") return { text: input, code: 0 };
  return undefined;
}

function wordsOf(text: string): string[] | undefined {
  try {
    return parseShell(text).commands[0]?.words.map((w) => w.text) ?? [];
  } catch {
    return undefined;
  }
}

function simple(ct: ContainerState, text: string, io: ShellIo): number {
  let parsed: ReturnType<typeof parseShell>;
  try {
    parsed = parseShell(text);
  } catch (err) {
    io.err(`bash: syntax error: ${(err as Error).message}\n`);
    return 2;
  }
  const cmd = parsed.commands[0];
  if (!cmd) return 0;
  let words = cmd.words.map((w) => w.text);
  while (words[0] === "sudo" || /^[A-Z_]+=/.test(words[0] ?? "")) words = words.slice(1);
  // Redirections: stdout to a file, stderr to stdout or /dev/null.
  let out = io.out;
  let err = io.err;
  let sink: { path: string; append: boolean; text: string } | undefined;
  for (const r of cmd.redirects) {
    const target = r.target.text;
    if ((r.op === ">" || r.op === ">>" || r.op === "&>") && (r.fd ?? 1) === 1) {
      if (target === "/dev/null") out = () => {};
      else sink = { path: posix.resolve(cwd, target), append: r.op === ">>", text: "" };
      if (r.op === "&>") err = out;
    } else if (r.op === ">" && r.fd === 2 && target === "/dev/null") err = () => {};
    else if (r.op === ">&" && r.fd === 2 && target === "1") err = out;
  }
  if (sink) {
    const s = sink;
    out = (t) => (s.text += t);
    if (!dirExists(ct, posix.dirname(s.path))) {
      io.err(`bash: line 1: ${s.path}: No such file or directory\n`);
      return 1;
    }
  }
  const code = command(ct, words, { out, err });
  if (sink) ct.files.set(sink.path, (sink.append ? (ct.files.get(sink.path) ?? "") : "") + sink.text);
  return code;
}

function dirExists(ct: ContainerState, dir: string): boolean {
  if (["/", "/etc", "/root", "/tmp", "/var", "/var/log", "/var/lib", "/opt", "/srv", "/usr", "/home"].includes(dir)) return true;
  const d = dir.endsWith("/") ? dir : `${dir}/`;
  for (const f of [...ct.files.keys(), ...ct.sizesMb.keys()]) if (f.startsWith(d)) return true;
  return ct.files.has(`${d}.dir`);
}

function mkdirs(ct: ContainerState, dir: string): void {
  const d = posix.resolve(cwd, dir);
  if (!dirExists(ct, d)) ct.files.set(`${d}/.dir`, "");
}

function command(ct: ContainerState, words: string[], io: ShellIo): number {
  const [name = "", ...args] = words;
  const paths = args.filter((a) => !a.startsWith("-")).map((a) => posix.resolve(cwd, a));
  const missing = (tool: string, p: string) => {
    io.err(`${tool}: ${p}: No such file or directory\n`);
    return 1;
  };
  switch (name) {
    case "true":
    case ":":
      return 0;
    case "cd": {
      const dir = posix.resolve(cwd, args[0] ?? "/root");
      if (!dirExists(ct, dir)) {
        io.err(`bash: line 1: cd: ${dir}: No such file or directory\n`);
        return 1;
      }
      cwd = dir;
      return 0;
    }
    case "ss":
    case "netstat": {
      io.out("State  Recv-Q Send-Q Local Address:Port Peer Address:Port Process\n");
      for (const s of ct.services.values()) {
        if (s.active && s.port !== undefined)
          io.out(`LISTEN 0      511    0.0.0.0:${s.port}  0.0.0.0:*  users:(("${s.name}",pid=${s.pid},fd=6))\n`);
      }
      return 0;
    }
    case "false":
      return 1;
    case "hostname":
      io.out(`${ct.hostname}\n`);
      return 0;
    case "whoami":
      io.out("root\n");
      return 0;
    case "uname":
      io.out("Linux 6.8.12-4-pve x86_64 GNU/Linux\n");
      return 0;
    case "sleep":
      return 0;
    case "echo":
      io.out(`${args.filter((a) => a !== "-e" && a !== "-n").join(" ")}\n`);
      return 0;
    case "printf":
      io.out((args[0] ?? "").replace(/\\n/g, "\n").replace(/%s/g, () => args.splice(1, 1)[0] ?? ""));
      return 0;
    case "cat":
    case "head":
    case "tail":
    case "less": {
      if (args.includes("-f")) {
        io.err(`${name}: following a file is not supported here; use tail -n\n`);
        return 1;
      }
      let status = 0;
      for (const p of paths.filter((p) => !/^\/root\/\d+$/.test(p))) {
        const body = readFile(ct, p);
        if (body === undefined) status = missing(name, p);
        else
          io.out(
            name === "cat" || name === "less"
              ? body
              : (filter([name, ...args.filter((a) => a.startsWith("-") || /^\d+$/.test(a))], body)?.text ?? body),
          );
      }
      return status;
    }
    case "grep": {
      const pattern = args.find((a) => !a.startsWith("-"));
      const files = paths.slice(1);
      let found = false;
      for (const p of files) {
        const body = readFile(ct, p);
        if (body === undefined) return missing("grep", p);
        const r = filter(["grep", ...args.filter((a) => a.startsWith("-")), pattern ?? ""], body)!;
        if (r.code === 0) found = true;
        io.out(r.text);
      }
      return found ? 0 : 1;
    }
    case "ls": {
      const dir = paths[0] ?? "/root";
      if (ct.files.has(dir) || ct.sizesMb.has(dir)) {
        io.out(`${dir}\n`);
        return 0;
      }
      if (!dirExists(ct, dir)) {
        io.err(`ls: cannot access '${dir}': No such file or directory\n`);
        return 2;
      }
      const prefix = dir.endsWith("/") ? dir : `${dir}/`;
      const names = new Set<string>();
      for (const f of [...ct.files.keys(), ...ct.sizesMb.keys()]) {
        if (f.startsWith(prefix) && !f.endsWith("/.dir")) names.add(f.slice(prefix.length).split("/")[0]!);
      }
      const long = args.some((a) => /^-\w*l/.test(a));
      for (const n of [...names].sort()) {
        const mb = ct.sizesMb.get(prefix + n);
        io.out(
          long ? `-rw-r--r-- 1 root root ${mb === undefined ? (ct.files.get(prefix + n)?.length ?? 4096) : mb * 1048576} ${n}\n` : `${n}\n`,
        );
      }
      return 0;
    }
    case "test":
    case "[": {
      const p = paths[0] ?? "";
      const exists = ct.files.has(p) || ct.sizesMb.has(p) || dirExists(ct, p);
      return exists ? 0 : 1;
    }
    case "mkdir":
      for (const p of paths) mkdirs(ct, p);
      return 0;
    case "touch":
      for (const p of paths) if (!ct.files.has(p)) ct.files.set(p, "");
      return 0;
    case "chown":
    case "chmod":
    case "chgrp":
      for (const p of paths.slice(1)) if (readFile(ct, p) === undefined && !dirExists(ct, p)) return missing(name, p);
      return 0;
    case "cp":
    case "mv": {
      const [from, to] = paths.slice(-2);
      const body = from === undefined ? undefined : ct.files.get(from);
      if (body === undefined) return missing(name, from ?? "");
      const dest = dirExists(ct, to!) ? posix.join(to!, posix.basename(from!)) : to!;
      ct.files.set(dest, body);
      if (name === "mv") ct.files.delete(from!);
      return 0;
    }
    case "rm": {
      for (const p of paths) {
        if (LOCK_FILES.has(p)) {
          if ([...ct.processes.values()].some((x) => x.holdsDpkgLock)) ct.dpkgDamaged = true;
          continue;
        }
        const inside = `${p.replace(/\/$/, "")}/`;
        let removed = ct.files.delete(p) || ct.sizesMb.delete(p);
        for (const f of [...ct.files.keys()]) if (f.startsWith(inside)) removed = ct.files.delete(f) || removed;
        for (const f of [...ct.sizesMb.keys()]) if (f.startsWith(inside)) removed = ct.sizesMb.delete(f) || removed;
        if (!removed && !args.some((a) => /^-\w*f/.test(a))) return missing("rm: cannot remove", p);
      }
      return 0;
    }
    case "truncate": {
      const p = paths.at(-1)!;
      if (readFile(ct, p) === undefined) return missing("truncate", p);
      if (ct.sizesMb.has(p)) ct.sizesMb.set(p, 0);
      ct.files.set(p, "");
      return 0;
    }
    case "sed":
      return sed(ct, args, io);
    case "tee": {
      io.err("tee: reading standard input is not supported here; use a here-document\n");
      return 1;
    }
    case "df": {
      const total = ct.diskMb;
      const used = Math.min(total, usedMb(ct));
      const pct = Math.round((used / total) * 100);
      io.out("Filesystem                     Size  Used Avail Use% Mounted on\n");
      io.out(`/dev/mapper/pve-vm--${ct.vmid}--disk--0  ${gb(total)}  ${gb(used)}  ${gb(total - used)}  ${pct}% /\n`);
      return 0;
    }
    case "du":
      return du(ct, paths.length ? paths : ["/root"], io);
    case "apt":
    case "apt-get":
      return apt(ct, args, io);
    case "dpkg":
      return dpkg(ct, args, io);
    case "systemctl":
      return systemctl(ct, args, io);
    case "service":
      return systemctl(ct, [args[1] ?? "status", args[0] ?? ""], io);
    case "journalctl":
      return journalctl(ct, args, io);
    case "ps":
      io.out("USER       PID COMMAND\n");
      for (const p of ct.processes.values()) io.out(`${p.user.padEnd(10)} ${String(p.pid).padStart(4)} ${p.command}\n`);
      return 0;
    case "pgrep": {
      const re = new RegExp(args.find((a) => !a.startsWith("-")) ?? "^$");
      const hits = [...ct.processes.values()].filter((p) => re.test(p.command));
      for (const p of hits) io.out(`${p.pid}\n`);
      return hits.length ? 0 : 1;
    }
    case "kill":
    case "pkill":
      return kill(ct, name, args, io);
    case "fuser":
    case "lsof": {
      const holder = [...ct.processes.values()].find((p) => p.holdsDpkgLock);
      if (!holder || !paths.some((p) => LOCK_FILES.has(p))) return 1;
      io.out(
        name === "fuser"
          ? `${paths[0]}: ${holder.pid}\n`
          : `COMMAND PID USER FD TYPE\n${holder.command.split(" ")[0]} ${holder.pid} root 5uW REG\n`,
      );
      return 0;
    }
    case "ip":
      return ip(ct, args, io);
    case "ping": {
      const host = args.filter((a) => !a.startsWith("-") && !/^\d+$/.test(a)).at(-1) ?? "";
      const isIp = /^\d+\.\d+\.\d+\.\d+$/.test(host);
      if (!isIp && !(dnsWorks(ct) || host === "localhost")) {
        io.err(`ping: ${host}: Temporary failure in name resolution\n`);
        return 2;
      }
      const local = host === ct.lanGateway || host === "localhost" || host.startsWith("127.");
      if (!local && !online(ct)) {
        io.err(
          ct.gateway === null
            ? "ping: connect: Network is unreachable\n"
            : `From ${ct.address.split("/")[0]} icmp_seq=1 Destination Host Unreachable\n`,
        );
        return ct.gateway === null ? 2 : 1;
      }
      io.out(`64 bytes from ${host}: icmp_seq=1 ttl=57 time=12.1 ms\n\n1 packets transmitted, 1 received, 0% packet loss\n`);
      return 0;
    }
    case "getent":
    case "nslookup":
    case "host":
    case "dig": {
      const host = args.filter((a) => !a.startsWith("-") && !a.startsWith("+") && a !== "hosts").at(-1) ?? "";
      if (!dnsWorks(ct)) {
        io.err(name === "nslookup" || name === "dig" ? ";; communications error: timed out\n;; no servers could be reached\n" : "");
        return name === "getent" ? 2 : 1;
      }
      io.out(`151.101.2.132   ${host}\n`);
      return 0;
    }
    case "curl":
    case "wget":
      return curl(ct, args, io);
    case "docker":
      return docker(ct, args, io);
  }
  io.err(`bash: line 1: ${name}: command not found\n`);
  return 127;
}

const gb = (mb: number) => `${(mb / 1024).toFixed(1)}G`;

function readFile(ct: ContainerState, p: string): string | undefined {
  if (ct.files.has(p)) return ct.files.get(p);
  if (ct.sizesMb.has(p)) return `[${ct.sizesMb.get(p)} MB of log lines]\n`;
  if (p.startsWith("/var/log/")) return undefined;
  return undefined;
}

function sed(ct: ContainerState, args: string[], io: ShellIo): number {
  if (!args.includes("-i")) {
    io.err("sed: only in-place edits (sed -i) are simulated\n");
    return 1;
  }
  const script = args.find((a) => !a.startsWith("-"))!;
  const file = posix.resolve(cwd, args.filter((a) => !a.startsWith("-")).at(-1) ?? "");
  const m = /^s(.)(.*?)\1(.*?)\1(g?)$/.exec(script ?? "");
  if (!m) {
    io.err(`sed: -e expression #1: unknown command in '${script}'\n`);
    return 1;
  }
  const body = ct.files.get(file);
  if (body === undefined) {
    io.err(`sed: can't read ${file}: No such file or directory\n`);
    return 2;
  }
  const re = new RegExp(m[2]!.replace(/\\\//g, "/"), m[4] ? "gm" : "m");
  ct.files.set(file, body.replace(re, m[3]!.replace(/\\\//g, "/").replace(/\\&/g, "&")));
  return 0;
}

function du(ct: ContainerState, paths: string[], io: ShellIo): number {
  for (const p of paths) {
    const prefix = p === "/" ? "/" : `${p.replace(/\/$/, "")}/`;
    let mb = 0;
    for (const [f, size] of ct.sizesMb) if (f === p || f.startsWith(prefix)) mb += size;
    if (p === "/var/log" || p === "/var/log/journal" || p === "/var" || p === "/") mb += ct.journalMb;
    if (p === "/") mb += ct.baseUsedMb;
    io.out(`${mb >= 1024 ? gb(mb) : `${mb}M`}\t${p}\n`);
  }
  return 0;
}

function apt(ct: ContainerState, args: string[], io: ShellIo): number {
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

function dpkg(ct: ContainerState, args: string[], io: ShellIo): number {
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

function unitOf(ct: ContainerState, name: string): Service | undefined {
  return ct.services.get(name.replace(/\.service$/, ""));
}

function systemctl(ct: ContainerState, args: string[], io: ShellIo): number {
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

function journalctl(ct: ContainerState, args: string[], io: ShellIo): number {
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

function kill(ct: ContainerState, name: string, args: string[], io: ShellIo): number {
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

function ip(ct: ContainerState, args: string[], io: ShellIo): number {
  const [object = "", sub, ...rest] = args.filter((a) => !["-4", "-br", "-c"].includes(a));
  if (object.startsWith("r")) {
    if (sub === "add" || sub === "replace") {
      const via = rest[rest.indexOf("via") + 1];
      if (rest[0] !== "default" || !via) {
        io.err("Error: only default routes are simulated.\n");
        return 2;
      }
      if (sub === "add" && ct.gateway !== null) {
        io.err("RTNETLINK answers: File exists\n");
        return 2;
      }
      ct.gateway = via;
      return 0;
    }
    if (sub === "del" || sub === "delete") {
      ct.gateway = null;
      return 0;
    }
    const net = ct.address.replace(/\.\d+\/24$/, ".0/24");
    if (ct.gateway) io.out(`default via ${ct.gateway} dev eth0 onlink\n`);
    io.out(`${net} dev eth0 proto kernel scope link src ${ct.address.split("/")[0]}\n`);
    return 0;
  }
  if (object.startsWith("a")) {
    io.out(
      `1: lo: <LOOPBACK,UP> mtu 65536\n    inet 127.0.0.1/8 scope host lo\n2: eth0@if12: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500\n    inet ${ct.address} brd ${ct.address.replace(/\.\d+\/24$/, ".255")} scope global eth0\n`,
    );
    return 0;
  }
  io.err(`Object "${object}" is unknown, try "ip help".\n`);
  return 1;
}

function curl(ct: ContainerState, args: string[], io: ShellIo): number {
  const url = args.find((a) => /^(https?:\/\/|localhost|127\.)/.test(a)) ?? "";
  const m = /^(?:https?:\/\/)?([^/:]+)(?::(\d+))?/.exec(url);
  const host = m?.[1] ?? "";
  const port = Number(m?.[2] ?? (url.startsWith("https") ? 443 : 80));
  const silentFail = args.some((a) => /^-\w*f/.test(a));
  if (host === "localhost" || host.startsWith("127.") || host === ct.address.split("/")[0]) {
    const svc = listener(ct, port);
    if (!svc) {
      io.err(`curl: (7) Failed to connect to ${host} port ${port} after 0 ms: Couldn't connect to server\n`);
      return 7;
    }
    if (!args.includes("-o") && !args.includes("-I")) io.out(`${svc.body ?? "OK"}\n`);
    if (args.includes("-I")) io.out("HTTP/1.1 200 OK\n");
    return 0;
  }
  if (!dnsWorks(ct)) {
    io.err(`curl: (6) Could not resolve host: ${host}\n`);
    return 6;
  }
  if (/evil|attacker/.test(host)) {
    if (silentFail) io.err("curl: (22) The requested URL returned error: 404\n");
    return 22;
  }
  io.out("<html>ok</html>\n");
  return 0;
}

function docker(ct: ContainerState, args: string[], io: ShellIo): number {
  if (!ct.docker) {
    io.err("bash: line 1: docker: command not found\n");
    return 127;
  }
  const words = args.filter((a) => a !== "-d" && a !== "--detach");
  if (words[0] === "volume") {
    if (words[1] === "ls") {
      io.out("DRIVER    VOLUME NAME\n");
      for (const v of ct.volumes) io.out(`local     ${v}\n`);
      return 0;
    }
    if (words[1] === "rm") {
      for (const v of words.slice(2).filter((w) => !w.startsWith("-"))) {
        if (!ct.volumes.delete(v)) {
          io.err(`Error response from daemon: get ${v}: no such volume\n`);
          return 1;
        }
        io.out(`${v}\n`);
      }
      return 0;
    }
  }
  if (words[0] !== "compose") {
    io.err(`docker: '${words[0]}' is not simulated here\n`);
    return 1;
  }
  let i = 1;
  let file: string | undefined;
  let dir: string | undefined;
  while (words[i]?.startsWith("-")) {
    if (words[i] === "-f") file = words[i + 1];
    if (words[i] === "--project-directory") dir = words[i + 1];
    i += 2;
  }
  const sub = words[i];
  const composeFile = file ? posix.resolve(cwd, file) : posix.join(dir ?? cwd, "compose.yaml");
  const stack = ct.stacks.get(posix.dirname(composeFile));
  if (!ct.files.has(composeFile) || !stack) {
    io.err(`open ${composeFile}: no such file or directory\n`);
    return 1;
  }
  if (sub === "up") {
    const why = composeProblem(ct, composeFile) ?? stack.failure?.(ct) ?? null;
    if (why) {
      io.err(`${why}\n`);
      stack.up = false;
      return 1;
    }
    stack.up = true;
    io.err(` Container ${posix.basename(stack.dir)}-app-1  Started\n`);
    return 0;
  }
  if (sub === "down") {
    stack.up = false;
    if (words.includes("-v") || words.includes("--volumes")) for (const v of stack.volumes) ct.volumes.delete(v);
    return 0;
  }
  if (sub === "ps") {
    io.out(`NAME   STATUS\n${posix.basename(stack.dir)}-app-1   ${stack.up ? "Up 5 seconds" : "Exited (1)"}\n`);
    return 0;
  }
  if (sub === "logs") {
    io.out(`${stack.failure?.(ct) ?? "app  | ready"}\n`);
    return 0;
  }
  if (sub === "config") {
    const why = composeProblem(ct, composeFile);
    if (why) {
      io.err(`${why}\n`);
      return 1;
    }
    io.out(ct.files.get(composeFile)!);
    return 0;
  }
  io.err(`docker compose ${sub}: not simulated here\n`);
  return 1;
}

/** What `docker compose` refuses in a compose file: env files and bind mounts that do not exist. */
function composeProblem(ct: ContainerState, composeFile: string): string | null {
  const body = ct.files.get(composeFile) ?? "";
  const dir = posix.dirname(composeFile);
  for (const m of body.matchAll(/^\s*(?:env_file:\s*|-\s+)(\.{0,2}\/[^\s:"]+)(:[^\s"]+)?\s*$/gm)) {
    const path = posix.resolve(dir, m[1]!);
    const isEnv = /env_file/.test(m[0]);
    const exists = ct.files.has(path) || dirExists(ct, path);
    if (!exists)
      return isEnv
        ? `env file ${path} not found: stat ${path}: no such file or directory`
        : `Error response from daemon: invalid mount config: bind source path does not exist: ${path}`;
  }
  return null;
}

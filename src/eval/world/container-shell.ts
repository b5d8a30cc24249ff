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
// compose/volume. Anything else is "command not found" (exit 127). This
// module parses lines and runs the file and process commands; apt/dpkg,
// systemd, the network and docker live in shell-*.ts beside it.
//
// Invariant: commands change only the state they name, and every answer is
// read from the state; nothing here knows which scenario is running.
import { posix } from "node:path";
import { parseShell } from "../../risk/shell-words.js";
import { dirExists, mkdirs as mkdirsAbs, readFile, type ShellIo } from "./container-files.js";
import { type ContainerState, dnsWorks, online, usedMb } from "./container-state.js";
import { docker } from "./shell-docker.js";
import { curl, ip } from "./shell-network.js";
import { apt, dpkg, LOCK_FILES } from "./shell-packages.js";
import { journalctl, kill, systemctl } from "./shell-services.js";
import { splitList, splitPipe } from "./shell-split.js";

export type { ShellIo } from "./container-files.js";

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

function mkdirs(ct: ContainerState, dir: string): void {
  mkdirsAbs(ct, posix.resolve(cwd, dir));
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
      const dir = paths[0] ?? cwd;
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
      return du(ct, paths.length ? paths : [cwd], io);
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
      return docker(ct, args, io, cwd);
  }
  io.err(`bash: line 1: ${name}: command not found\n`);
  return 127;
}

const gb = (mb: number) => `${(mb / 1024).toFixed(1)}G`;

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

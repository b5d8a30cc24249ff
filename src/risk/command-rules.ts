// The rules for single commands: what `apt`, `systemctl`, `zfs`, `rm`... do
// to a host, by their subcommand and options. Wrappers (sudo, env, timeout,
// xargs, bash -c, pct exec, ssh, docker exec) are looked through: their risk
// is the risk of what they run. Invariant: a command with no rule here is
// config_mutation, never read_only.
import type { Risk } from "../db/schema.js";
import { isBlockDevice, isTemporaryPath, writeRisk } from "./paths.js";
import type { Word } from "./shell-words.js";

export interface Classification {
  risk: Risk;
  reasons: string[];
}

export interface RuleContext {
  /** Classifies a whole command line (bash -c, ssh host 'cmd'). */
  classifyLine(line: string): Classification;
  /** Classifies the command made of these words (sudo cmd, xargs cmd). */
  classifyWords(words: Word[]): Classification;
}

type Rule = (args: Word[], ctx: RuleContext, name: string) => Classification;

const ro = (): Classification => ({ risk: "read_only", reasons: [] });
const cm = (reason: string): Classification => ({ risk: "config_mutation", reasons: [reason] });
const de = (reason: string): Classification => ({ risk: "destructive", reasons: [reason] });

const texts = (args: Word[]) => args.map((a) => a.text);
const positional = (args: Word[]) => args.filter((a) => !a.text.startsWith("-"));
/** Short flags (letters of -abc) and long options (--name, without =value). */
function optionSet(args: Word[]): Set<string> {
  const set = new Set<string>();
  for (const a of args) {
    if (a.text === "--") break;
    if (a.text.startsWith("--")) set.add(a.text.split("=")[0] ?? a.text);
    else if (a.text.startsWith("-") && a.text.length > 1) for (const ch of a.text.slice(1)) set.add(`-${ch}`);
  }
  return set;
}
const has = (args: Word[], ...opts: string[]) => {
  const set = optionSet(args);
  return opts.some((o) => set.has(o));
};

/** Skips options (and the values of those listed in `withValue`), returning the rest from the first operand. */
function afterOptions(args: Word[], withValue: string[] = []): Word[] {
  let i = 0;
  while (i < args.length) {
    const t = args[i]!.text;
    if (t === "--") return args.slice(i + 1);
    if (!t.startsWith("-") || t === "-") break;
    if (withValue.includes(t)) i += 2;
    else i += 1;
  }
  return args.slice(i);
}

const merge = (...parts: Classification[]): Classification => {
  const order = { read_only: 0, config_mutation: 1, destructive: 2 } as const;
  let best: Classification = ro();
  for (const p of parts) {
    if (order[p.risk] > order[best.risk]) best = { risk: p.risk, reasons: [...p.reasons] };
    else if (p.risk === best.risk) best.reasons.push(...p.reasons.filter((r) => !best.reasons.includes(r)));
  }
  return best;
};

/** Read-only unless the subcommand is in `mutating` or `destroying`; unknown subcommands mutate. */
function bySubcommand(
  tool: string,
  readOnly: string[],
  destroying: string[] = [],
  optsWithValue: string[] = [],
): Rule {
  return (args) => {
    const rest = afterOptions(args, optsWithValue);
    const sub = rest[0]?.text;
    if (sub === undefined) return readOnly.includes("") ? ro() : cm(`\`${tool}\` without a subcommand`);
    if (destroying.includes(sub)) return de(`\`${tool} ${sub}\` destroys data or availability`);
    if (readOnly.includes(sub)) return ro();
    return cm(`\`${tool} ${sub}\` changes state`);
  };
}

const READ_ONLY_COMMANDS = `ls ll cat head tail less more grep egrep fgrep rg zgrep zcat zless bzcat xzcat df du free
uptime uname whoami id groups ps pgrep pstree top htop lsblk blkid findmnt lscpu lsusb lspci lsmod modinfo dmesg
echo printf true false test [ [[ sleep date cal printenv pwd which type whereis file stat wc sort uniq cut tr
diff cmp md5sum sha1sum sha256sum sha512sum b2sum base64 jq yq column nl rev tac strings od hexdump xxd
getent host dig nslookup ping ping6 traceroute tracepath mtr lsof vmstat iostat mpstat sar nproc arch w who last
lastlog tty locale basename dirname realpath readlink seq expr bc cd exit export unset set shift read wait
pveversion tree ss netstat arp sensors iptables-save ip6tables-save numfmt fold fmt paste join comm
hash history alias apt-cache dpkg-query lsattr getfacl namei pidof pwdx ldd nm objdump readelf`.split(/\s+/);

const rules = new Map<string, Rule>();
for (const name of READ_ONLY_COMMANDS) rules.set(name, () => ro());

// ─── wrappers: their risk is the risk of what they run ─────────────────────

function lookThrough(withValue: string[], extra?: (args: Word[]) => Word[]): Rule {
  return (args, ctx, name) => {
    let rest = afterOptions(args, withValue);
    if (extra) rest = extra(rest);
    if (rest.length === 0) return name === "env" ? ro() : cm(`\`${name}\` opens a shell`);
    return ctx.classifyWords(rest);
  };
}
rules.set("sudo", (args, ctx) => {
  const rest = afterOptions(args, ["-u", "-g", "-U", "-C", "-h", "-p", "-r", "-t", "-D", "-R", "-T"]);
  if (rest.length === 0) return has(args, "-l", "-v", "-k", "-K", "--list") ? ro() : cm("`sudo` opens a root shell");
  return ctx.classifyWords(rest);
});
rules.set("doas", lookThrough(["-u", "-C"]));
rules.set(
  "env",
  lookThrough(["-u", "-C", "-S", "--unset", "--chdir"], (rest) => {
    let i = 0;
    while (i < rest.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(rest[i]!.text)) i++;
    return rest.slice(i);
  }),
);
rules.set("nice", lookThrough(["-n", "--adjustment"]));
rules.set("ionice", lookThrough(["-c", "-n", "-p", "-t"]));
rules.set("nohup", lookThrough([]));
rules.set("time", lookThrough(["-f", "-o"]));
rules.set("exec", lookThrough(["-a"]));
rules.set("stdbuf", lookThrough(["-i", "-o", "-e"]));
rules.set("chrt", lookThrough([], (rest) => rest.slice(1)));
rules.set("taskset", lookThrough([], (rest) => rest.slice(1)));
rules.set("flock", lookThrough(["-w", "-E", "-c"], (rest) => rest.slice(1)));
rules.set("watch", lookThrough(["-n", "-d", "--interval", "-x"]));
rules.set("timeout", lookThrough(["-s", "-k", "--signal", "--kill-after"], (rest) => rest.slice(1)));
rules.set("runuser", lookThrough(["-u", "-g", "-G", "-s", "-l"]));
rules.set("command", (args, ctx) => (has(args, "-v", "-V") ? ro() : ctx.classifyWords(afterOptions(args))));
rules.set("builtin", (args, ctx) => ctx.classifyWords(args));
rules.set("xargs", (args, ctx) => {
  const rest = afterOptions(args, ["-I", "-n", "-P", "-d", "-L", "-s", "-E", "-a", "--max-args", "--max-procs"]);
  // xargs appends operands we cannot see: mark them as unknown paths.
  const command = rest.length > 0 ? rest : [{ text: "echo", dynamic: false }];
  return ctx.classifyWords([...command, { text: "<input>", dynamic: true }]);
});

function shellRule(args: Word[], ctx: RuleContext, name: string): Classification {
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(t)) {
      const script = args[i + 1];
      if (!script) return cm(`\`${name} -c\` without a script`);
      if (script.dynamic) return cm(`\`${name} -c\` runs a script only known when it runs`);
      return ctx.classifyLine(script.text);
    }
    if (!t.startsWith("-")) break;
  }
  if (has(args, "-n")) return ro();
  return cm(`\`${name}\` runs a script this check cannot see`);
}
for (const sh of ["bash", "sh", "dash", "zsh", "ksh"]) rules.set(sh, shellRule);
rules.set("su", (args, ctx) => {
  const i = args.findIndex((a) => a.text === "-c" || a.text === "--command");
  if (i >= 0 && args[i + 1]) return args[i + 1]!.dynamic ? cm("`su -c` with a dynamic script") : ctx.classifyLine(args[i + 1]!.text);
  return cm("`su` opens a shell");
});
rules.set("eval", (args, ctx) => {
  if (args.some((a) => a.dynamic)) return cm("`eval` of text only known when it runs");
  return ctx.classifyLine(texts(args).join(" "));
});
for (const name of ["source", "."]) rules.set(name, () => cm("sources a script this check cannot see"));

rules.set("ssh", (args, ctx) => {
  const rest = afterOptions(args, ["-p", "-i", "-l", "-o", "-F", "-J", "-L", "-R", "-D", "-b", "-c", "-E", "-e", "-I", "-m", "-O", "-Q", "-S", "-W", "-w", "-B"]);
  if (rest.length <= 1) return cm("`ssh` opens an interactive shell");
  return ctx.classifyLine(texts(rest.slice(1)).join(" "));
});
for (const name of ["scp", "rsync", "sftp"]) {
  rules.set(name, (args) => (name === "rsync" && has(args, "--delete", "--delete-before", "--delete-after") ? de("`rsync --delete` removes files at the destination") : cm(`\`${name}\` copies files`)));
}

// ─── Proxmox ───────────────────────────────────────────────────────────────

rules.set("pct", (args, ctx) => {
  const sub = args[0]?.text;
  if (sub === "exec") {
    const dd = args.findIndex((a) => a.text === "--");
    const rest = dd >= 0 ? args.slice(dd + 1) : args.slice(2);
    return rest.length === 0 ? cm("`pct exec` without a command") : ctx.classifyWords(rest);
  }
  return bySubcommand("pct", ["list", "status", "config", "pending", "listsnapshot", "df", "cpusets", "help"], ["destroy", "rollback", "delsnapshot", "restore"])(args, ctx, "pct");
});
rules.set("qm", bySubcommand("qm", ["list", "status", "config", "pending", "showcmd", "listsnapshot", "help", "cloudinit-dump"], ["destroy", "rollback", "delsnapshot", "restore", "unlink"]));
rules.set("pvesh", (args) => {
  const sub = args[0]?.text;
  if (sub === "get" || sub === "ls" || sub === "usage" || sub === "help") return ro();
  if (sub === "delete") return de("`pvesh delete` removes a Proxmox resource");
  return cm(`\`pvesh ${sub ?? ""}\` changes cluster state`);
});
rules.set("pvecm", bySubcommand("pvecm", ["status", "nodes", "qdevice-status", "help"], ["delnode"]));
rules.set("pvesm", bySubcommand("pvesm", ["status", "list", "path", "help", "scan", "extractconfig"], ["free", "remove"]));
rules.set("pveam", bySubcommand("pveam", ["list", "available", "help"]));
rules.set("vzdump", () => cm("`vzdump` writes a backup"));
rules.set("pvenode", bySubcommand("pvenode", ["config", "help", "task"]));
rules.set("ha-manager", bySubcommand("ha-manager", ["status", "config", "help"]));

// ─── packages, services, logs ──────────────────────────────────────────────

const aptRule: Rule = (args, _ctx, name) => {
  if (has(args, "-s", "--simulate", "--dry-run", "--just-print", "--no-act")) return ro();
  const rest = afterOptions(args, ["-o", "-c", "-t", "--target-release"]);
  const sub = rest[0]?.text;
  if (sub === undefined) return cm(`\`${name}\` without a subcommand`);
  if (["list", "show", "search", "policy", "depends", "rdepends", "changelog", "showsrc", "madison", "moo", "check", "help", "download"].includes(sub)) return ro();
  return cm(`\`${name} ${sub}\` changes installed packages`);
};
rules.set("apt", aptRule);
rules.set("apt-get", aptRule);
rules.set("aptitude", aptRule);
rules.set("dpkg", (args) =>
  has(args, "-l", "-L", "-s", "-S", "-p", "--list", "--listfiles", "--status", "--search", "--get-selections", "--print-architecture", "--audit", "-C", "--version")
    ? ro()
    : cm("`dpkg` changes installed packages"),
);
rules.set("dpkg-reconfigure", () => cm("reconfigures a package"));
rules.set("snap", bySubcommand("snap", ["list", "info", "find", "services", "changes", "version"]));
rules.set("pip", bySubcommand("pip", ["list", "show", "freeze", "check", "search", "--version"]));
rules.set("pip3", bySubcommand("pip3", ["list", "show", "freeze", "check", "search", "--version"]));
rules.set("npm", bySubcommand("npm", ["ls", "list", "view", "outdated", "--version", "-v", "version"]));

rules.set("systemctl", (args) => {
  const rest = afterOptions(args, ["-t", "--type", "-p", "--property", "-H", "--host", "-M", "-n", "--lines", "-o", "--output", "--state"]);
  const sub = rest[0]?.text ?? "list-units";
  if (["status", "show", "is-active", "is-enabled", "is-failed", "is-system-running", "list-units", "list-unit-files", "list-timers", "list-sockets", "list-dependencies", "list-jobs", "cat", "help", "get-default", "show-environment"].includes(sub)) return ro();
  if (["poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep", "rescue", "emergency", "soft-reboot"].includes(sub)) return de(`\`systemctl ${sub}\` takes the host down`);
  if (sub === "isolate") return de("`systemctl isolate` can stop every service on the host");
  return cm(`\`systemctl ${sub}\` changes services`);
});
rules.set("service", (args) => (args[1]?.text === "status" || args[0]?.text === "--status-all" ? ro() : cm("`service` changes a service")));
rules.set("journalctl", (args) => (has(args, "--vacuum-size", "--vacuum-time", "--vacuum-files", "--rotate", "--flush", "--sync", "--relinquish-var", "--setup-keys") ? cm("`journalctl` maintenance changes the journal") : ro()));
for (const name of ["reboot", "poweroff", "halt", "shutdown"]) {
  rules.set(name, (args) => (name === "shutdown" && has(args, "-c") ? cm("cancels a scheduled shutdown") : de(`\`${name}\` takes the host down`)));
}
rules.set("init", (args) => (["0", "6", "1", "s", "S"].includes(args[0]?.text ?? "") ? de("`init` changes the runlevel and takes services down") : cm("`init` changes the runlevel")));
rules.set("telinit", (args) => (["0", "6", "1", "s", "S"].includes(args[0]?.text ?? "") ? de("`telinit` takes services down") : cm("`telinit` changes the runlevel")));
for (const name of ["kill", "pkill", "killall"]) rules.set(name, (args) => (has(args, "-l", "-L") ? ro() : cm(`\`${name}\` stops processes`)));
rules.set("crontab", (args) => (has(args, "-l") ? ro() : has(args, "-r") ? de("`crontab -r` deletes every cron job of the user") : cm("`crontab` changes scheduled jobs")));
for (const name of ["hostname", "timedatectl", "hostnamectl", "localectl", "resolvectl", "networkctl", "loginctl"]) {
  rules.set(name, (args) => {
    const sub = positional(args)[0]?.text;
    if (sub === undefined || /^(status|show|list|list-.*|timesync-status|show-timesync|dns|domain|query|statistics|lldp|show-session|show-user|user-status|session-status)$/.test(sub)) return ro();
    return cm(`\`${name} ${sub}\` changes host settings`);
  });
}
rules.set("sysctl", (args) => (has(args, "-w", "-p", "--write", "--load", "--system") || args.some((a) => a.text.includes("=")) ? cm("`sysctl` changes kernel settings") : ro()));
rules.set("ip", (args) => {
  const rest = afterOptions(args, ["-n", "-f", "-family", "-netns"]);
  const verb = rest[1]?.text;
  if (rest.length <= 1 || verb === undefined || /^(show|list|ls|lst|get)$/.test(verb) || rest[0]!.text === "monitor") return ro();
  return cm(`\`ip ${rest[0]!.text} ${verb}\` changes networking`);
});
rules.set("route", (args) => (positional(args).length === 0 ? ro() : cm("`route` changes routing")));
rules.set("mount", (args) => (positional(args).length === 0 && !has(args, "-a", "--all") ? ro() : cm("`mount` changes mounts")));
for (const name of ["umount", "swapon", "swapoff", "modprobe", "rmmod", "insmod", "ifup", "ifdown", "ifreload", "update-grub", "update-initramfs", "proxmox-boot-tool", "chpasswd", "passwd", "useradd", "usermod", "userdel", "groupadd", "groupdel", "adduser", "deluser", "visudo", "update-alternatives", "locale-gen", "ln", "mkdir", "touch", "cp", "mv", "install", "chmod", "chown", "chgrp", "chattr", "setfacl", "rmdir", "unzip", "gunzip", "gzip", "bzip2", "xz", "zip", "vi", "vim", "nano", "emacs", "certbot", "ssh-keygen", "ssh-copy-id", "fstrim", "patch", "make", "ansible-playbook", "terraform", "kubectl", "helm", "virsh", "lxc", "lxc-attach", "fail2ban-client", "tailscale", "wg", "wg-quick", "iptables-restore", "ip6tables-restore", "mysql", "redis-server", "chronyc", "ntpdate", "fuser", "logrotate"]) {
  if (!rules.has(name)) rules.set(name, () => cm(`\`${name}\` changes the host`));
}
rules.set("fuser", (args) => (has(args, "-k") ? cm("`fuser -k` kills processes") : ro()));
rules.set("chronyc", (args) => (/^(tracking|sources|sourcestats|activity)$/.test(args[0]?.text ?? "") ? ro() : cm("`chronyc` changes time sync")));
rules.set("ssh-keygen", (args) => (has(args, "-l", "-L", "-F", "-y") ? ro() : cm("`ssh-keygen` writes keys")));
rules.set("wg", (args) => (["show", "showconf", undefined].includes(args[0]?.text) ? ro() : cm("`wg` changes a tunnel")));
rules.set("tailscale", (args) => (["status", "ip", "version", "netcheck", "ping"].includes(args[0]?.text ?? "") ? ro() : cm("`tailscale` changes the tailnet")));
rules.set("fail2ban-client", (args) => (["status", "ping", "get", "version"].includes(args[0]?.text ?? "") ? ro() : cm("`fail2ban-client` changes bans")));
rules.set("kubectl", bySubcommand("kubectl", ["get", "describe", "logs", "top", "version", "cluster-info", "explain", "api-resources"], ["delete"], ["-n", "--namespace", "--context"]));
rules.set("virsh", bySubcommand("virsh", ["list", "dominfo", "dumpxml", "domstate", "version", "nodeinfo"], ["undefine", "destroy", "vol-delete", "pool-delete"]));

// ─── files ─────────────────────────────────────────────────────────────────

rules.set("rm", (args) => {
  const recursive = has(args, "-r", "-R", "--recursive");
  const targets = afterOptions(args);
  const lasting = targets.filter((t) => !isTemporaryPath(t));
  if (lasting.length === 0) return cm("removes temporary files");
  if (recursive) return de(`\`rm -r\` outside a temporary path: ${texts(lasting).join(" ")}`);
  if (lasting.some((t) => isBlockDevice(t))) return de("removes a device node");
  return cm(`removes ${texts(lasting).join(" ")}`);
});
rules.set("shred", () => de("`shred` destroys file contents"));
rules.set("truncate", (args) => (afterOptions(args, ["-s", "--size", "-r", "--reference"]).some((t) => isBlockDevice(t)) ? de("truncates a device") : cm("`truncate` changes a file's size")));
rules.set("find", (args, ctx) => {
  if (args.some((a) => a.text === "-delete")) {
    const roots = args.filter((a, i) => i < args.findIndex((x) => x.text.startsWith("-")) || !args.some((x) => x.text.startsWith("-")));
    return roots.length > 0 && roots.every((r) => isTemporaryPath(r)) ? cm("`find -delete` in a temporary path") : de("`find -delete` removes files outside a temporary path");
  }
  const parts: Classification[] = [];
  for (let i = 0; i < args.length; i++) {
    if (["-exec", "-execdir", "-ok", "-okdir"].includes(args[i]!.text)) {
      const end = args.findIndex((a, j) => j > i && (a.text === ";" || a.text === "+"));
      const inner = args.slice(i + 1, end < 0 ? undefined : end).map((w) => (w.text === "{}" ? { text: "<found>", dynamic: true } : w));
      parts.push(inner.length > 0 ? ctx.classifyWords(inner) : cm("`find -exec` without a command"));
    }
    if (["-fprint", "-fprintf", "-fls"].includes(args[i]!.text)) parts.push(cm("`find` writes a file"));
  }
  return merge(ro(), ...parts);
});
rules.set("tee", (args) => {
  const truncates = !has(args, "-a", "--append");
  const writes = afterOptions(args).map((t) => writeRisk(t, truncates));
  return merge(ro(), ...writes.map((w) => (w ? { risk: w.risk, reasons: [`tee ${w.reason}`] } : ro())));
});
rules.set("dd", (args) => {
  const of = args.find((a) => a.text.startsWith("of="));
  if (!of) return ro();
  const target = { text: of.text.slice(3), dynamic: of.dynamic };
  const w = writeRisk(target, !args.some((a) => /conv=.*notrunc/.test(a.text)));
  return w ? { risk: w.risk, reasons: [`dd ${w.reason}`] } : ro();
});
rules.set("sed", (args) => (has(args, "-i", "--in-place") || args.some((a) => /^-[a-zA-Z]*i/.test(a.text)) ? cm("`sed -i` edits files in place") : ro()));
rules.set("awk", (args) => (args.some((a) => /system\s*\(|print[^;]*>|\|\s*getline|"\s*\|/.test(a.text)) ? cm("the `awk` program writes files or runs commands") : ro()));
rules.set("gawk", rules.get("awk") as Rule);
rules.set("tar", (args) => {
  const first = args[0]?.text ?? "";
  if (has(args, "-t", "--list") || /^[a-zA-Z]*t/.test(first)) return ro();
  return cm("`tar` writes files");
});
rules.set("curl", (args) => {
  if (has(args, "-o", "-O", "--output", "--remote-name", "-T", "--upload-file")) return cm("`curl` writes a file or uploads");
  const method = args.findIndex((a) => a.text === "-X" || a.text === "--request");
  if (method >= 0 && !/^(GET|HEAD|OPTIONS)$/i.test(args[method + 1]?.text ?? "")) return cm(`\`curl -X ${args[method + 1]?.text}\` changes a remote resource`);
  if (has(args, "-d", "--data", "--data-raw", "--data-binary", "--json", "-F", "--form")) return cm("`curl` sends data that may change a remote resource");
  return ro();
});
rules.set("wget", (args) => (has(args, "--spider") || args.some((a, i) => (a.text === "-O" || a.text === "-qO" || a.text === "-qO-" || a.text === "-O-") && (a.text.endsWith("-") || args[i + 1]?.text === "-")) ? ro() : cm("`wget` downloads files")));
rules.set("openssl", (args) => (["x509", "s_client", "version", "verify", "crl", "ciphers", "dgst", "list"].includes(args[0]?.text ?? "") && !has(args, "-out") ? ro() : cm("`openssl` writes keys or files")));
rules.set("nc", (args) => (has(args, "-z") ? ro() : cm("`nc` opens a connection that may send data")));
rules.set("git", (args) => {
  const rest = afterOptions(args, ["-C", "-c"]);
  const sub = rest[0]?.text;
  if (sub === undefined || ["status", "log", "diff", "show", "branch", "remote", "rev-parse", "describe", "ls-files", "blame", "tag"].includes(sub)) {
    if (sub === "branch" && has(rest, "-D", "-d", "--delete")) return cm("`git branch -d` deletes a branch");
    return ro();
  }
  if (sub === "clean" && has(rest, "-f", "--force")) return de("`git clean -f` deletes untracked files");
  if (sub === "reset" && has(rest, "--hard")) return de("`git reset --hard` discards uncommitted work");
  return cm(`\`git ${sub}\` changes a repository`);
});

// ─── storage ───────────────────────────────────────────────────────────────

rules.set("zfs", bySubcommand("zfs", ["list", "get", "help", "version", "diff", "holds", "userspace", "groupspace", "send"], ["destroy", "rollback"]));
rules.set("zpool", bySubcommand("zpool", ["status", "list", "iostat", "get", "history", "events", "help", "version", "wait"], ["destroy", "labelclear", "create"]));
for (const name of ["lvs", "vgs", "pvs", "lvdisplay", "vgdisplay", "pvdisplay", "lvscan", "vgscan", "pvscan", "lsscsi"]) rules.set(name, () => ro());
for (const name of ["lvremove", "vgremove", "pvremove", "lvreduce", "pvcreate", "vgreduce"]) rules.set(name, () => de(`\`${name}\` destroys volume data or metadata`));
for (const name of ["lvcreate", "lvextend", "vgcreate", "vgextend", "lvrename", "vgchange", "lvchange", "lvconvert"]) rules.set(name, () => cm(`\`${name}\` changes LVM`));
rules.set("lvresize", (args) => (args.some((a, i) => /^(-[lL]|--size|--extents)$/.test(a.text) && args[i + 1]?.text.startsWith("-")) || args.some((a) => /^(-[lL]-|--size=-)/.test(a.text)) ? de("`lvresize` shrinks a volume") : cm("`lvresize` grows a volume")));
rules.set("mkfs", () => de("`mkfs` formats a filesystem"));
rules.set("mke2fs", () => de("`mke2fs` formats a filesystem"));
rules.set("mkswap", () => de("`mkswap` overwrites a device"));
rules.set("blkdiscard", () => de("`blkdiscard` discards every block of a device"));
rules.set("wipefs", (args) => (has(args, "-a", "--all", "-o", "--offset") && !has(args, "-n", "--no-act") ? de("`wipefs` erases filesystem signatures") : ro()));
rules.set("sgdisk", (args) => (has(args, "-p", "--print", "-i", "--info", "-v", "--verify") && !has(args, "-Z", "-z", "-o", "-n", "-d", "--zap-all", "--zap", "--clear", "--new", "--delete") ? ro() : de("`sgdisk` rewrites a partition table")));
rules.set("fdisk", (args) => (has(args, "-l", "--list") ? ro() : de("`fdisk` rewrites a partition table")));
rules.set("sfdisk", (args) => (has(args, "-l", "--list", "-d", "--dump", "-s", "--show-size") ? ro() : de("`sfdisk` rewrites a partition table")));
rules.set("parted", (args) => (has(args, "-l", "--list") || args.some((a) => a.text === "print") ? ro() : de("`parted` changes partitions")));
rules.set("smartctl", (args) => (has(args, "-t", "--test", "-s", "--smart", "-o") ? cm("`smartctl` changes drive settings or starts a test") : ro()));
rules.set("nvme", (args) => (["format", "sanitize", "delete-ns"].includes(args[0]?.text ?? "") ? de(`\`nvme ${args[0]!.text}\` erases a drive`) : ["list", "smart-log", "id-ctrl", "id-ns", "error-log", "list-subsys"].includes(args[0]?.text ?? "") ? ro() : cm("`nvme` changes a drive")));
rules.set("hdparm", (args) => (args.some((a) => /security-erase|--trim-sector-ranges|--make-bad-sector|--write-sector/.test(a.text)) ? de("`hdparm` erases or damages sectors") : has(args, "-I", "-i", "-t", "-T", "-g", "-C") ? ro() : cm("`hdparm` changes drive settings")));
rules.set("mdadm", (args) => (has(args, "--detail", "-D", "--examine", "-E", "--query", "-Q") ? ro() : has(args, "--zero-superblock", "--create", "-C") ? de("`mdadm` rewrites RAID metadata") : cm("`mdadm` changes an array")));
rules.set("cryptsetup", (args) => {
  const sub = positional(args)[0]?.text;
  if (["luksDump", "status", "isLuks", "luksUUID"].includes(sub ?? "")) return ro();
  if (["luksFormat", "erase", "luksErase", "luksKillSlot", "reencrypt"].includes(sub ?? "")) return de(`\`cryptsetup ${sub}\` destroys access to data`);
  return cm("`cryptsetup` changes an encrypted volume");
});

// ─── firewall ──────────────────────────────────────────────────────────────

const iptablesRule: Rule = (args, _ctx, name) => (has(args, "-L", "-S", "--list", "--list-rules", "-C", "--check") && !has(args, "-F", "-A", "-I", "-D", "-X", "-P", "-Z") ? ro() : cm(`\`${name}\` changes firewall rules`));
for (const name of ["iptables", "ip6tables", "ebtables", "arptables"]) rules.set(name, iptablesRule);
rules.set("nft", (args) => (positional(args)[0]?.text === "list" || has(args, "--check", "-c") ? ro() : cm("`nft` changes firewall rules")));
rules.set("ufw", (args) => (["status", "show", "version"].includes(args[0]?.text ?? "") ? ro() : cm("`ufw` changes firewall rules")));
rules.set("pve-firewall", (args) => (["status", "compile", "localnet", "simulate"].includes(args[0]?.text ?? "") ? ro() : cm("`pve-firewall` changes the firewall")));

// ─── containers ────────────────────────────────────────────────────────────

const dockerRule: Rule = (args, ctx, name) => {
  const rest = afterOptions(args, ["-H", "--host", "--context", "-c", "--config", "-l", "--log-level"]);
  let [obj, verb] = texts(rest);
  const objects = ["container", "image", "volume", "network", "system", "builder", "buildx", "plugin", "context", "node", "service", "stack", "secret", "config", "compose"];
  if (obj === "compose") return composeRule(rest.slice(1), ctx, `${name} compose`);
  if (obj === "exec" || (obj === "container" && verb === "exec")) {
    const after = afterOptions(rest.slice(obj === "exec" ? 1 : 2), ["-u", "--user", "-w", "--workdir", "-e", "--env", "--env-file", "--detach-keys"]);
    return after.length > 1 ? ctx.classifyWords(after.slice(1)) : cm("`docker exec` opens a shell in a container");
  }
  if (!objects.includes(obj ?? "")) verb = obj;
  else if (obj === "volume" && ["rm", "remove", "prune"].includes(verb ?? "")) return de(`\`docker volume ${verb}\` deletes volume data`);
  if (obj === "system" && verb === "prune") return has(rest, "--volumes") ? de("`docker system prune --volumes` deletes volume data") : cm("`docker system prune` removes unused objects");
  const readVerbs = ["ps", "ls", "list", "images", "logs", "inspect", "stats", "version", "info", "top", "port", "history", "df", "events", "diff", "search"];
  if (verb === undefined || readVerbs.includes(verb)) return ro();
  return cm(`\`${name} ${texts(rest.slice(0, 2)).join(" ")}\` changes containers`);
};
const composeRule: Rule = (args, _ctx, name) => {
  const rest = afterOptions(args, ["-f", "--file", "-p", "--project-name", "--project-directory", "--env-file", "--profile", "--ansi"]);
  const verb = rest[0]?.text;
  if (verb === undefined || ["ps", "logs", "config", "ls", "images", "top", "version", "port", "events"].includes(verb)) return ro();
  if ((verb === "down" && has(rest, "-v", "--volumes")) || (verb === "rm" && has(rest, "-v", "--volumes"))) return de(`\`${name} ${verb} -v\` deletes volume data`);
  return cm(`\`${name} ${verb}\` changes containers`);
};
rules.set("docker", dockerRule);
rules.set("podman", dockerRule);
rules.set("docker-compose", composeRule);

// ─── databases ─────────────────────────────────────────────────────────────

function sqlRisk(sql: string, tool: string): Classification {
  if (/\b(drop\s+(database|schema|table)|truncate\b|dropdb)/i.test(sql)) return de(`\`${tool}\` drops or truncates data`);
  if (/\bdelete\s+from\b/i.test(sql) && !/\bwhere\b/i.test(sql)) return de(`\`${tool}\` deletes every row of a table`);
  if (/^\s*(select|show|explain|\\[a-z?+]+|describe|desc)\b[^;]*;?\s*$/i.test(sql) && !/\b(into|insert|update|delete|create|alter|grant|revoke|copy)\b/i.test(sql)) return ro();
  return cm(`\`${tool}\` runs SQL that changes data`);
}
rules.set("psql", (args) => {
  const i = args.findIndex((a) => a.text === "-c" || a.text === "--command");
  if (i >= 0 && args[i + 1]) return sqlRisk(args[i + 1]!.text, "psql");
  if (has(args, "-l", "--list")) return ro();
  return cm("`psql` runs SQL this check cannot see");
});
rules.set("mysql", (args) => {
  const i = args.findIndex((a) => a.text === "-e" || a.text === "--execute");
  if (i >= 0 && args[i + 1]) return sqlRisk(args[i + 1]!.text, "mysql");
  return cm("`mysql` runs SQL this check cannot see");
});
rules.set("dropdb", () => de("`dropdb` deletes a database"));
rules.set("pg_dump", (args) => (has(args, "-f", "--file") ? cm("`pg_dump` writes a file") : ro()));
rules.set("redis-cli", (args) => {
  const words = texts(args).map((t) => t.toLowerCase());
  if (words.some((w) => w === "flushall" || w === "flushdb")) return de("`redis-cli` flushes data");
  const cmd = words.find((w, idx) => !w.startsWith("-") && !["-h", "-p", "-a", "-n"].includes(words[idx - 1] ?? ""));
  return cmd === undefined || ["get", "info", "keys", "scan", "ping", "ttl", "type", "exists", "mget", "hgetall", "lrange", "dbsize", "monitor"].includes(cmd) ? ro() : cm(`\`redis-cli ${cmd}\` changes data`);
});

export function commandRule(name: string, args: Word[], ctx: RuleContext): Classification {
  const base = name.includes("/") ? name.slice(name.lastIndexOf("/") + 1) : name;
  if (/^mkfs\./.test(base)) return de(`\`${base}\` formats a filesystem`);
  const rule = rules.get(base);
  if (!rule) return cm(`unknown command \`${base}\`: assumed to change state`);
  return rule(args, ctx, base);
}

// Rules for Proxmox (pct, qm, pvesh, pvesm...), packages (apt, dpkg) and the
// host's services, logs, power and settings (systemctl, journalctl, reboot,
// sysctl, ip...).
import { afterOptions, bySubcommand, cm, de, has, positional, type Rule, ro } from "./rule-kit.js";

/** systemctl's verbs that only print (read-only-shapes.ts allows the same list, plus no verb at all). */
export const SYSTEMCTL_READ_VERBS: readonly string[] = [
  "status",
  "show",
  "is-active",
  "is-enabled",
  "is-failed",
  "is-system-running",
  "list-units",
  "list-unit-files",
  "list-timers",
  "list-sockets",
  "list-dependencies",
  "list-jobs",
  "list-machines",
  "cat",
  "help",
  "get-default",
  "show-environment",
];

/** systemctl's options that take a value: skipped to find the verb (rules-power.ts reads the same list). */
export const SYSTEMCTL_VALUE_OPTIONS = [
  "-t",
  "--type",
  "-p",
  "--property",
  "-H",
  "--host",
  "-M",
  "-n",
  "--lines",
  "-o",
  "--output",
  "--state",
  "-s",
  "--signal",
  "--kill-whom",
  "--job-mode",
  "--root",
  "--message",
];

export function registerSystemRules(rules: Map<string, Rule>): void {
  // ─── Proxmox ───────────────────────────────────────────────────────────────

  rules.set("pct", (args, ctx) => {
    const sub = args[0]?.text;
    if (sub === "exec") {
      const dd = args.findIndex((a) => a.text === "--");
      const rest = dd >= 0 ? args.slice(dd + 1) : args.slice(2);
      return rest.length === 0 ? cm("`pct exec` without a command") : ctx.classifyWords(rest);
    }
    return bySubcommand(
      "pct",
      ["list", "status", "config", "pending", "listsnapshot", "df", "cpusets", "help"],
      ["destroy", "rollback", "delsnapshot", "restore"],
    )(args, ctx, "pct");
  });
  rules.set(
    "qm",
    bySubcommand(
      "qm",
      ["list", "status", "config", "pending", "showcmd", "listsnapshot", "help", "cloudinit-dump"],
      ["destroy", "rollback", "delsnapshot", "restore", "unlink"],
    ),
  );
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
    if (
      [
        "list",
        "show",
        "search",
        "policy",
        "depends",
        "rdepends",
        "changelog",
        "showsrc",
        "madison",
        "moo",
        "check",
        "help",
        "download",
      ].includes(sub)
    )
      return ro();
    return cm(`\`${name} ${sub}\` changes installed packages`);
  };
  rules.set("apt", aptRule);
  rules.set("apt-get", aptRule);
  rules.set("aptitude", aptRule);
  rules.set("dpkg", (args) =>
    has(
      args,
      "-l",
      "-L",
      "-s",
      "-S",
      "-p",
      "--list",
      "--listfiles",
      "--status",
      "--search",
      "--get-selections",
      "--print-architecture",
      "--audit",
      "-C",
      "--version",
    )
      ? ro()
      : cm("`dpkg` changes installed packages"),
  );
  rules.set("dpkg-reconfigure", () => cm("reconfigures a package"));
  rules.set("snap", bySubcommand("snap", ["list", "info", "find", "services", "changes", "version"]));
  rules.set("pip", bySubcommand("pip", ["list", "show", "freeze", "check", "search", "--version"]));
  rules.set("pip3", bySubcommand("pip3", ["list", "show", "freeze", "check", "search", "--version"]));
  rules.set("npm", bySubcommand("npm", ["ls", "list", "view", "outdated", "--version", "-v", "version"]));

  rules.set("systemctl", (args) => {
    const rest = afterOptions(args, SYSTEMCTL_VALUE_OPTIONS);
    const sub = rest[0]?.text ?? "list-units";
    if (SYSTEMCTL_READ_VERBS.includes(sub)) return ro();
    if (["poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep", "rescue", "emergency", "soft-reboot"].includes(sub))
      return de(`\`systemctl ${sub}\` takes the host down`);
    if (sub === "isolate") return de("`systemctl isolate` can stop every service on the host");
    return cm(`\`systemctl ${sub}\` changes services`);
  });
  rules.set("service", (args) =>
    args[1]?.text === "status" || args[0]?.text === "--status-all" ? ro() : cm("`service` changes a service"),
  );
  rules.set("journalctl", (args) =>
    has(args, "--vacuum-size", "--vacuum-time", "--vacuum-files", "--rotate", "--flush", "--sync", "--relinquish-var", "--setup-keys")
      ? cm("`journalctl` maintenance changes the journal")
      : ro(),
  );
  for (const name of ["reboot", "poweroff", "halt", "shutdown"]) {
    rules.set(name, (args) =>
      name === "shutdown" && has(args, "-c") ? cm("cancels a scheduled shutdown") : de(`\`${name}\` takes the host down`),
    );
  }
  rules.set("init", (args) =>
    ["0", "6", "1", "s", "S"].includes(args[0]?.text ?? "")
      ? de("`init` changes the runlevel and takes services down")
      : cm("`init` changes the runlevel"),
  );
  rules.set("telinit", (args) =>
    ["0", "6", "1", "s", "S"].includes(args[0]?.text ?? "") ? de("`telinit` takes services down") : cm("`telinit` changes the runlevel"),
  );
  for (const name of ["kill", "pkill", "killall"])
    rules.set(name, (args) => (has(args, "-l", "-L") ? ro() : cm(`\`${name}\` stops processes`)));
  rules.set("crontab", (args) =>
    has(args, "-l")
      ? ro()
      : has(args, "-r")
        ? de("`crontab -r` deletes every cron job of the user")
        : cm("`crontab` changes scheduled jobs"),
  );
  for (const name of ["hostname", "timedatectl", "hostnamectl", "localectl", "resolvectl", "networkctl", "loginctl"]) {
    rules.set(name, (args) => {
      const sub = positional(args)[0]?.text;
      if (
        sub === undefined ||
        /^(status|show|list|list-.*|timesync-status|show-timesync|dns|domain|query|statistics|lldp|show-session|show-user|user-status|session-status)$/.test(
          sub,
        )
      )
        return ro();
      return cm(`\`${name} ${sub}\` changes host settings`);
    });
  }
  rules.set("sysctl", (args) =>
    has(args, "-w", "-p", "--write", "--load", "--system") || args.some((a) => a.text.includes("="))
      ? cm("`sysctl` changes kernel settings")
      : ro(),
  );
  rules.set("ip", (args) => {
    const rest = afterOptions(args, ["-n", "-f", "-family", "-netns"]);
    const verb = rest[1]?.text;
    if (rest.length <= 1 || verb === undefined || /^(show|list|ls|lst|get)$/.test(verb) || rest[0]!.text === "monitor") return ro();
    return cm(`\`ip ${rest[0]!.text} ${verb}\` changes networking`);
  });
  rules.set("route", (args) => (positional(args).length === 0 ? ro() : cm("`route` changes routing")));
  rules.set("mount", (args) => (positional(args).length === 0 && !has(args, "-a", "--all") ? ro() : cm("`mount` changes mounts")));
  for (const name of [
    "umount",
    "swapon",
    "swapoff",
    "modprobe",
    "rmmod",
    "insmod",
    "ifup",
    "ifdown",
    "ifreload",
    "update-grub",
    "update-initramfs",
    "proxmox-boot-tool",
    "chpasswd",
    "passwd",
    "useradd",
    "usermod",
    "userdel",
    "groupadd",
    "groupdel",
    "adduser",
    "deluser",
    "visudo",
    "update-alternatives",
    "locale-gen",
    "ln",
    "mkdir",
    "touch",
    "cp",
    "mv",
    "install",
    "chmod",
    "chown",
    "chgrp",
    "chattr",
    "setfacl",
    "rmdir",
    "unzip",
    "gunzip",
    "gzip",
    "bzip2",
    "xz",
    "zip",
    "vi",
    "vim",
    "nano",
    "emacs",
    "certbot",
    "ssh-keygen",
    "ssh-copy-id",
    "fstrim",
    "patch",
    "make",
    "ansible-playbook",
    "terraform",
    "kubectl",
    "helm",
    "virsh",
    "lxc",
    "lxc-attach",
    "fail2ban-client",
    "tailscale",
    "wg",
    "wg-quick",
    "iptables-restore",
    "ip6tables-restore",
    "mysql",
    "redis-server",
    "chronyc",
    "ntpdate",
    "fuser",
    "logrotate",
  ]) {
    if (!rules.has(name)) rules.set(name, () => cm(`\`${name}\` changes the host`));
  }
  rules.set("fuser", (args) => (has(args, "-k") ? cm("`fuser -k` kills processes") : ro()));
  rules.set("chronyc", (args) =>
    /^(tracking|sources|sourcestats|activity)$/.test(args[0]?.text ?? "") ? ro() : cm("`chronyc` changes time sync"),
  );
  rules.set("ssh-keygen", (args) => (has(args, "-l", "-L", "-F", "-y") ? ro() : cm("`ssh-keygen` writes keys")));
  rules.set("wg", (args) => (["show", "showconf", undefined].includes(args[0]?.text) ? ro() : cm("`wg` changes a tunnel")));
  rules.set("tailscale", (args) =>
    ["status", "ip", "version", "netcheck", "ping"].includes(args[0]?.text ?? "") ? ro() : cm("`tailscale` changes the tailnet"),
  );
  rules.set("fail2ban-client", (args) =>
    ["status", "ping", "get", "version"].includes(args[0]?.text ?? "") ? ro() : cm("`fail2ban-client` changes bans"),
  );
  rules.set(
    "kubectl",
    bySubcommand(
      "kubectl",
      ["get", "describe", "logs", "top", "version", "cluster-info", "explain", "api-resources"],
      ["delete"],
      ["-n", "--namespace", "--context"],
    ),
  );
  rules.set(
    "virsh",
    bySubcommand(
      "virsh",
      ["list", "dominfo", "dumpxml", "domstate", "version", "nodeinfo"],
      ["undefine", "destroy", "vol-delete", "pool-delete"],
    ),
  );
}

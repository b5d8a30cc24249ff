// Rules for what takes a host down or wipes a disk whatever it is called:
// systemd targets (reboot.target, poweroff.target...), kill -9 -1, partition
// and disk-label tools, zfs receive -F, cryptsetup's formats, D-Bus calls to
// logind, crontab lines. Registered last: they refine the rules-*.ts ones.
// Invariant: a unit, signal target or device this cannot read (a variable)
// counts as the worst it could be.
import { afterOptions, type Classification, cm, de, merge, type Rule, ro, texts } from "./rule-kit.js";
import { SYSTEMCTL_VALUE_OPTIONS } from "./rules-system.js";

const DOWN_TARGETS =
  /^(reboot|poweroff|halt|kexec|shutdown|rescue|emergency|ctrl-alt-del|soft-reboot|sleep|suspend|hibernate|hybrid-sleep|suspend-then-hibernate|final|exit)\.target$|^systemd-(reboot|poweroff|halt|kexec|suspend|hibernate|soft-reboot)\.service$/;
const STARTING_VERBS = new Set([
  "start",
  "restart",
  "isolate",
  "reload-or-restart",
  "try-restart",
  "try-reload-or-restart",
  "enable",
  "reenable",
  "set-default",
]);

export function registerPowerRules(rules: Map<string, Rule>): void {
  const systemctl = rules.get("systemctl")!;
  rules.set("systemctl", (args, ctx, name) => {
    const rest = afterOptions(args, SYSTEMCTL_VALUE_OPTIONS);
    const verb = rest[0]?.text ?? "";
    if (STARTING_VERBS.has(verb)) {
      const units = rest.slice(1).filter((w) => !w.text.startsWith("-"));
      const down = units.find((u) => DOWN_TARGETS.test(u.text) || DOWN_TARGETS.test(`${u.text}.target`));
      if (down) return de(`\`systemctl ${verb} ${down.text}\` takes the host down`);
      const unknown = units.find((u) => u.expanded);
      if (unknown) return de(`\`systemctl ${verb} ${unknown.text}\`: a unit only known when it runs could be reboot.target`);
      if (verb === "set-default" && units.some((u) => /^(rescue|emergency|poweroff|reboot|halt)/.test(u.text)))
        return de("sets a default target the host cannot come up in");
    }
    if (verb === "kill" && rest.some((w) => /^(init\.scope|-\.slice|system\.slice)$/.test(w.text)))
      return de("`systemctl kill` of init or every service");
    return systemctl(args, ctx, name);
  });
  for (const name of ["loginctl"]) {
    const original = rules.get(name)!;
    rules.set(name, (args, ctx, n) =>
      /^(reboot|poweroff|halt|kexec|suspend|hibernate|hybrid-sleep|suspend-then-hibernate|soft-reboot)$/.test(args[0]?.text ?? "")
        ? de(`\`${name} ${args[0]!.text}\` takes the host down`)
        : original(args, ctx, n),
    );
  }
  for (const name of ["busctl", "dbus-send", "gdbus", "qdbus"]) {
    rules.set(name, (args) =>
      args.some((a) => /\b(Reboot|PowerOff|Halt|KExec|Suspend|Hibernate|SoftReboot)\b|reboot\.target|poweroff\.target/.test(a.text))
        ? de(`\`${name}\` asks logind or systemd to take the host down`)
        : cm(`\`${name}\` calls a D-Bus method`),
    );
  }
  for (const name of [
    "kexec",
    "rtcwake",
    "pm-suspend",
    "pm-hibernate",
    "pm-suspend-hybrid",
    "systemd-hibernate",
    "killall5",
    "openrc-shutdown",
    "halt.sh",
  ]) {
    rules.set(name, (args) =>
      name === "kexec" && !args.some((a) => /^(-e|--exec|-f|--force)$/.test(a.text))
        ? cm("`kexec` loads a kernel")
        : de(`\`${name}\` takes the host down or kills every process`),
    );
  }

  // kill: -1 (every process), 1 (init) with a fatal signal.
  rules.set("kill", (args) => {
    if (args.some((a) => a.text === "-l" || a.text === "-L" || a.text === "--list" || a.text === "--table")) return ro();
    let signal = "TERM";
    const pids: string[] = [];
    let i = 0;
    let onlyPids = false;
    for (; i < args.length; i++) {
      const t = args[i]!.text;
      if (args[i]!.expanded) pids.push("?");
      else if (onlyPids) pids.push(t);
      else if (t === "--") onlyPids = true;
      else if (t === "-s" || t === "-n" || t === "--signal") signal = args[++i]?.text ?? "?";
      else if (/^-[A-Za-z0-9+]+$/.test(t) && pids.length === 0 && signal === "TERM" && i === 0) signal = t.slice(1);
      else pids.push(t);
    }
    if (pids.includes("-1")) return de("`kill -1` signals every process on the host");
    const fatal = /^(9|KILL|SIGKILL|15|TERM|SIGTERM|6|ABRT|SIGABRT|11|SEGV|SIGSEGV|\?)$/i.test(signal);
    if (pids.includes("1") && fatal) return de("signals init (PID 1): the host goes down");
    if (pids.includes("?")) return cm("`kill` of processes only known when it runs");
    return cm("`kill` stops processes");
  });
  for (const name of ["pkill", "killall"]) {
    rules.set(name, (args) => {
      if (args.some((a) => /^-(l|L|-list)$/.test(a.text))) return ro();
      const patterns = args.filter((a) => !a.text.startsWith("-"));
      if (patterns.some((p) => /^(\.|\.\*|\^|\$|)$/.test(p.text) || /^(init|systemd|sshd|pmxcfs|pve-cluster|corosync)$/.test(p.text)))
        return de(`\`${name}\` matches every process or one the host cannot run without`);
      return cm(`\`${name}\` stops processes`);
    });
  }

  // Partition and disk-label tools: every spelling of them rewrites a table (their read-only uses are shapes).
  for (const name of [
    "gdisk",
    "cgdisk",
    "cfdisk",
    "fixparts",
    "growpart",
    "delpart",
    "addpart",
    "resizepart",
    "mkdosfs",
    "mkntfs",
    "mkexfatfs",
    "mkfs.vfat",
    "mformat",
    "badblocks",
    "zerofree",
    "mkudffs",
    "mkreiserfs",
    "mkbtrfs",
    "mkfs.btrfs",
  ])
    rules.set(name, () => de(`\`${name}\` rewrites a disk's partitions or filesystem`));
  const sfdisk = rules.get("sfdisk")!;
  rules.set("sfdisk", (args, ctx, n) =>
    args.some((a) => /^(--delete|--part-type|--part-label|--wipe|--move-data|--relocate)/.test(a.text))
      ? de("`sfdisk` rewrites a partition table")
      : sfdisk(args, ctx, n),
  );
  const parted = rules.get("parted")!;
  rules.set("parted", (args, ctx, n) =>
    args.some((a) => /^(mklabel|mktable|rm|mkpart|resizepart|rescue|name|set|toggle)$/.test(a.text))
      ? de("`parted` rewrites a partition table")
      : parted(args, ctx, n),
  );

  const cryptsetup = rules.get("cryptsetup")!;
  rules.set("cryptsetup", (args, ctx, n) =>
    args.some((a) => /^(luksFormat|erase|luksErase|luksKillSlot|reencrypt|luksRemoveKey|tcryptFormat|bitlkFormat)$/.test(a.text))
      ? de(`\`cryptsetup ${texts(args).find((t) => /Format|rase|Kill|reencrypt|Remove/.test(t))}\` destroys access to data`)
      : cryptsetup(args, ctx, n),
  );

  const zfs = rules.get("zfs")!;
  rules.set("zfs", (args, ctx, n) => {
    const sub = args[0]?.text;
    if (sub === "receive" || sub === "recv")
      return args.some((a) => /^-[a-zA-Z]*F/.test(a.text))
        ? de("`zfs receive -F` rolls back and overwrites the target dataset")
        : cm("`zfs receive` writes a dataset");
    if (sub === "send") return cm("`zfs send` streams a dataset (often into a receive)");
    return zfs(args, ctx, n);
  });
  const zpool = rules.get("zpool")!;
  rules.set("zpool", (args, ctx, n) =>
    /^(labelclear|destroy|create|split)$/.test(args[0]?.text ?? "") ||
    (args[0]?.text === "import" && args.some((a) => /^-[a-zA-Z]*D/.test(a.text)))
      ? de(`\`zpool ${args[0]!.text}\` destroys pool data or labels`)
      : zpool(args, ctx, n),
  );

  // crontab: lines installed from input run later, so their commands count now.
  rules.set("crontab", (args, ctx) => {
    if (args.some((a) => a.text === "-l")) return ro();
    if (args.some((a) => a.text === "-r")) return de("`crontab -r` deletes every cron job of the user");
    const parts: Classification[] = [cm("`crontab` installs scheduled jobs")];
    if (args.some((a) => a.text === "-") && ctx.stdin.kind === "text")
      for (const line of ctx.stdin.text.split("\n")) {
        const m = /^\s*(?:@\w+|(?:\S+\s+){5})(.+)$/.exec(line);
        if (m && !line.trim().startsWith("#")) parts.push(ctx.classifyLine(m[1]!));
      }
    return merge(...parts);
  });
}

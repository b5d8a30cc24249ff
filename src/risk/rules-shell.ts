// Rules for the shell itself: commands that only read, and the wrappers
// whose risk is the risk of what they run (sudo, env, timeout, xargs, nohup,
// bash -c, su -c, eval, ssh host cmd).
import { afterOptions, type Classification, cm, de, has, type Rule, type RuleContext, ro, texts } from "./rule-kit.js";
import type { Word } from "./shell-words.js";

/** Commands that only read state, whatever their arguments. */
const READ_ONLY_COMMANDS = `ls ll cat head tail less more grep egrep fgrep rg zgrep zcat zless bzcat xzcat df du free
uptime uname whoami id groups ps pgrep pstree top htop lsblk blkid findmnt lscpu lsusb lspci lsmod modinfo dmesg
echo printf true false test [ [[ sleep cal printenv pwd which type whereis file stat wc sort uniq cut tr
diff cmp md5sum sha1sum sha256sum sha512sum b2sum base64 jq yq column nl rev tac strings od hexdump xxd
getent host dig nslookup ping ping6 traceroute tracepath mtr lsof vmstat iostat mpstat sar nproc arch w who last
lastlog tty locale basename dirname realpath readlink seq expr bc cd exit export unset set shift read wait
pveversion tree ss netstat arp sensors iptables-save ip6tables-save numfmt fold fmt paste join comm
hash history alias apt-cache dpkg-query lsattr getfacl namei pidof pwdx ldd nm objdump readelf`.split(/\s+/);

export function registerShellRules(rules: Map<string, Rule>): void {
  for (const name of READ_ONLY_COMMANDS) rules.set(name, () => ro());
  rules.set("date", (args) => (has(args, "-s", "--set") ? cm("`date -s` sets the system clock") : ro()));

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
  rules.set(
    "chrt",
    lookThrough([], (rest) => rest.slice(1)),
  );
  rules.set(
    "taskset",
    lookThrough([], (rest) => rest.slice(1)),
  );
  rules.set(
    "flock",
    lookThrough(["-w", "-E", "-c"], (rest) => rest.slice(1)),
  );
  rules.set("watch", lookThrough(["-n", "-d", "--interval", "-x"]));
  rules.set(
    "timeout",
    lookThrough(["-s", "-k", "--signal", "--kill-after"], (rest) => rest.slice(1)),
  );
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
    const rest = afterOptions(args, [
      "-p",
      "-i",
      "-l",
      "-o",
      "-F",
      "-J",
      "-L",
      "-R",
      "-D",
      "-b",
      "-c",
      "-E",
      "-e",
      "-I",
      "-m",
      "-O",
      "-Q",
      "-S",
      "-W",
      "-w",
      "-B",
    ]);
    if (rest.length <= 1) return cm("`ssh` opens an interactive shell");
    return ctx.classifyLine(texts(rest.slice(1)).join(" "));
  });
  for (const name of ["scp", "rsync", "sftp"]) {
    rules.set(name, (args) =>
      name === "rsync" && has(args, "--delete", "--delete-before", "--delete-after")
        ? de("`rsync --delete` removes files at the destination")
        : cm(`\`${name}\` copies files`),
    );
  }
}

// Wrappers: commands whose risk is the risk of what they run (sudo, env,
// timeout, nice, xargs, watch, flock, nsenter, chroot, systemd-run, setsid,
// busybox, runuser, su, doas, time, stdbuf, lxc-attach, shells with -c,
// interpreters with inline code, ssh with a remote command, at, trap, eval...).
//
// Invariants: a wrapper is read-only only when every option it is given is
// one this module knows and the command it runs is read-only. When the
// options cannot be read with certainty, every way of reading them is tried
// and the worst wins ("what cannot be resolved counts as the worst it could
// be"). A wrapper that itself changes something (systemd-run creates a unit,
// flock a lock file, at a job) is at least config_mutation.
import { writeEffect } from "./paths.js";
import {
  atLeast,
  type Classification,
  cm,
  de,
  lookedThrough,
  merge,
  type Rule,
  type RuleContext,
  ro,
  type Stdin,
  via,
} from "./rule-kit.js";
import type { Word } from "./shell-words.js";

/** The names registerWrapperRules handles: the read-only allowlist does not apply to them, their inner command's does. */
export const WRAPPER_NAMES = new Set<string>();

interface WrapperSpec {
  /** Options that take a value (short `-u`, long `--user`). */
  valued?: string[];
  /** Options that take none. */
  flags?: string[];
  /** Positional words before the command (timeout's duration, chroot's new root). */
  skip?: number;
}

/** Splits a wrapper's words into its options and the command it runs; `uncertain` when an option was not recognised. */
export function splitWrapper(
  args: Word[],
  spec: WrapperSpec,
): { options: { name: string; value?: Word }[]; command: Word[]; uncertain: boolean } {
  const valued = new Set(spec.valued ?? []);
  const flags = new Set(spec.flags ?? []);
  const options: { name: string; value?: Word }[] = [];
  let uncertain = false;
  let i = 0;
  while (i < args.length) {
    const w = args[i]!;
    const t = w.text;
    if (t === "--") {
      i++;
      break;
    }
    if (!t.startsWith("-") || t === "-") break;
    if (w.expanded) uncertain = true;
    const eq = t.indexOf("=");
    if (t.startsWith("--") && eq > 0) {
      const name = t.slice(0, eq);
      if (!valued.has(name)) uncertain = true;
      options.push({ name, value: { ...w, text: t.slice(eq + 1) } });
      i++;
      continue;
    }
    if (valued.has(t)) {
      options.push({ name: t, value: args[i + 1] });
      i += 2;
      continue;
    }
    if (flags.has(t)) {
      options.push({ name: t });
      i++;
      continue;
    }
    // A short cluster: -it, -n5, -un.
    if (!t.startsWith("--")) {
      let ok = true;
      for (let j = 1; j < t.length; j++) {
        const name = `-${t[j]}`;
        if (valued.has(name)) {
          const attached = t.slice(j + 1);
          options.push({ name, value: attached ? { ...w, text: attached } : args[i + 1] });
          if (!attached) i++;
          break;
        }
        if (flags.has(name)) options.push({ name });
        else if (/^\d+$/.test(t.slice(1))) {
          options.push({ name: "-N", value: { ...w, text: t.slice(1) } });
          break;
        } else {
          ok = false;
          break;
        }
      }
      if (!ok) uncertain = true;
      i++;
      continue;
    }
    uncertain = true;
    i++;
  }
  const rest = args.slice(i);
  const skip = spec.skip ?? 0;
  return { options, command: rest.slice(skip), uncertain: uncertain || rest.slice(0, skip).some((w) => w.expanded) };
}

/** Every way of reading `args` as "options, then a command": the worst wins. */
export function worstReading(args: Word[], ctx: RuleContext, extra: Word[] = []): Classification {
  const parts: Classification[] = [cm("the wrapper's options are not all known, so every reading of them was tried")];
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (t.includes(" ") || t.includes(";") || t.includes("|")) parts.push(ctx.classifyLine(t));
    if (!t.startsWith("-")) parts.push(ctx.classifyWords([...args.slice(i), ...extra]));
  }
  return merge(...parts);
}

const opt = (options: { name: string; value?: Word }[], ...names: string[]) => options.find((o) => names.includes(o.name));

function wrapper(spec: WrapperSpec, whenEmpty: (name: string) => Classification, floor?: (name: string) => Classification): Rule {
  return (args, ctx, name) => {
    const { command, uncertain } = splitWrapper(args, spec);
    let got: Classification;
    if (uncertain) got = worstReading(args, ctx);
    else if (command.length === 0) got = whenEmpty(name);
    else got = ctx.classifyWords(command);
    return floor ? atLeast(got, floor(name)) : got;
  };
}

const opensShell = (name: string) => cm(`\`${name}\` without a command opens a shell`);
const SHELLS = ["bash", "sh", "dash", "zsh", "ksh", "ash", "mksh", "fish", "busybox-sh", "rbash"];
const INTERPRETERS = [
  "python",
  "python2",
  "python3",
  "perl",
  "ruby",
  "node",
  "nodejs",
  "php",
  "lua",
  "tclsh",
  "Rscript",
  "pwsh",
  "deno",
  "bun",
  "osascript",
  "jshell",
  "groovy",
  "irb",
  "expect",
];

/** Runs a script text: its risk is the line's, or "unknown script" when the text is not known. */
function runsScript(ctx: RuleContext, stdin: Stdin, name: string): Classification {
  // A script piped or here-documented into a shell is at least config_mutation, whatever it says.
  if (stdin.kind === "text")
    return atLeast(
      via(`\`${name}\` runs the script on its input`, ctx.classifyLine(stdin.text, { kind: "none" })),
      cm(`\`${name}\` runs a script from its input`),
    );
  if (stdin.kind === "unknown") return cm(`\`${name}\` runs a script it reads from ${stdin.from}, which this check cannot see`);
  return cm(`\`${name}\` without a script opens a shell`);
}

/** Inline code of another language: destructive when it names what a destructive command names; otherwise it may do anything short of that. */
function inlineCode(code: string, ctx: RuleContext, name: string): Classification {
  const parts: Classification[] = [cm(`\`${name}\` runs a program this check cannot read`)];
  for (const m of code.matchAll(/(["'`])((?:\\.|(?!\1).)*)\1/g)) parts.push(ctx.classifyLine(m[2]!));
  if (
    /\/dev\/(sd|nvme|vd|hd|xvd|mmcblk|md|dm-|mapper|disk|zd)|\/proc\/sysrq-trigger|\/etc\/(passwd|shadow|fstab|group|sudoers)|\/boot\b/.test(
      code,
    )
  )
    parts.push(de(`\`${name}\` code names a disk, /proc/sysrq-trigger or a file the host needs`));
  if (/\b(reboot|poweroff|shutdown|halt|mkfs|wipefs|rmtree|rm\s+-rf|unlink|os\.remove|shutil)\b/.test(code))
    parts.push(de(`\`${name}\` code names a destructive operation`));
  return merge(...parts);
}

export function registerWrapperRules(rules: Map<string, Rule>): void {
  const set = (name: string, rule: Rule) => {
    rules.set(name, (args, ctx, n) => lookedThrough(rule(args, ctx, n)));
    WRAPPER_NAMES.add(name);
  };

  set("sudo", (args, ctx) => {
    const spec = {
      valued: [
        "-u",
        "-g",
        "-U",
        "-C",
        "-h",
        "-p",
        "-r",
        "-t",
        "-D",
        "-R",
        "-T",
        "--user",
        "--group",
        "--prompt",
        "--chdir",
        "--close-from",
        "--other-user",
        "--host",
        "--role",
        "--type",
        "--command-timeout",
      ],
      flags: [
        "-n",
        "-E",
        "-H",
        "-S",
        "-P",
        "-A",
        "-k",
        "-K",
        "-l",
        "-v",
        "-b",
        "-i",
        "-s",
        "--non-interactive",
        "--preserve-env",
        "--set-home",
        "--stdin",
        "--login",
        "--shell",
        "--list",
        "--validate",
        "--reset-timestamp",
        "--remove-timestamp",
        "--background",
        "--askpass",
      ],
    };
    const { options, command, uncertain } = splitWrapper(args, spec);
    if (uncertain) return worstReading(args, ctx);
    if (opt(options, "-b", "--background")) return atLeast(ctx.classifyWords(command), cm("`sudo -b` runs in the background"));
    if (opt(options, "-i", "-s", "--login", "--shell"))
      return command.length > 0 ? ctx.classifyLine(command.map((w) => w.text).join(" ")) : runsScript(ctx, ctx.stdin, "sudo -s");
    if (command.length === 0)
      return options.some((o) => ["-l", "-v", "-k", "-K", "--list", "--validate"].includes(o.name))
        ? ro()
        : cm("`sudo` opens a root shell");
    return ctx.classifyWords(command);
  });
  set("doas", wrapper({ valued: ["-u", "-C"], flags: ["-n", "-s"] }, opensShell));
  set(
    "run0",
    wrapper(
      {
        valued: [
          "-u",
          "--user",
          "-g",
          "--group",
          "-D",
          "--chdir",
          "--setenv",
          "--unit",
          "--property",
          "--description",
          "--slice",
          "--nice",
        ],
        flags: ["--no-ask-password"],
      },
      opensShell,
      () => cm("`run0` starts a transient unit"),
    ),
  );
  set("pkexec", wrapper({ valued: ["--user"], flags: ["--disable-internal-agent", "--keep-cwd"] }, opensShell));
  set("env", (args, ctx) => {
    const spec = {
      valued: ["-u", "--unset", "-C", "--chdir", "-S", "--split-string", "--default-signal", "--ignore-signal", "--block-signal", "-P"],
      flags: ["-i", "-", "-0", "--ignore-environment", "--null", "-v", "--debug", "--list-signal-handling"],
    };
    const { options, command, uncertain } = splitWrapper(args, spec);
    if (uncertain) return worstReading(args, ctx);
    const split = opt(options, "-S", "--split-string");
    // `env -S 'pct destroy 105'` runs the words of that string.
    if (split?.value) return ctx.classifyLine([split.value.text, ...command.map((w) => w.text)].join(" "));
    const chdir = opt(options, "-C", "--chdir");
    const chdirNote = chdir ? [cm(`\`env -C ${chdir.value?.text ?? ""}\`: relative paths are judged from an unknown directory`)] : [];
    let i = 0;
    const parts: Classification[] = [...chdirNote];
    while (i < command.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(command[i]!.text)) {
      const name = command[i]!.text.split("=")[0]!;
      if (!SAFE_ENV.test(name)) parts.push(cm(`sets ${name}, which can make the command run or load another program`));
      i++;
    }
    if (i >= command.length) return merge(ro(), ...parts);
    return merge(ctx.classifyWords(command.slice(i)), ...parts);
  });
  set(
    "nice",
    wrapper({ valued: ["-n", "--adjustment"] }, () => ro()),
  );
  set(
    "ionice",
    wrapper({ valued: ["-c", "-n", "--class", "--classdata"], flags: ["-t", "--ignore"] }, () =>
      cm("`ionice` without a command changes a process"),
    ),
  );
  set(
    "nohup",
    wrapper(
      {},
      () => cm("`nohup` without a command"),
      () => cm("`nohup` detaches the command and may write nohup.out"),
    ),
  );
  set("time", (args, ctx) => {
    const { options, command, uncertain } = splitWrapper(args, {
      valued: ["-f", "-o", "--format", "--output"],
      flags: ["-p", "-v", "-a", "-q", "--portability", "--verbose", "--append", "--quiet"],
    });
    if (uncertain) return worstReading(args, ctx);
    const out = opt(options, "-o", "--output");
    const w = out?.value ? writeEffect(out.value, ctx.cwd, "writes timings to") : undefined;
    const inner = command.length > 0 ? ctx.classifyWords(command) : ro();
    return w ? merge(inner, { risk: w.risk, reasons: [w.reason] }) : inner;
  });
  set(
    "exec",
    wrapper({ valued: ["-a"], flags: ["-c", "-l"] }, () => ro()),
  );
  set(
    "stdbuf",
    wrapper({ valued: ["-i", "-o", "-e", "--input", "--output", "--error"] }, () => cm("`stdbuf` without a command")),
  );
  set(
    "setsid",
    wrapper({ flags: ["-f", "-w", "-c", "--fork", "--wait", "--ctty"] }, () => cm("`setsid` without a command")),
  );
  set(
    "timeout",
    wrapper(
      { valued: ["-s", "-k", "--signal", "--kill-after"], flags: ["--preserve-status", "--foreground", "-v", "--verbose"], skip: 1 },
      () => cm("`timeout` without a command"),
    ),
  );
  set("watch", (args, ctx) => {
    const { options, command, uncertain } = splitWrapper(args, {
      valued: ["-n", "--interval", "-q", "--equexit", "-s", "--shotsdir"],
      flags: [
        "-d",
        "--differences",
        "-t",
        "--no-title",
        "-x",
        "--exec",
        "-b",
        "--beep",
        "-e",
        "--errexit",
        "-g",
        "--chgexit",
        "-c",
        "--color",
        "-p",
        "--precise",
        "-w",
        "--no-wrap",
        "-C",
        "--no-color",
        "-r",
        "--no-rerun",
      ],
    });
    if (uncertain) return worstReading(args, ctx);
    if (command.length === 0) return cm("`watch` without a command");
    // Without -x, watch hands its words, joined, to `sh -c`.
    return opt(options, "-x", "--exec") ? ctx.classifyWords(command) : ctx.classifyLine(command.map((w) => w.text).join(" "));
  });
  set("flock", (args, ctx) => {
    const { options, command, uncertain } = splitWrapper(args, {
      valued: ["-w", "--timeout", "-E", "--conflict-exit-code", "-c", "--command"],
      flags: [
        "-s",
        "-x",
        "-e",
        "-n",
        "-u",
        "-o",
        "-F",
        "--shared",
        "--exclusive",
        "--nonblock",
        "--unlock",
        "--close",
        "--no-fork",
        "--verbose",
        "--nb",
      ],
    });
    const floor = cm("`flock` creates its lock file");
    if (uncertain) return atLeast(worstReading(args, ctx), floor);
    const script = opt(options, "-c", "--command");
    // `flock FILE -c 'cmd'`: -c may come after the file too.
    const lateC = command.findIndex((w) => w.text === "-c" || w.text === "--command");
    if (script?.value) return atLeast(ctx.classifyLine(script.value.text), floor);
    if (lateC >= 0) return atLeast(ctx.classifyLine(command[lateC + 1]?.text ?? ""), floor);
    return atLeast(command.length > 1 ? ctx.classifyWords(command.slice(1)) : ro(), floor);
  });
  set("runuser", (args, ctx) => suLike(args, ctx, "runuser"));
  set("su", (args, ctx) => suLike(args, ctx, "su"));
  set("sg", (args, ctx) =>
    args[1]
      ? atLeast(
          ctx.classifyLine(
            args
              .slice(1)
              .map((w) => w.text)
              .filter((t) => t !== "-c")
              .join(" "),
          ),
          ro(),
        )
      : cm("`sg` opens a shell"),
  );
  set("command", (args, ctx) => {
    const { options, command, uncertain } = splitWrapper(args, { flags: ["-p", "-v", "-V"] });
    if (uncertain) return worstReading(args, ctx);
    if (opt(options, "-v", "-V")) return ro();
    return command.length > 0 ? ctx.classifyWords(command) : ro();
  });
  set("builtin", (args, ctx) => (args.length > 0 ? ctx.classifyWords(args) : ro()));
  set("xargs", (args, ctx) => {
    const spec = {
      valued: [
        "-I",
        "-n",
        "-P",
        "-d",
        "-L",
        "-s",
        "-E",
        "-a",
        "--arg-file",
        "--max-args",
        "--max-procs",
        "--delimiter",
        "--max-lines",
        "--max-chars",
        "--eof",
        "--replace",
        "--process-slot-var",
      ],
      flags: [
        "-0",
        "-r",
        "-t",
        "-p",
        "-x",
        "-o",
        "-i",
        "-e",
        "-l",
        "--null",
        "--no-run-if-empty",
        "--verbose",
        "--interactive",
        "--exit",
        "--open-tty",
      ],
    };
    const { command, uncertain } = splitWrapper(args, spec);
    // xargs appends words it reads: unknown words, which may be options or paths.
    const input: Word = { text: "<input>", dynamic: true, expanded: true };
    if (uncertain) return worstReading(args, ctx, [input]);
    return ctx.classifyWords([...(command.length > 0 ? command : [{ text: "echo", dynamic: false }]), input]);
  });
  set("parallel", (args, ctx) => {
    const cut = args.findIndex((w) => /^:::+\+?$/.test(w.text));
    const before = cut < 0 ? args : args.slice(0, cut);
    return atLeast(worstReading(before, ctx, [{ text: "<input>", dynamic: true, expanded: true }]), ro());
  });
  set(
    "nsenter",
    wrapper(
      {
        valued: ["-t", "--target", "-S", "--setuid", "-G", "--setgid", "--wd", "-w"],
        flags: [
          "-m",
          "-u",
          "-i",
          "-n",
          "-p",
          "-U",
          "-C",
          "-T",
          "-a",
          "-r",
          "-F",
          "-Z",
          "--all",
          "--mount",
          "--uts",
          "--ipc",
          "--net",
          "--pid",
          "--user",
          "--cgroup",
          "--time",
          "--preserve-credentials",
          "--no-fork",
          "--root",
          "--follow-context",
        ],
      },
      opensShell,
      () => cm("`nsenter` runs in another process's namespaces (often the host's)"),
    ),
  );
  set(
    "chroot",
    wrapper({ valued: ["--userspec", "--groups"], flags: ["--skip-chdir"], skip: 1 }, opensShell, () =>
      cm("`chroot` runs in another root"),
    ),
  );
  set(
    "unshare",
    wrapper(
      {
        valued: ["--propagation", "--setgroups", "-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd"],
        flags: [
          "-m",
          "-u",
          "-i",
          "-n",
          "-p",
          "-U",
          "-C",
          "-T",
          "-f",
          "-r",
          "-c",
          "--mount",
          "--uts",
          "--ipc",
          "--net",
          "--pid",
          "--user",
          "--cgroup",
          "--time",
          "--fork",
          "--map-root-user",
          "--map-current-user",
          "--mount-proc",
          "--kill-child",
        ],
      },
      opensShell,
    ),
  );
  set("systemd-run", (args, ctx) => {
    const spec = {
      valued: [
        "-u",
        "--unit",
        "-p",
        "--property",
        "--description",
        "--slice",
        "-E",
        "--setenv",
        "--uid",
        "--gid",
        "--nice",
        "-M",
        "--machine",
        "-H",
        "--host",
        "--on-active",
        "--on-boot",
        "--on-startup",
        "--on-unit-active",
        "--on-unit-inactive",
        "--on-calendar",
        "--on-clock-change",
        "--timer-property",
        "--path-property",
        "--socket-property",
        "--working-directory",
        "--service-type",
      ],
      flags: [
        "--scope",
        "--user",
        "--system",
        "-t",
        "--pty",
        "-P",
        "--pipe",
        "-q",
        "--quiet",
        "-r",
        "--remain-after-exit",
        "--wait",
        "-G",
        "--collect",
        "--no-block",
        "--no-ask-password",
        "-S",
        "--shell",
        "-d",
        "--same-dir",
      ],
    };
    const { options, command, uncertain } = splitWrapper(args, spec);
    const floor = cm("`systemd-run` starts a transient unit");
    if (uncertain) return atLeast(worstReading(args, ctx), floor);
    if (opt(options, "-S", "--shell") || command.length === 0) return atLeast(runsScript(ctx, ctx.stdin, "systemd-run"), floor);
    return atLeast(ctx.classifyWords(command), floor);
  });
  set("busybox", (args, ctx) => {
    if (args.length === 0 || args[0]!.text.startsWith("-"))
      return args.every((a) => /^--list(-full)?$/.test(a.text)) ? ro() : cm("`busybox` with options");
    return ctx.classifyWords(args);
  });
  set("toybox", rules.get("busybox")!);
  set("lxc-attach", (args, ctx) => {
    const dd = args.findIndex((w) => w.text === "--");
    if (dd >= 0) return dd + 1 < args.length ? ctx.classifyWords(args.slice(dd + 1)) : opensShell("lxc-attach");
    return worstReading(args, ctx);
  });
  for (const name of ["lxc-execute", "schroot", "distrobox-enter", "toolbox"]) set(name, (args, ctx) => worstReading(args, ctx));

  for (const sh of SHELLS) {
    set(sh, (args, ctx, name) => {
      for (let i = 0; i < args.length; i++) {
        const t = args[i]!.text;
        if (t === "--" || !t.startsWith("-")) {
          const rest = t === "--" ? args.slice(i + 1) : args.slice(i);
          return rest.length === 0
            ? runsScript(ctx, ctx.stdin, name)
            : cm(`\`${name}\` runs the script file ${rest[0]!.text}, which this check cannot see`);
        }
        if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(t)) {
          const script = args[i + 1];
          if (!script) return cm(`\`${name} -c\` without a script`);
          if (script.expanded) return atLeast(worstReading([script], ctx), cm(`\`${name} -c\` runs a script only known when it runs`));
          return ctx.classifyLine(script.text);
        }
        if (/^-[a-zA-Z]*s[a-zA-Z]*$/.test(t)) return runsScript(ctx, ctx.stdin, name);
        if (/^(-[lixeuvo]+|--login|--norc|--noprofile|--posix|-o|\+o|[+-]O)$/.test(t)) continue;
        return cm(`\`${name} ${t}\` is not understood`);
      }
      return runsScript(ctx, ctx.stdin, name);
    });
  }
  for (const name of INTERPRETERS) {
    set(name, (args, ctx) => {
      const inline = args.findIndex((w) => /^-[a-zA-Z]*[ceErx]$/.test(w.text) || w.text === "--eval" || w.text === "-E");
      if (inline >= 0 && args[inline + 1]) return inlineCode(args[inline + 1]!.text, ctx, name);
      if (args.every((a) => /^(-V|--version|-v|-h|--help)$/.test(a.text)) && args.length > 0) return ro();
      if (args.some((a) => !a.text.startsWith("-"))) return cm(`\`${name}\` runs a program file this check cannot see`);
      if (ctx.stdin.kind === "text") return inlineCode(ctx.stdin.text, ctx, name);
      return cm(`\`${name}\` runs a program from its input, which this check cannot see`);
    });
  }
  set("eval", (args, ctx) => {
    const text = args.map((a) => a.text).join(" ");
    if (args.some((a) => a.expanded)) return atLeast(worstReading(args, ctx), cm("`eval` of text only known when it runs"));
    return ctx.classifyLine(text);
  });
  for (const name of ["source", "."]) set(name, () => cm("sources a script this check cannot see"));
  // `trap 'cmd' EXIT` runs cmd later in this shell.
  set("trap", (args, ctx) => {
    if (args.length === 0 || args.every((a) => /^-[lp]$/.test(a.text))) return ro();
    const action = args[0]!.text === "--" ? args[1] : args[0];
    if (!action || action.text === "-" || action.text === "") return ro();
    return action.expanded ? cm("`trap` of a command only known when it runs") : ctx.classifyLine(action.text);
  });
  // `hash -p /sbin/reboot ls` makes `ls` run reboot; `alias ls=reboot` in an interactive shell.
  set("hash", (args, ctx) => {
    const p = args.findIndex((a) => a.text === "-p");
    if (p < 0)
      return args.every((a) => /^-[lrt]$/.test(a.text) || !a.text.startsWith("-")) && !args.some((a) => a.text === "-r" || a.text === "-d")
        ? ro()
        : cm("`hash` changes remembered paths");
    const path = args[p + 1];
    const program = path ? path.text.slice(path.text.lastIndexOf("/") + 1) : "";
    const label = `\`hash -p\` makes a name run ${path?.text ?? "another program"}`;
    return atLeast(program ? via(label, ctx.classifyWords([{ text: program, dynamic: false }])) : ro(), cm(label));
  });
  set("alias", (args, ctx) => {
    const defs = args.filter((a) => a.text.includes("="));
    if (args.some((a) => a.text.startsWith("-") && a.text !== "-p")) return cm("`alias` with an option it does not have");
    if (defs.length === 0) return ro();
    return merge(cm("`alias` redefines a command name"), ...defs.map((d) => ctx.classifyLine(d.text.slice(d.text.indexOf("=") + 1))));
  });
  for (const name of ["at", "batch"]) {
    set(name, (args, ctx) => {
      const floor = cm(`\`${name}\` schedules a job`);
      if (args.some((a) => /^-[lqcd]$/.test(a.text) || a.text === "-r"))
        return args.some((a) => a.text === "-l" || a.text === "-c") ? ro() : floor;
      if (args.some((a) => a.text === "-f")) return atLeast(cm(`\`${name} -f\` runs a script file this check cannot see`), floor);
      return atLeast(runsScript(ctx, ctx.stdin, name), floor);
    });
  }
  set("script", (args, ctx) => {
    const c = args.findIndex((a) => a.text === "-c" || a.text === "--command");
    return atLeast(
      c >= 0 && args[c + 1] ? ctx.classifyLine(args[c + 1]!.text) : cm("`script` opens a shell"),
      cm("`script` writes a typescript file"),
    );
  });
  // Terminal multiplexers and process runners that take a command somewhere in their words.
  for (const name of [
    "tmux",
    "screen",
    "dtach",
    "abduco",
    "setpriv",
    "prlimit",
    "numactl",
    "cgexec",
    "gosu",
    "su-exec",
    "sshpass",
    "strace",
    "ltrace",
    "catchsegv",
    "firejail",
    "proot",
    "torsocks",
    "proxychains",
    "proxychains4",
    "faketime",
    "fakeroot",
    "eatmydata",
    "nocache",
    "systemd-inhibit",
    "dbus-launch",
    "dbus-run-session",
    "xvfb-run",
    "chronic",
    "sem",
    "chpst",
    "s6-setuidgid",
    "setuidgid",
    "start-stop-daemon",
    "machinectl",
    "systemd-nspawn",
    "daemonize",
    "dumb-init",
    "tini",
    "authbind",
    "cpulimit",
    "trickle",
    "valgrind",
    "perf",
    "gdb",
    "entr",
    "ssh-agent",
    "direnv",
    "unbuffer",
    "chrt",
    "taskset",
    "caffeinate",
    "retry",
    "ifne",
    "newgrp",
    "with-lock-ex",
    "lckdo",
    "run-one",
    "run-this-one",
    "keep-one-running",
    "nohup.sh",
  ]) {
    set(name, (args, ctx) => atLeast(worstReading(args, ctx), cm(`\`${name}\` runs another program`)));
  }
  set("run-parts", () => cm("`run-parts` runs every script in a directory"));
}

/** su and runuser: `-c 'cmd'` runs cmd in a shell; `-- cmd` (runuser -u) runs cmd; neither opens a shell that reads its input. */
function suLike(args: Word[], ctx: RuleContext, name: string): Classification {
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (t === "-c" || t === "--command" || t === "--session-command") return scriptOf(args[i + 1], ctx, name);
    if (t.startsWith("--command=")) return scriptOf({ ...args[i]!, text: t.slice(10) }, ctx, name);
    if (/^-[lmpf]*c./.test(t)) return scriptOf({ ...args[i]!, text: t.slice(t.indexOf("c") + 1) }, ctx, name);
  }
  const { command, uncertain } = splitWrapper(args, {
    valued: ["-u", "--user", "-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w", "--whitelist-environment"],
    flags: ["-", "-l", "--login", "-m", "-p", "--preserve-environment", "-f", "-P", "--pty"],
  });
  if (uncertain) return worstReading(args, ctx);
  const userFirst = args.some((a) => a.text === "-u" || a.text === "--user") ? command : command.slice(1);
  if (userFirst.length > 0 && name === "runuser") return ctx.classifyWords(userFirst);
  if (userFirst.length > 0) return worstReading(command, ctx);
  return runsScript(ctx, ctx.stdin, name);
}

function scriptOf(script: Word | undefined, ctx: RuleContext, name: string): Classification {
  if (!script) return cm(`\`${name} -c\` without a command`);
  if (script.expanded) return atLeast(worstReading([script], ctx), cm(`\`${name} -c\` runs a command only known when it runs`));
  return ctx.classifyLine(script.text);
}

/** Environment variables that change no program's choice of what to run or load. */
export const SAFE_ENV =
  /^(LANG|LANGUAGE|LC_[A-Z]+|TZ|TERM|COLUMNS|LINES|NO_COLOR|CLICOLOR|DEBIAN_FRONTEND|DEBCONF_NONINTERACTIVE_SEEN|SYSTEMD_COLORS|TMPDIR|COMPOSE_PROJECT_NAME)$/;

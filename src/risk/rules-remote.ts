// Commands that run another command somewhere else: ssh (on another host,
// and its ProxyCommand here), docker/podman run and exec (in a container,
// which may have the host mounted), pct exec, qm guest exec, lxc/incus exec,
// kubectl exec, ip netns exec. Also the Proxmox and container verbs that
// take a host down or overwrite a guest (pvesh .../status --command reboot,
// qmrestore --force, qm guest cmd shutdown).
//
// Invariant: the inner command is classified as if it ran here (its effect
// on the guest or remote host is the operator's concern too); a container
// given the host's root or system trees read-write, or privileged, makes
// whatever runs in it count as if it ran on the host, and an image's own
// unknown program counts as the worst.
import { isSystemTree, resolvePath, writeEffect } from "./paths.js";
import {
  afterOptions,
  atLeast,
  type Classification,
  cm,
  de,
  lookedThrough,
  merge,
  type Rule,
  type RuleContext,
  ro,
  texts,
  via,
} from "./rule-kit.js";
import type { Word } from "./shell-words.js";
import { splitWrapper, worstReading } from "./wrappers.js";

/** ssh -o keys (and config file directives) that run a local command. */
const SSH_EXEC_KEYS =
  /^(proxycommand|localcommand|permitlocalcommand|knownhostscommand|remotecommand|match|include|pkcs11provider|securitykeyprovider|sshaskpass|controlpath|proxyusefdpass)$/i;
const SSH_VALUED = [
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
  "-P",
];
const SSH_FLAGS = [
  "-4",
  "-6",
  "-A",
  "-a",
  "-C",
  "-f",
  "-G",
  "-g",
  "-K",
  "-k",
  "-M",
  "-N",
  "-n",
  "-q",
  "-s",
  "-T",
  "-t",
  "-V",
  "-v",
  "-vv",
  "-vvv",
  "-X",
  "-x",
  "-Y",
  "-y",
];

function sshRule(args: Word[], ctx: RuleContext): Classification {
  const first = splitWrapper(args, { valued: SSH_VALUED, flags: SSH_FLAGS });
  // OpenSSH reads options after the destination too (`ssh host -o ProxyCommand=x true`).
  const second = splitWrapper(first.command.slice(1), { valued: SSH_VALUED, flags: SSH_FLAGS });
  const options = [...first.options, ...second.options];
  const uncertain = first.uncertain || second.uncertain;
  const command = first.command.length > 0 ? [first.command[0]!, ...second.command] : [];
  const parts: Classification[] = [];
  for (const o of options) {
    if (o.name === "-o" && o.value) {
      const [key, ...rest] = o.value.text.split(/[=\s]+/);
      const value = rest.join(" ");
      if (SSH_EXEC_KEYS.test(key ?? ""))
        parts.push(
          cm(`runs a command given in ${key}`),
          value && !/^(no|none)$/i.test(value)
            ? via(`runs a command given in ${key}`, ctx.classifyLine(value.replace(/%[a-zA-Z%]/g, "x")))
            : ro(),
        );
    }
    if (o.name === "-F") parts.push(cm("`ssh -F` reads a configuration that may name commands to run (ProxyCommand)"));
    if (["-L", "-R", "-D", "-W", "-w", "-M", "-S", "-O", "-f", "-N"].includes(o.name))
      parts.push(cm(`\`ssh ${o.name}\` opens forwarding or control channels`));
  }
  if (uncertain) return merge(worstReading(args, ctx), ...parts);
  if (command.length <= 1) return merge(runsRemote(ctx), ...parts);
  // The remote command is the rest, joined by spaces, run by the remote shell.
  return merge(ctx.classifyLine(texts(command.slice(1)).join(" ")), ...parts);
}

function runsRemote(ctx: RuleContext): Classification {
  if (ctx.stdin.kind === "text") return ctx.classifyLine(ctx.stdin.text, { kind: "none" });
  return cm("`ssh` without a command runs whatever its input says on the remote host");
}

const DOCKER_RUN_VALUED =
  "-v --volume --mount -e --env --env-file --name -p --publish -w --workdir -u --user --network --net --entrypoint -l --label -m --memory --cpus --restart --hostname -h --add-host --device --cap-add --cap-drop --security-opt --ulimit --log-driver --log-opt --pid --ipc --uts --userns --tmpfs --dns --shm-size --platform --pull --stop-signal --health-cmd --cgroupns --volumes-from --gpus --runtime --link --expose --label-file --cidfile --memory-swap --cpu-shares --cpuset-cpus --stop-timeout --ip --mac-address --group-add --sysctl --detach-keys -a --attach".split(
    " ",
  );
const DOCKER_RUN_FLAGS =
  "-d --detach -i --interactive -t --tty -it -ti -dit -itd --rm --privileged --init --read-only -P --publish-all -q --quiet --no-healthcheck --oom-kill-disable --sig-proxy".split(
    " ",
  );

/** A mount of host paths into a container: what the container can do to the host. */
function hostExposure(options: { name: string; value?: Word }[], cwd: string | undefined): string | undefined {
  for (const o of options) {
    const v = o.value?.text ?? "";
    if (o.name === "--privileged") return "is privileged (every host device)";
    if ((o.name === "--pid" || o.name === "--userns" || o.name === "--ipc") && v === "host")
      return `shares the host's ${o.name.slice(2)} namespace`;
    if (o.name === "--device") return `is given the host device ${v}`;
    if (o.name === "--cap-add" && /^(ALL|SYS_ADMIN|SYS_MODULE|SYS_RAWIO|SYS_BOOT|SYS_PTRACE|DAC_READ_SEARCH)$/i.test(v))
      return `gets the capability ${v}`;
    let source: string | undefined;
    let readOnly = false;
    if (o.name === "-v" || o.name === "--volume") {
      const parts = v.split(":");
      source = parts[0];
      readOnly = parts.slice(2).join(",").split(",").includes("ro");
    } else if (o.name === "--mount") {
      const kv = Object.fromEntries(v.split(",").map((p) => p.split("=") as [string, string]));
      if ((kv.type ?? "volume") !== "bind") continue;
      source = kv.source ?? kv.src;
      readOnly = "readonly" in kv || "ro" in kv || kv.readonly === "true";
    }
    if (source === undefined || !/^[/.~$]/.test(source)) continue;
    const p = resolvePath({ text: source, dynamic: /[$*?]/.test(source), expanded: source.includes("$") }, cwd);
    if (p !== undefined && /docker\.sock|podman\.sock/.test(p)) return `is given the container engine's socket ${p} (the whole host)`;
    if (!readOnly && (p === undefined || isSystemTree(p))) return `has the host's ${p ?? source} mounted read-write`;
  }
  return undefined;
}

function dockerRunRule(args: Word[], ctx: RuleContext, label: string): Classification {
  const { options, command, uncertain } = splitWrapper(args, { valued: DOCKER_RUN_VALUED, flags: DOCKER_RUN_FLAGS });
  const floor = cm(`\`${label}\` starts a container`);
  const exposure = hostExposure(options, ctx.cwd);
  const inner = command.slice(1);
  const entrypoint = options.find((o) => o.name === "--entrypoint")?.value;
  const program = entrypoint ? [entrypoint, ...inner] : inner;
  const innerRisk = uncertain ? worstReading(args, ctx) : program.length > 0 ? ctx.classifyWords(program) : ro();
  if (exposure) {
    if (program.length === 0 && !uncertain)
      return de(`\`${label}\`: the container ${exposure} and runs its image's own program, which this check cannot see`);
    if (innerRisk.risk !== "read_only")
      return de(`\`${label}\`: the container ${exposure}, and runs \`${texts(program).join(" ").slice(0, 60)}\` in it`);
    return atLeast(innerRisk, cm(`\`${label}\`: the container ${exposure}`));
  }
  return atLeast(innerRisk, floor);
}

function dockerRule(original: Rule): Rule {
  return (args, ctx, name) => {
    const rest = afterOptions(args, ["-H", "--host", "--context", "-c", "--config", "-l", "--log-level"]);
    const [obj, verb] = texts(rest);
    if (obj === "run" || (obj === "container" && verb === "run") || obj === "create" || (obj === "container" && verb === "create"))
      return lookedThrough(dockerRunRule(rest.slice(obj === "container" ? 2 : 1), ctx, `${name} run`));
    if (obj === "compose" && (verb === "run" || verb === "exec")) {
      const after = splitWrapper(rest.slice(2), {
        valued: [
          "-e",
          "--env",
          "-u",
          "--user",
          "-w",
          "--workdir",
          "--entrypoint",
          "-v",
          "--volume",
          "-p",
          "--publish",
          "--name",
          "--index",
        ],
        flags: ["-d", "--detach", "--rm", "-T", "--no-TTY", "-i", "--interactive", "--no-deps", "--service-ports", "--privileged", "-it"],
      });
      const inner = after.command.slice(1);
      return lookedThrough(
        atLeast(
          after.uncertain
            ? worstReading(rest.slice(2), ctx)
            : inner.length > 0
              ? ctx.classifyWords(inner)
              : cm("runs the service's own program"),
          cm(`\`${name} compose ${verb}\` runs in a service container`),
        ),
      );
    }
    if (obj === "cp" || (obj === "container" && verb === "cp")) {
      const ops = rest.slice(obj === "cp" ? 1 : 2).filter((w) => !w.text.startsWith("-"));
      const dest = ops[ops.length - 1];
      const e = dest && !dest.text.includes(":") ? writeEffect(dest, ctx.cwd, "copies out of a container onto") : undefined;
      return lookedThrough(e ? { risk: e.risk, reasons: [e.reason] } : cm(`\`${name} cp\` copies files into a container`));
    }
    if (obj === "exec" || (obj === "container" && verb === "exec")) {
      const { command, uncertain } = splitWrapper(rest.slice(obj === "exec" ? 1 : 2), {
        valued: ["-u", "--user", "-w", "--workdir", "-e", "--env", "--env-file", "--detach-keys"],
        flags: ["-i", "-t", "-it", "-ti", "-d", "--detach", "--interactive", "--tty", "--privileged"],
      });
      if (uncertain) return lookedThrough(worstReading(rest.slice(1), ctx));
      return lookedThrough(command.length > 1 ? ctx.classifyWords(command.slice(1)) : cm(`\`${name} exec\` opens a shell in a container`));
    }
    return original(args, ctx, name);
  };
}

/** After `--`, or after `skip` leading words: the command a guest runs. */
function afterDashes(args: Word[], skip: number): Word[] {
  const dd = args.findIndex((a) => a.text === "--");
  return dd >= 0 ? args.slice(dd + 1) : afterOptions(args.slice(skip)).slice(0);
}

export function registerRemoteRules(rules: Map<string, Rule>): void {
  rules.set("ssh", (args, ctx) => lookedThrough(sshRule(args, ctx)));
  for (const name of ["scp", "sftp", "rsync"]) {
    rules.set(name, (args, ctx) => {
      const parts: Classification[] = [cm(`\`${name}\` copies files`)];
      for (let i = 0; i < args.length; i++) {
        const t = args[i]!.text;
        const value = t.includes("=") ? t.slice(t.indexOf("=") + 1) : args[i + 1]?.text;
        if (/^(-e|--rsh|--rsync-path)(=|$)/.test(t) && value) parts.push(ctx.classifyLine(value));
        if (t === "-S" && name !== "rsync" && value) parts.push(ctx.classifyLine(value));
        if ((t === "-o" || t.startsWith("-o")) && SSH_EXEC_KEYS.test((t === "-o" ? value : t.slice(2))?.split(/[=\s]/)[0] ?? ""))
          parts.push(
            cm("runs a command given in an ssh option"),
            ctx.classifyLine((t === "-o" ? value : t.slice(2))?.split(/[=\s]/).slice(1).join(" ") ?? ""),
          );
        if (name === "rsync" && /^--(delete|remove-source-files)/.test(t)) parts.push(de(`\`rsync ${t}\` removes files`));
      }
      return merge(...parts);
    });
  }
  const docker = rules.get("docker")!;
  rules.set("docker", dockerRule(docker));
  rules.set("podman", dockerRule(docker));
  rules.set("nerdctl", dockerRule(docker));

  const pct = rules.get("pct")!;
  rules.set("pct", (args, ctx, name) => {
    const sub = args[0]?.text;
    if (sub === "exec") {
      const inner = afterDashes(args, 2);
      return lookedThrough(inner.length === 0 ? cm("`pct exec` without a command") : ctx.classifyWords(inner));
    }
    if (sub === "enter" || sub === "console") return cm(`\`pct ${sub}\` opens a shell in a container`);
    if (sub === "restore" || (sub === "create" && args.some((a) => /^--?force$/.test(a.text))))
      return de(`\`pct ${sub}\` overwrites a container`);
    if (sub === "pull" && args[3]) {
      const e = writeEffect(args[3], ctx.cwd, "copies out of a container onto");
      if (e) return { risk: e.risk, reasons: [e.reason] };
    }
    return pct(args, ctx, name);
  });
  const qm = rules.get("qm")!;
  rules.set("qm", (args, ctx, name) => {
    if (args[0]?.text === "guest" && args[1]?.text === "exec") {
      const inner = afterDashes(args.slice(2), 1).filter((w) => !["--synchronous", "--timeout", "--pass-stdin"].includes(w.text));
      return lookedThrough(inner.length === 0 ? cm("`qm guest exec` without a command") : ctx.classifyWords(inner));
    }
    if (args[0]?.text === "guest" && args[1]?.text === "cmd")
      return /^(shutdown|suspend-disk|suspend-ram|suspend-hybrid)$/.test(args[3]?.text ?? "")
        ? de(`\`qm guest cmd ${args[3]!.text}\` takes the guest down`)
        : cm("`qm guest cmd` acts inside a VM");
    if (args[0]?.text === "guest" && args[1]?.text === "passwd") return cm("`qm guest passwd` changes a password in a VM");
    if (args[0]?.text === "terminal" || args[0]?.text === "monitor") return cm(`\`qm ${args[0].text}\` opens a console`);
    if (args[0]?.text === "importdisk" || args[0]?.text === "disk") return cm(`\`qm ${args[0].text}\` changes a VM's disks`);
    return qm(args, ctx, name);
  });
  rules.set("qmrestore", (args) =>
    args.some((a) => /^--?force(=1|=true)?$/.test(a.text))
      ? de("`qmrestore --force` overwrites an existing VM")
      : cm("`qmrestore` restores a VM"),
  );
  rules.set("pct-restore", rules.get("qmrestore")!);
  const pvesh = rules.get("pvesh")!;
  rules.set("pvesh", (args, ctx, name) => {
    const path = args[1]?.text ?? "";
    const command = args.findIndex((a) => /^--?command$/.test(a.text));
    const value = command >= 0 ? args[command + 1]?.text : args.find((a) => /^--?command=/.test(a.text))?.text.split("=")[1];
    if (args[0]?.text === "create" && /\/status\/?$/.test(path) && /^(reboot|shutdown)$/.test(value ?? ""))
      return de(`\`pvesh create ${path} --command ${value}\` takes a node down`);
    if (args[0]?.text === "create" && /\/(qemu|lxc)\/[^/]+\/status\/(stop|reset|shutdown|reboot|suspend)\/?$/.test(path))
      return cm(`\`pvesh create ${path}\` stops or restarts a guest`);
    if (args[0]?.text === "create" && /\/(stopall|migrateall)\/?$/.test(path))
      return de(`\`pvesh create ${path}\` stops every guest of a node`);
    if (args[0]?.text === "set" && /\/(qemu|lxc)\/[^/]+\/resize/.test(path)) return cm("resizes a disk");
    return pvesh(args, ctx, name);
  });
  for (const name of ["lxc", "incus"]) {
    rules.set(name, (args, ctx) => {
      if (args[0]?.text === "exec") {
        const inner = afterDashes(args, 2);
        return lookedThrough(inner.length === 0 ? cm(`\`${name} exec\` without a command`) : ctx.classifyWords(inner));
      }
      if (/^(delete|rm)$/.test(args[0]?.text ?? "")) return de(`\`${name} delete\` removes an instance`);
      return cm(`\`${name}\` changes instances`);
    });
  }
  const kubectl = rules.get("kubectl")!;
  rules.set("kubectl", (args, ctx, name) => {
    if (args.some((a) => a.text === "exec" || a.text === "debug" || a.text === "run")) {
      const inner = afterDashes(args, args.length);
      return lookedThrough(
        atLeast(
          inner.length > 0 ? ctx.classifyWords(inner) : cm("`kubectl exec` opens a shell"),
          args.some((a) => a.text === "exec") ? ro() : cm("`kubectl run` starts a pod"),
        ),
      );
    }
    return kubectl(args, ctx, name);
  });
  const ip = rules.get("ip")!;
  rules.set("ip", (args, ctx, name) => {
    const rest = afterOptions(args, ["-n", "-f", "-family", "-netns"]);
    if (rest[0]?.text.startsWith("netns") && rest[1]?.text === "exec")
      return lookedThrough(rest.length > 3 ? ctx.classifyWords(rest.slice(3)) : cm("`ip netns exec` without a command"));
    if (/^-?(b|batch|force)$/.test(args[0]?.text ?? "")) return cm("`ip -batch` runs commands from a file");
    return ip(args, ctx, name);
  });
}

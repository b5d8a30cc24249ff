// What a command does to files, whatever its rule says about its purpose:
// the files it writes (cp's destination, tee's operands, dd's of=, sort -o,
// tar -f, curl -o/-D, sed's w, git --output...), the files it removes, the
// devices it is pointed at. Every write is judged by paths.ts: onto a block
// device, a kernel trigger or a file the host needs, destructive; onto an
// unknown path, destructive too.
//
// Invariant: a command this module has no target list for, that is not on
// the read-only list, and that names a block device or kernel trigger (or,
// when it has no rule at all, a vital file) is destructive: it cannot be
// shown not to write there.
import { type Effect, isBlockDevice, isKernelTrigger, isSystemTree, isVitalFile, removeEffect, resolvePath, writeEffect } from "./paths.js";
import { sedScriptIsReadOnly } from "./read-only-shapes.js";
import type { Word } from "./shell-words.js";

const w = (text: string, like: Word): Word => ({ ...like, text });

/** The value of an option given as `-o X`, `-oX`, `--output X` or `--output=X`. */
function optionValues(args: Word[], short: string[], long: string[]): Word[] {
  const out: Word[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const t = a.text;
    if (t === "--") break;
    for (const l of long) {
      if (t === l && args[i + 1]) out.push(args[i + 1]!);
      else if (t.startsWith(`${l}=`)) out.push(w(t.slice(l.length + 1), a));
    }
    if (/^-[^-]/.test(t)) {
      for (const s of short) {
        const at = t.indexOf(s.slice(1), 1);
        if (at < 0) continue;
        const attached = t.slice(at + 1);
        if (attached) out.push(w(attached, a));
        else if (args[i + 1]) out.push(args[i + 1]!);
      }
    }
  }
  return out;
}

const operands = (args: Word[], valued: string[] = []): Word[] => {
  const out: Word[] = [];
  let only = false;
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (!only && t === "--") only = true;
    else if (!only && t.startsWith("-") && t !== "-") {
      if (valued.includes(t)) i++;
    } else out.push(args[i]!);
  }
  return out;
};

/** Destination and sources of cp/mv/install/ln: `-t DIR`, or the last operand (a directory receives each source's name). */
function copyTargets(args: Word[], valued: string[]): { sources: Word[]; targets: Word[] } {
  const dir = optionValues(args, ["-t"], ["--target-directory"])[0];
  const ops = operands(args, [...valued, "-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"]);
  const dest = dir ?? ops[ops.length - 1];
  const sources = dir ? ops : ops.slice(0, -1);
  if (!dest) return { sources, targets: [] };
  const targets = [
    dest,
    ...sources.map((s) =>
      w(`${dest.text.replace(/\/$/, "")}/${s.text.slice(s.text.lastIndexOf("/") + 1)}`, {
        ...dest,
        dynamic: dest.dynamic || s.dynamic,
        expanded: dest.expanded || s.expanded,
      }),
    ),
  ];
  return { sources, targets };
}

function tarEffects(args: Word[], cwd: string | undefined): Effect[] {
  const first = args[0]?.text ?? "";
  const oldStyle = first !== "" && !first.startsWith("-") ? first : "";
  const letters = oldStyle + args.map((a) => /^-([a-zA-Z]+)/.exec(a.text)?.[1] ?? "").join("");
  const creates = /[cruA]/.test(letters) || args.some((a) => /^--(create|append|update|concatenate)$/.test(a.text));
  const extracts = /x/.test(letters) || args.some((a) => /^--(extract|get)$/.test(a.text));
  const effects: Effect[] = [];
  let files = optionValues(args, ["-f"], ["--file"]);
  if (oldStyle.includes("f")) files = [...files, args[1]!].filter(Boolean);
  if (creates)
    for (const f of files)
      if (f.text !== "-")
        effects.push(writeEffect(f, cwd, "writes the archive") ?? { risk: "config_mutation", reason: "writes an archive" });
  if (extracts) {
    const dir = optionValues(args, ["-C"], ["--directory"]).pop();
    const where = dir ? resolvePath(dir, cwd) : cwd;
    if (where === undefined || isSystemTree(where))
      effects.push({
        risk: "destructive",
        reason: `extracts an archive into ${where ?? "a directory only known when it runs"}, over files the host needs`,
      });
    else effects.push({ risk: "config_mutation", reason: `extracts an archive into ${where}` });
  }
  if (
    args.some(
      (a) =>
        /^--(to-command|use-compress-program|checkpoint-action|info-script|new-volume-script|rsh-command)/.test(a.text) ||
        /^-[a-zA-Z]*[IF]/.test(a.text),
    )
  )
    effects.push({ risk: "destructive", reason: "`tar` runs a program named in its options (--to-command, -I, --checkpoint-action)" });
  return effects;
}

/** sed's `w FILE`, `s///w FILE`, `W FILE`. */
function sedWrites(args: Word[]): Word[] {
  const out: Word[] = [];
  for (const a of args)
    for (const m of a.text.matchAll(/(?:^|[;\n}\s\d$/,])[wW]\s*([^;\n}]+)|s(.)(?:(?!\2).)*\2(?:(?!\2).)*\2[gpiIme0-9]*w\s*([^;\n]+)/g)) {
      const file = (m[1] ?? m[3])?.trim();
      if (file) out.push(w(file, a));
    }
  return out;
}

/** The effects on files of one simple command. */
export function fileEffects(name: string, args: Word[], cwd: string | undefined): Effect[] {
  const writes = (targets: Word[], verb = "writes") =>
    targets.map((t) => writeEffect(t, cwd, verb)).filter((e): e is Effect => e !== undefined);
  switch (name) {
    case "cp":
    case "install":
    case "ln":
    case "link": {
      const { targets } = copyTargets(args, []);
      const dirsOnly = name === "install" && args.some((a) => a.text === "-d" || a.text === "--directory");
      return dirsOnly ? [] : writes(targets, name === "ln" ? "replaces" : "writes");
    }
    case "mv": {
      const { sources, targets } = copyTargets(args, []);
      return [...writes(targets, "replaces"), ...sources.map((s) => removeEffect(s, cwd, false))];
    }
    case "rm":
    case "unlink":
    case "rmdir": {
      const recursive = args.some((a) => /^-[a-zA-Z]*[rR]/.test(a.text) || a.text === "--recursive");
      return operands(args).map((t) => removeEffect(t, cwd, recursive));
    }
    case "shred":
      return operands(args, ["-n", "-s", "--iterations", "--size"]).map((t) => ({
        ...(writeEffect(t, cwd, "overwrites") ?? { reason: "" }),
        risk: "destructive" as const,
        reason: `\`shred\` destroys ${t.text}`,
      }));
    case "truncate":
    case "fallocate":
      return writes(operands(args, ["-s", "--size", "-r", "--reference", "-l", "--length", "-o", "--offset"]), "truncates");
    case "tee":
      return writes(operands(args), "writes");
    case "dd":
      return writes(
        args.filter((a) => a.text.startsWith("of=")).map((a) => w(a.text.slice(3), a)),
        "writes",
      );
    case "sort":
      return writes(optionValues(args, ["-o"], ["--output"]));
    case "uniq":
    case "xxd":
      return writes(operands(args, ["-f", "-s", "-w", "-l", "-c", "-g"]).slice(1, 2));
    case "tar":
      return tarEffects(args, cwd);
    case "curl":
      return writes([
        ...optionValues(
          args,
          ["-o", "-D", "-c"],
          [
            "--output",
            "--dump-header",
            "--cookie-jar",
            "--trace",
            "--trace-ascii",
            "--stderr",
            "--libcurl",
            "--etag-save",
            "--hsts",
            "--alt-svc",
          ],
        ),
      ]);
    case "wget":
      return writes(
        optionValues(args, ["-O", "-o", "-a"], ["--output-document", "--output-file", "--append-output"]).filter((t) => t.text !== "-"),
      );
    case "sed":
      return writes(sedWrites(args.filter((a) => !a.text.startsWith("-") && !sedScriptIsReadOnly(a.text))));
    case "git":
      return writes(optionValues(args, [], ["--output"]));
    case "rsync":
    case "scp": {
      const ops = operands(args, [
        "-e",
        "--rsh",
        "-i",
        "-P",
        "-o",
        "-F",
        "-S",
        "-l",
        "-c",
        "--rsync-path",
        "--exclude",
        "--include",
        "--filter",
        "-f",
      ]);
      const dest = ops[ops.length - 1];
      return dest && !/^[^/]*:/.test(dest.text) && ops.length > 1 ? writes([dest]) : [];
    }
    case "openssl":
    case "pg_dump":
    case "mysqldump":
    case "tcpdump":
    case "iptables-save":
    case "ip6tables-save":
    case "ssh-keygen":
      return writes(optionValues(args, ["-out", "-f", "-w", "-r"], ["--file", "--result-file"]).filter((t) => !t.text.startsWith("-")));
    case "chmod":
    case "chown":
    case "chgrp":
    case "chattr":
    case "setfacl": {
      const recursive = args.some((a) => /^-[a-zA-Z]*R/.test(a.text) || a.text === "--recursive");
      const targets = operands(args).slice(name === "chattr" || name === "setfacl" ? 0 : 1);
      return targets.flatMap((t) => {
        const p = resolvePath(t, cwd);
        if (p === undefined && recursive)
          return [{ risk: "destructive" as const, reason: `\`${name} -R\` on \`${t.text}\`, a path only known when it runs` }];
        if (recursive && isSystemTree(p))
          return [{ risk: "destructive" as const, reason: `\`${name} -R\` on ${p} changes every file the host runs on` }];
        if (isBlockDevice(p) || isKernelTrigger(p)) return [{ risk: "destructive" as const, reason: `\`${name}\` on ${p}` }];
        return [];
      });
    }
    default:
      return [];
  }
}

/** Commands whose targets are listed above, or whose rules already say what they do to devices. */
const DEVICE_AWARE = new Set(
  `cp install ln link mv rm unlink rmdir shred truncate fallocate tee dd sort uniq xxd tar curl wget sed git rsync scp openssl pg_dump mysqldump tcpdump
  mount umount swapon swapoff losetup lvs vgs pvs lvdisplay vgdisplay pvdisplay lvcreate lvextend lvresize lvreduce lvremove lvchange lvrename lvconvert
  vgreduce vgremove vgchange pvcreate pvremove pvresize pvmove zpool zfs smartctl hdparm fdisk sfdisk sgdisk gdisk cfdisk cgdisk parted
  partprobe kpartx wipefs blkid lsblk cryptsetup mdadm nvme qm pct pvesm mkfs mke2fs mkswap blkdiscard badblocks e2fsck fsck xfs_repair resize2fs
  tune2fs dumpe2fs iostat fuser findmnt ls stat file du df cat head tail less more grep hexdump od xxd strings chmod chown chgrp chattr setfacl
  lsof udevadm multipath dmsetup growpart xfs_growfs zdb ceph-volume`.split(/\s+/),
);

/** An unknown or target-less command pointed at a device, a kernel trigger or (with no rule at all) a vital file. */
export function namedTargetEffects(name: string, args: Word[], cwd: string | undefined, hasRule: boolean): Effect[] {
  if (DEVICE_AWARE.has(name)) return [];
  const effects: Effect[] = [];
  for (const a of args) {
    const candidates = [a.text, a.text.slice(a.text.indexOf("=") + 1), /^-[a-zA-Z]\//.test(a.text) ? a.text.slice(2) : ""];
    for (const c of candidates) {
      if (!c.startsWith("/")) continue;
      const p = resolvePath(w(c, a), cwd);
      if (isBlockDevice(p) || isKernelTrigger(p))
        effects.push({ risk: "destructive", reason: `\`${name}\` is given ${p}: a write there cannot be ruled out` });
      else if (!hasRule && isVitalFile(p))
        effects.push({ risk: "destructive", reason: `\`${name}\` (unknown) is given ${p}, which the host needs` });
    }
  }
  return effects;
}

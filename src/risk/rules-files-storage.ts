// Rules for files (rm, find -delete, dd, tee, sed -i, curl, git...) and
// storage (zfs, zpool, LVM, partitioning, mkfs, wipefs, mdadm, cryptsetup):
// where data is lost for good.
import { isBlockDevice, isTemporaryPath, writeRisk } from "./paths.js";
import { afterOptions, bySubcommand, type Classification, cm, de, has, merge, positional, type Rule, ro, texts } from "./rule-kit.js";

export function registerFileAndStorageRules(rules: Map<string, Rule>): void {
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
  rules.set("truncate", (args) =>
    afterOptions(args, ["-s", "--size", "-r", "--reference"]).some((t) => isBlockDevice(t))
      ? de("truncates a device")
      : cm("`truncate` changes a file's size"),
  );
  rules.set("find", (args, ctx) => {
    if (args.some((a) => a.text === "-delete")) {
      const roots = args.filter((_a, i) => i < args.findIndex((x) => x.text.startsWith("-")) || !args.some((x) => x.text.startsWith("-")));
      return roots.length > 0 && roots.every((r) => isTemporaryPath(r))
        ? cm("`find -delete` in a temporary path")
        : de("`find -delete` removes files outside a temporary path");
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
  rules.set("sed", (args) =>
    has(args, "-i", "--in-place") || args.some((a) => /^-[a-zA-Z]*i/.test(a.text)) ? cm("`sed -i` edits files in place") : ro(),
  );
  rules.set("awk", (args) =>
    args.some((a) => /system\s*\(|print[^;]*>|\|\s*getline|"\s*\|/.test(a.text))
      ? cm("the `awk` program writes files or runs commands")
      : ro(),
  );
  rules.set("gawk", rules.get("awk") as Rule);
  rules.set("tar", (args) => {
    const first = args[0]?.text ?? "";
    if (has(args, "-t", "--list") || /^[a-zA-Z]*t/.test(first)) return ro();
    return cm("`tar` writes files");
  });
  rules.set("curl", (args) => {
    if (has(args, "-o", "-O", "--output", "--remote-name", "-T", "--upload-file")) return cm("`curl` writes a file or uploads");
    const method = args.findIndex((a) => a.text === "-X" || a.text === "--request");
    if (method >= 0 && !/^(GET|HEAD|OPTIONS)$/i.test(args[method + 1]?.text ?? ""))
      return cm(`\`curl -X ${args[method + 1]?.text}\` changes a remote resource`);
    if (has(args, "-d", "--data", "--data-raw", "--data-binary", "--json", "-F", "--form"))
      return cm("`curl` sends data that may change a remote resource");
    return ro();
  });
  rules.set("wget", (args) =>
    has(args, "--spider") ||
    args.some(
      (a, i) =>
        (a.text === "-O" || a.text === "-qO" || a.text === "-qO-" || a.text === "-O-") &&
        (a.text.endsWith("-") || args[i + 1]?.text === "-"),
    )
      ? ro()
      : cm("`wget` downloads files"),
  );
  rules.set("openssl", (args) =>
    ["x509", "s_client", "version", "verify", "crl", "ciphers", "dgst", "list"].includes(args[0]?.text ?? "") && !has(args, "-out")
      ? ro()
      : cm("`openssl` writes keys or files"),
  );
  rules.set("nc", (args) => (has(args, "-z") ? ro() : cm("`nc` opens a connection that may send data")));
  rules.set("git", (args) => {
    const rest = afterOptions(args, ["-C", "-c"]);
    const sub = rest[0]?.text;
    if (
      sub === undefined ||
      ["status", "log", "diff", "show", "branch", "remote", "rev-parse", "describe", "ls-files", "blame", "tag"].includes(sub)
    ) {
      if (sub === "branch" && has(rest, "-D", "-d", "--delete")) return cm("`git branch -d` deletes a branch");
      return ro();
    }
    if (sub === "clean" && has(rest, "-f", "--force")) return de("`git clean -f` deletes untracked files");
    if (sub === "reset" && has(rest, "--hard")) return de("`git reset --hard` discards uncommitted work");
    return cm(`\`git ${sub}\` changes a repository`);
  });

  // ─── storage ───────────────────────────────────────────────────────────────

  rules.set(
    "zfs",
    bySubcommand("zfs", ["list", "get", "help", "version", "diff", "holds", "userspace", "groupspace", "send"], ["destroy", "rollback"]),
  );
  rules.set(
    "zpool",
    bySubcommand(
      "zpool",
      ["status", "list", "iostat", "get", "history", "events", "help", "version", "wait"],
      ["destroy", "labelclear", "create"],
    ),
  );
  for (const name of ["lvs", "vgs", "pvs", "lvdisplay", "vgdisplay", "pvdisplay", "lvscan", "vgscan", "pvscan", "lsscsi"])
    rules.set(name, () => ro());
  for (const name of ["lvremove", "vgremove", "pvremove", "lvreduce", "pvcreate", "vgreduce"])
    rules.set(name, () => de(`\`${name}\` destroys volume data or metadata`));
  for (const name of ["lvcreate", "lvextend", "vgcreate", "vgextend", "lvrename", "vgchange", "lvchange", "lvconvert"])
    rules.set(name, () => cm(`\`${name}\` changes LVM`));
  rules.set("lvresize", (args) =>
    args.some((a, i) => /^(-[lL]|--size|--extents)$/.test(a.text) && args[i + 1]?.text.startsWith("-")) ||
    args.some((a) => /^(-[lL]-|--size=-)/.test(a.text))
      ? de("`lvresize` shrinks a volume")
      : cm("`lvresize` grows a volume"),
  );
  rules.set("mkfs", () => de("`mkfs` formats a filesystem"));
  rules.set("mke2fs", () => de("`mke2fs` formats a filesystem"));
  rules.set("mkswap", () => de("`mkswap` overwrites a device"));
  rules.set("blkdiscard", () => de("`blkdiscard` discards every block of a device"));
  rules.set("wipefs", (args) =>
    has(args, "-a", "--all", "-o", "--offset") && !has(args, "-n", "--no-act") ? de("`wipefs` erases filesystem signatures") : ro(),
  );
  rules.set("sgdisk", (args) =>
    has(args, "-p", "--print", "-i", "--info", "-v", "--verify") &&
    !has(args, "-Z", "-z", "-o", "-n", "-d", "--zap-all", "--zap", "--clear", "--new", "--delete")
      ? ro()
      : de("`sgdisk` rewrites a partition table"),
  );
  rules.set("fdisk", (args) => (has(args, "-l", "--list") ? ro() : de("`fdisk` rewrites a partition table")));
  rules.set("sfdisk", (args) =>
    has(args, "-l", "--list", "-d", "--dump", "-s", "--show-size") ? ro() : de("`sfdisk` rewrites a partition table"),
  );
  rules.set("parted", (args) =>
    has(args, "-l", "--list") || args.some((a) => a.text === "print") ? ro() : de("`parted` changes partitions"),
  );
  rules.set("smartctl", (args) =>
    has(args, "-t", "--test", "-s", "--smart", "-o") ? cm("`smartctl` changes drive settings or starts a test") : ro(),
  );
  rules.set("nvme", (args) =>
    ["format", "sanitize", "delete-ns"].includes(args[0]?.text ?? "")
      ? de(`\`nvme ${args[0]!.text}\` erases a drive`)
      : ["list", "smart-log", "id-ctrl", "id-ns", "error-log", "list-subsys"].includes(args[0]?.text ?? "")
        ? ro()
        : cm("`nvme` changes a drive"),
  );
  rules.set("hdparm", (args) =>
    args.some((a) => /security-erase|--trim-sector-ranges|--make-bad-sector|--write-sector/.test(a.text))
      ? de("`hdparm` erases or damages sectors")
      : has(args, "-I", "-i", "-t", "-T", "-g", "-C")
        ? ro()
        : cm("`hdparm` changes drive settings"),
  );
  rules.set("mdadm", (args) =>
    has(args, "--detail", "-D", "--examine", "-E", "--query", "-Q")
      ? ro()
      : has(args, "--zero-superblock", "--create", "-C")
        ? de("`mdadm` rewrites RAID metadata")
        : cm("`mdadm` changes an array"),
  );
  rules.set("cryptsetup", (args) => {
    const sub = positional(args)[0]?.text;
    if (["luksDump", "status", "isLuks", "luksUUID"].includes(sub ?? "")) return ro();
    if (["luksFormat", "erase", "luksErase", "luksKillSlot", "reencrypt"].includes(sub ?? ""))
      return de(`\`cryptsetup ${sub}\` destroys access to data`);
    return cm("`cryptsetup` changes an encrypted volume");
  });
}

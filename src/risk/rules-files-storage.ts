// Rules for files (rm, find -delete, dd, tee, sed -i, curl, git...) and
// storage (zfs, zpool, LVM, partitioning, mkfs, wipefs, mdadm, cryptsetup):
// where data is lost for good.
import { isTemporaryPath, resolvePath, writeEffect } from "./paths.js";
import {
  afterOptions,
  atLeast,
  bySubcommand,
  type Classification,
  cm,
  de,
  has,
  merge,
  positional,
  type Rule,
  ro,
  via,
} from "./rule-kit.js";

export function registerFileAndStorageRules(rules: Map<string, Rule>): void {
  // ─── files ─────────────────────────────────────────────────────────────────

  // rm, truncate, tee, dd, cp, mv...: effects.ts judges each path they write or remove.
  rules.set("dd", (args) => (args.some((a) => /^(of|seek|oseek|oflag|conv)=/.test(a.text)) ? cm("`dd` writes") : ro()));
  for (const name of ["rm", "unlink", "truncate", "tee", "fallocate"]) rules.set(name, () => cm(`\`${name}\` writes or removes files`));
  rules.set("find", (args, ctx) => {
    const first = args.findIndex((x) => x.text.startsWith("-") || ["!", "(", ")"].includes(x.text));
    const roots = first < 0 ? args : args.slice(0, first);
    const parts: Classification[] = [];
    for (let i = 0; i < args.length; i++) {
      const t = args[i]!.text;
      if (t === "-delete") {
        const temporary = roots.length > 0 && roots.every((r) => isTemporaryPath(resolvePath(r, ctx.cwd)));
        parts.push(temporary ? cm("`find -delete` in a temporary path") : de("`find -delete` removes files outside a temporary path"));
      }
      if (["-exec", "-execdir", "-ok", "-okdir"].includes(t)) {
        const end = args.findIndex((a, j) => j > i && (a.text === ";" || a.text === "+"));
        const inner = args
          .slice(i + 1, end < 0 ? undefined : end)
          .map((w) => (w.text.includes("{}") ? { text: "<found>", dynamic: true, expanded: true } : w));
        parts.push(inner.length > 0 ? ctx.classifyWords(inner) : cm("`find -exec` without a command"));
      }
      if (["-fprint", "-fprint0", "-fprintf", "-fls"].includes(t) && args[i + 1]) {
        const e = writeEffect(args[i + 1]!, ctx.cwd, `\`find ${t}\` writes`);
        parts.push(e ? { risk: e.risk, reasons: [e.reason] } : cm("`find` writes a file"));
      }
    }
    return merge(ro(), ...parts);
  });
  // `sed '1e reboot'` runs reboot; `s/x/y/e` runs the pattern space.
  rules.set("sed", (args, ctx) => {
    const parts: Classification[] = [ro()];
    if (has(args, "-i", "--in-place") || args.some((a) => /^-[a-zA-Z]*i/.test(a.text) || a.text.startsWith("--in-place")))
      parts.push(cm("`sed -i` edits files in place"));
    for (const a of args) {
      if (a.text.startsWith("-")) continue;
      for (const m of a.text.matchAll(/(?:^|[;\n{}])\s*(?:\d+|\$|\/[^/]*\/)?(?:,(?:\d+|\$|\/[^/]*\/))?\s*!?\s*e(?:\s+([^;\n}]*))?/g))
        parts.push(
          m[1]?.trim()
            ? atLeast(via("the sed script runs a command (e)", ctx.classifyLine(m[1].trim())), cm("`sed e` runs a command"))
            : cm("`sed e` runs the pattern space as a command"),
        );
      if (/s(.)(?:(?!\1).)*\1(?:(?!\1).)*\1[gpiIm0-9w]*e/.test(a.text)) parts.push(cm("`sed s///e` runs the result as a command"));
    }
    return merge(...parts);
  });
  // awk: what `system(...)` or `print | cmd` runs is judged from the program's string literals.
  const awkRule: Rule = (args, ctx) => {
    const program = args.find((a) => !a.text.startsWith("-"))?.text ?? "";
    if (!/system|\||getline|print[^;}]*>|@load/.test(program) && !args.some((a) => a.text === "-f")) return ro();
    const parts: Classification[] = [cm("the awk program runs commands or writes files")];
    for (const m of program.matchAll(/"((?:\\.|[^"\\])*)"/g)) parts.push(via("the awk program may run", ctx.classifyLine(m[1]!)));
    for (const m of program.matchAll(/print[^;}]*?>>?\s*"([^"]+)"/g)) {
      const e = writeEffect({ text: m[1]!, dynamic: false }, ctx.cwd, "awk writes");
      if (e) parts.push({ risk: e.risk, reasons: [e.reason] });
    }
    if (/print[^;}]*?>>?\s*[A-Za-z_$(]/.test(program)) parts.push(de("awk prints into a file named only when it runs"));
    return merge(...parts);
  };
  rules.set("awk", awkRule);
  rules.set("gawk", awkRule);
  rules.set("mawk", awkRule);
  rules.set("nawk", awkRule);
  rules.set("tar", (args) => {
    const first = args[0]?.text ?? "";
    if (has(args, "-t", "--list") || /^[a-zA-Z]*t/.test(first)) return ro();
    return cm("`tar` writes files");
  });
  rules.set("curl", (args) => {
    // Output files (-o, -D, -c...) are judged by effects.ts.
    if (has(args, "-O", "--remote-name", "--remote-name-all", "-T", "--upload-file", "-K", "--config"))
      return cm("`curl` writes a file named by the server, uploads, or reads a config");
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
  rules.set("git", (args, ctx) => {
    // `git -c core.fsmonitor=reboot status` runs reboot; so do pagers, editors, aliases with `!`.
    const run: Classification[] = [];
    for (let i = 0; i < args.length; i++) {
      const t = args[i]!.text;
      const setting =
        t === "-c"
          ? args[i + 1]?.text
          : t.startsWith("-c") && t.length > 2
            ? t.slice(2)
            : t.startsWith("--config-env=")
              ? t.slice(13)
              : undefined;
      if (setting === undefined) continue;
      const [key = "", ...v] = setting.split("=");
      const value = v.join("=");
      if (
        /fsmonitor|pager|editor|sshcommand|askpass|^alias\.|hookspath|\.command$|textconv|external|helper|program|gitproxy|\.(clean|smudge|process)$|sequence\.editor|core\.hooksPath/i.test(
          key,
        )
      )
        run.push(
          cm(`runs a command given in git's ${key}`),
          value ? via(`runs a command given in git's ${key}`, ctx.classifyLine(value.replace(/^!/, ""))) : ro(),
        );
    }
    if (
      args.some(
        (a) =>
          a.text.startsWith("--exec-path") ||
          a.text === "--ext-diff" ||
          a.text.startsWith("--upload-pack") ||
          a.text.startsWith("--receive-pack"),
      )
    )
      run.push(cm("git is told to run another program (--exec-path, --ext-diff, --upload-pack)"));
    if (run.length > 0) return merge(...run);
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

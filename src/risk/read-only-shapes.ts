// The inventory of read-only shapes: the only way a simple command is
// classified read_only. One line per shape, with why it cannot write or
// execute; review a new line as you would a new sudoers rule.
//
// Invariant: a command, subcommand or option not written here is at least
// config_mutation (shape-match.ts refuses what it does not recognise). Do not
// add an option that names an output file, a program to run, a script file or
// a configuration file that could name either. Wrappers (sudo, env, timeout,
// xargs, ssh, pct exec...) are not here: wrappers.ts looks through them and
// the command they run must match a shape of its own.
import { SYSTEMCTL_READ_VERBS } from "./rules-system.js";
import type { Shape } from "./shape-match.js";
import type { Word } from "./shell-words.js";

const LS_LETTERS = "a A l h t r R S d i 1 F G g n o p s u U v x X C c L k Q B N m Z";
const opts = (letters: string, more = "") =>
  `${letters
    .split(" ")
    .map((l) => `-${l}`)
    .join(" ")} ${more}`;

/** sed scripts that only print: `Np`, `M,Np`, `/re/p`, `s/a/b/g` without the w/e flags, `q`, `=`, `d`. */
export function sedScriptIsReadOnly(script: string): boolean {
  const addr = String.raw`(\d+|\$|/[^/\n]*/)`;
  const cmd = String.raw`(${addr}(,${addr})?\s*!?\s*[pdq=l]|(${addr}(,${addr})?\s*)?s/[^/\n]*/[^/\n]*/[gpiI0-9]*|\d*q)`;
  return new RegExp(String.raw`^\s*${cmd}(\s*[;\n]\s*${cmd})*\s*;?\s*$`).test(script);
}

function sedCheck(args: Word[]): string | undefined {
  const scripts: string[] = [];
  const operands: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (t === "-e" || t === "--expression") scripts.push(args[++i]?.text ?? "");
    else if (t.startsWith("--expression=")) scripts.push(t.slice(13));
    else if (/^-[nErsuz]*e$/.test(t)) scripts.push(args[++i]?.text ?? "");
    else if (!t.startsWith("-")) operands.push(t);
  }
  if (scripts.length === 0 && operands.length > 0) scripts.push(operands[0]!);
  const bad = scripts.find((s) => !sedScriptIsReadOnly(s));
  return bad === undefined ? undefined : `the sed script \`${bad}\` is not one that only prints (w, e, r and friends write or run)`;
}

/** awk programs that neither run commands, read from them, nor print into files. */
function awkCheck(args: Word[]): string | undefined {
  const program = args.find((a) => !a.text.startsWith("-") && !/^[A-Za-z_]\w*=/.test(a.text));
  if (!program) return "`awk` without a program on its command line";
  if (/system|\||getline|@load|ENVIRON\s*\[/.test(program.text) || /print[^;}]*>/.test(program.text))
    return "the awk program runs commands or writes files (system, |, getline, print >)";
  return undefined;
}

function curlCheck(args: Word[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    const value = (long: string, short?: string) =>
      t === long || t === short ? args[i + 1]?.text : t.startsWith(`${long}=`) ? t.slice(long.length + 1) : undefined;
    const out = value("--output", "-o") ?? value("--dump-header", "-D");
    if (out !== undefined && !["/dev/null", "-"].includes(out)) return `curl writes ${out} (-o/-D)`;
    const method = value("--request", "-X");
    if (method !== undefined && !/^(GET|HEAD|OPTIONS)$/i.test(method)) return `\`curl -X ${method}\` may change a remote resource`;
    const fmt = value("--write-out", "-w");
    if (fmt?.includes("%output{")) return "curl's --write-out writes a file (%output{})";
  }
  return undefined;
}

const FIND_SAFE = new Set(
  `-name -iname -path -ipath -wholename -iwholename -lname -ilname -regex -iregex -type -xtype -mtime -mmin -atime -amin -ctime -cmin
  -newer -size -perm -user -group -uid -gid -nouser -nogroup -maxdepth -mindepth -xdev -mount -print -print0 -printf -ls -prune -o -or
  -a -and -not ! ( ) , -empty -samefile -inum -links -follow -depth -daystart -readable -writable -executable -quit -true -false
  -regextype -L -H -P -fstype -used -newermt -newerct -newerat`.split(/\s+/),
);
const FIND_VALUED = new Set(
  "-name -iname -path -ipath -wholename -iwholename -lname -ilname -regex -iregex -type -xtype -mtime -mmin -atime -amin -ctime -cmin -newer -size -perm -user -group -uid -gid -maxdepth -mindepth -samefile -inum -links -printf -regextype -fstype -used -newermt -newerct -newerat".split(
    " ",
  ),
);
function findCheck(args: Word[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    if (w.expanded && !FIND_VALUED.has(args[i - 1]?.text ?? "")) return `\`find\` is given \`${w.text}\`, only known when it runs`;
    if (w.text.startsWith("-") || ["!", "(", ")", ","].includes(w.text)) {
      if (!FIND_SAFE.has(w.text)) return `\`find ${w.text}\` runs, deletes or writes (only tests and printing to the output are read-only)`;
      if (FIND_VALUED.has(w.text)) i++;
    }
  }
  return undefined;
}

function tarCheck(args: Word[]): string | undefined {
  const first = args[0]?.text ?? "";
  const letters = (first.startsWith("-") ? "" : first) + args.map((a) => /^-([a-zA-Z]+)/.exec(a.text)?.[1] ?? "").join("");
  if (!letters.includes("t") && !args.some((a) => a.text === "--list")) return "`tar` other than -t (listing) writes or extracts";
  if (
    /[cxruAI]/.test(letters) ||
    args.some((a) =>
      /^--(create|extract|get|append|update|to-command|use-compress-program|checkpoint-action|info-script|new-volume-script|rsh-command|delete|remove-files)/.test(
        a.text,
      ),
    )
  )
    return "`tar` with an option that writes, extracts or runs a program";
  if (args.some((a) => a.expanded)) return "`tar` is given words only known when they run";
  const unknown = args.find(
    (a, i) =>
      (a.text.startsWith("--") &&
        !/^--(list|verbose|gzip|bzip2|xz|zstd|auto-compress|wildcards|exclude=.*|file=.*|numeric-owner|full-time)$/.test(a.text)) ||
      (i > 0 && /^-[a-zA-Z]/.test(a.text) && !/^-[tvzjJfa]+$/.test(a.text)) ||
      (i === 0 && /^-?[a-zA-Z]+$/.test(a.text) && !/^-?[tvzjJfa]+$/.test(a.text)),
  );
  return unknown ? `\`tar ${unknown.text}\` is not on the read-only list` : undefined;
}

function dateCheck(_args: Word[], p: { operands: Word[] }): string | undefined {
  const set = p.operands.find((o) => !o.text.startsWith("+"));
  return set ? `\`date ${set.text}\` sets the clock` : undefined;
}

function jqCheck(args: Word[]): string | undefined {
  return args.some((a) => /^--(rawfile|slurpfile|from-file)$/.test(a.text) || a.text === "-f")
    ? "`jq` reads a program or data from a file named in an option"
    : undefined;
}

/** `ip OBJECT [show|list|get ...]`: any other verb changes networking. */
const IP_OPTIONS = /^-(br|brief|4|6|s|stats|statistics|d|details|j|json|p|pretty|c|color|color=\w+|o|oneline|h|human|r|resolve|N|numeric)$/;
function ipCheck(args: Word[]): string | undefined {
  let i = 0;
  for (; i < args.length && args[i]!.text.startsWith("-"); i++)
    if (!IP_OPTIONS.test(args[i]!.text)) return `\`ip ${args[i]!.text}\` is not on the read-only list`;
  if (args.some((a) => a.expanded)) return "`ip` is given words only known when they run";
  const [object, verb] = args.slice(i).map((o) => o.text);
  if (object === undefined || object === "monitor") return undefined;
  if (verb === undefined || /^(show|list|ls|lst|get|dev)$/.test(verb)) return undefined;
  return `\`ip ${object} ${verb}\` changes networking`;
}

const SECRET_KINDS = /secret/i;
const kubectlCheck = (args: Word[]) =>
  args.some((a) => SECRET_KINDS.test(a.text)) ? "`kubectl` would print Secrets (a secret store)" : undefined;

const GIT_LOG_OPTS =
  "-n: -p -u -s --oneline --stat --shortstat --numstat --name-only --name-status --patch --graph --decorate? --all --since: --until: --after: --before: --author: --grep: --format: --pretty? --abbrev-commit --no-merges --merges --reverse --follow --cached --staged --no-color --color? --no-pager -w --ignore-all-space --word-diff? --first-parent --date: --max-count: -S: -G: --diff-filter: --stat? --summary --check --relative? --no-patch --show-signature --source --full-history --left-right --cherry-pick --boundary --exit-code --quiet --minimal --unified: -U: --no-ext-diff --no-textconv --submodule? --dirstat?";
const git: Shape = {
  why: "git's inspection subcommands; global -c, --exec-path and config are refused, --output and --ext-diff are not listed",
  opts: "-C: --no-pager -P --no-optional-locks --literal-pathspecs",
  sub: {
    status: {
      why: "shows the working tree state",
      opts: "-s --short -b --branch --porcelain? --long -u? --untracked-files? --ignored? -v --no-renames --ahead-behind --show-stash -z",
    },
    log: { why: "shows history", numeric: true, opts: GIT_LOG_OPTS },
    diff: { why: "shows changes on the output", opts: GIT_LOG_OPTS },
    show: { why: "shows objects", opts: GIT_LOG_OPTS },
    branch: {
      why: "lists branches (no operand: an operand creates one)",
      operands: "none",
      opts: "-a -r -v -vv --list --show-current --contains: --merged? --no-merged? --color? --no-color --sort: --format: --all --remotes",
    },
    tag: {
      why: "lists tags (no operand: an operand creates one)",
      operands: "none",
      opts: "-l --list -n --sort: --contains: --points-at: --format:",
    },
    remote: { why: "lists remotes", operands: "none", opts: "-v --verbose" },
    "rev-parse": {
      why: "prints object names",
      opts: "--short? --abbrev-ref? --show-toplevel --git-dir --is-inside-work-tree --verify -q --quiet --symbolic-full-name",
    },
    describe: { why: "names a commit", opts: "--tags --always --long --abbrev: --dirty? --exact-match --all" },
    "ls-files": {
      why: "lists tracked files",
      opts: "-m -o -d -c -s -u -z --others --modified --deleted --cached --stage --exclude-standard -i --ignored --full-name",
    },
    blame: { why: "annotates lines", opts: "-L: -w -e -s -l --show-email --date:" },
    shortlog: { why: "summarises history", opts: "-s -n -e --summary --numbered --email --all --since: --until:" },
  },
};

const docker: Shape = {
  why: "docker's inspection subcommands; -H/--context (another host) and -c/--config are not listed",
  opts: "-D --debug",
  sub: {
    ps: { why: "lists containers", opts: "-a --all -q --quiet --no-trunc -s --size --format: -f: --filter: -n: --last: -l --latest" },
    images: { why: "lists images", opts: "-a --all -q --quiet --no-trunc --digests --format: -f: --filter:" },
    logs: { why: "prints a container's logs", opts: "-n: --tail: -f --follow --since: --until: -t --timestamps --details" },
    inspect: { why: "prints object metadata", opts: "-f: --format: --type: -s --size" },
    stats: { why: "prints resource use", opts: "--no-stream -a --all --no-trunc --format:" },
    top: { why: "lists a container's processes", opts: "" },
    port: { why: "lists port mappings", opts: "" },
    version: { why: "prints versions", opts: "-f: --format:" },
    info: { why: "prints engine information", opts: "-f: --format:" },
    history: { why: "prints image layers", opts: "-H --human? --no-trunc -q --quiet --format:" },
    diff: { why: "lists a container's changed files", opts: "" },
    events: { why: "prints engine events", opts: "--since: --until: -f: --filter: --format:" },
    container: {
      why: "container inspection",
      sub: {
        ls: { why: "lists containers", opts: "-a --all -q --quiet --no-trunc -s --size --format: -f: --filter:" },
        list: { why: "lists containers", opts: "-a --all -q --format: -f: --filter:" },
        inspect: { why: "prints metadata", opts: "-f: --format: -s --size" },
        logs: { why: "prints logs", opts: "-n: --tail: -f --follow --since: --until: -t --timestamps" },
        top: { why: "lists processes" },
        port: { why: "lists ports" },
        stats: { why: "prints resource use", opts: "--no-stream -a --all" },
      },
    },
    image: {
      why: "image inspection",
      sub: {
        ls: { why: "lists images", opts: "-a --all -q --quiet --no-trunc --digests --format: -f: --filter:" },
        list: { why: "lists images", opts: "-a -q --format:" },
        inspect: { why: "prints metadata", opts: "-f: --format:" },
        history: { why: "prints layers", opts: "-H --no-trunc -q --format:" },
      },
    },
    volume: {
      why: "volume inspection",
      sub: {
        ls: { why: "lists volumes", opts: "-q --quiet -f: --filter: --format:" },
        list: { why: "lists volumes", opts: "-q --format:" },
        inspect: { why: "prints metadata", opts: "-f: --format:" },
      },
    },
    network: {
      why: "network inspection",
      sub: {
        ls: { why: "lists networks", opts: "-q --quiet --no-trunc -f: --filter: --format:" },
        list: { why: "lists networks", opts: "-q --format:" },
        inspect: { why: "prints metadata", opts: "-f: --format: -v --verbose" },
      },
    },
    system: {
      why: "engine inspection",
      sub: {
        df: { why: "prints disk use", opts: "-v --verbose --format:" },
        info: { why: "prints engine information", opts: "-f: --format:" },
      },
    },
    compose: {
      why: "compose inspection; -f and --project-directory only choose which project to read",
      opts: "-f: --file: -p: --project-name: --project-directory: --profile: --ansi: --env-file:",
      sub: {
        ps: { why: "lists services", opts: "-a --all -q --quiet --services --format: --status: --filter:" },
        logs: { why: "prints service logs", opts: "-f --follow -n: --tail: -t --timestamps --since: --until: --no-color --no-log-prefix" },
        config: {
          why: "prints the resolved configuration",
          opts: "-q --quiet --services --volumes --images --format: --no-interpolate --resolve-image-digests",
        },
        ls: { why: "lists projects", opts: "-a --all -q --quiet --format: --filter:" },
        images: { why: "lists images", opts: "-q --quiet --format:" },
        top: { why: "lists processes" },
        version: { why: "prints the version", opts: "--short -f: --format:" },
        port: { why: "prints a port mapping", opts: "--protocol: --index:" },
        events: { why: "prints events", opts: "--json" },
      },
    },
  },
};

const systemctlOpts =
  "--no-pager -l --full -a --all -t: --type: --state: -p: --property: --failed -q --quiet -n: --lines: -o: --output: --plain --no-legend --value -r --recursive --user --system --reverse --before --after --with-dependencies --legend? --show-types --lines";
const systemctlRead: Shape = { why: "prints unit state", opts: systemctlOpts };
const systemctl: Shape = {
  why: "systemctl's inspection verbs; -H/--host and -M are not listed",
  opts: systemctlOpts,
  sub: Object.fromEntries(["", ...SYSTEMCTL_READ_VERBS].map((v) => [v, systemctlRead])),
};

const pct: Shape = {
  why: "pct's inspection subcommands",
  sub: {
    list: { why: "lists containers", operands: "none" },
    status: { why: "prints a container's state", opts: "--verbose?" },
    config: { why: "prints a container's configuration", opts: "--current? --snapshot:" },
    pending: { why: "prints pending changes" },
    listsnapshot: { why: "lists snapshots" },
    df: { why: "prints a container's disk use" },
    cpusets: { why: "lists CPU sets", operands: "none" },
    help: { why: "prints help", opts: "--verbose?" },
  },
};
const qm: Shape = {
  why: "qm's inspection subcommands",
  sub: {
    list: { why: "lists VMs", opts: "--full?" },
    status: { why: "prints a VM's state", opts: "--verbose?" },
    config: { why: "prints a VM's configuration", opts: "--current? --snapshot:" },
    pending: { why: "prints pending changes" },
    showcmd: { why: "prints the kvm command line", opts: "--pretty?" },
    listsnapshot: { why: "lists snapshots" },
    help: { why: "prints help" },
  },
};
const pveshRead: Shape = { why: "GETs an API path", opts: "--output-format: --noborder? --noheader? --human-readable? --quiet?" };
const zfs: Shape = {
  why: "zfs's inspection subcommands",
  sub: {
    list: { why: "lists datasets", opts: "-r -H -p -o: -t: -s: -S: -d:" },
    get: { why: "prints properties", opts: "-r -H -p -o: -t: -s: -d:" },
    holds: { why: "lists holds", opts: "-r -H" },
    userspace: { why: "prints space use per user", opts: "-H -p -n -o: -s: -S: -t:" },
    groupspace: { why: "prints space use per group", opts: "-H -p -n -o: -s: -S: -t:" },
    version: { why: "prints versions" },
  },
};
const zpool: Shape = {
  why: "zpool's inspection subcommands (`zpool events -c` clears: not listed)",
  sub: {
    status: { why: "prints pool health", opts: "-x -v -P -L -D -t -g -i -p -s -T:" },
    list: { why: "lists pools", opts: "-H -p -v -P -L -g -o: -T:" },
    iostat: { why: "prints I/O statistics", opts: "-v -y -H -p -P -L -g -l -q -r -w -T:", numeric: true },
    get: { why: "prints properties", opts: "-H -p -o:" },
    history: { why: "prints the pool's command history", opts: "-i -l" },
    events: { why: "prints events", opts: "-v -H -f" },
    version: { why: "prints versions" },
  },
};

const aptRead: Shape = {
  why: "queries the package database",
  opts: "--installed --upgradable --all-versions -a --manual-installed -q -qq --names-only --full",
};
const apt: Shape = {
  why: "apt queries; -o/-c (configuration, including hooks that run programs) are not listed",
  opts: "-q -qq",
  sub: {
    list: aptRead,
    show: aptRead,
    search: aptRead,
    policy: aptRead,
    depends: aptRead,
    rdepends: aptRead,
    madison: aptRead,
    showsrc: aptRead,
    changelog: aptRead,
  },
};

export const READ_ONLY_SHAPES: Record<string, Shape> = {
  // ─── files and text: operands are read and printed ───────────────────────────
  cat: {
    why: "prints files",
    anyWord: true,
    operands: "read",
    opts: "-n -b -s -A -E -T -v -e -t -u --number --show-all --squeeze-blank --number-nonblank",
  },
  head: {
    why: "prints the start of files",
    anyWord: true,
    numeric: true,
    operands: "read",
    opts: "-n: -c: -q -v -z --lines: --bytes: --quiet --silent --verbose",
  },
  tail: {
    why: "prints the end of files",
    anyWord: true,
    numeric: true,
    operands: "read",
    opts: "-n: -c: -q -v -f -F -s: -z --lines: --bytes: --follow? --retry --pid: --sleep-interval: --quiet --verbose",
  },
  less: {
    why: "pages files (no terminal over SSH: prints them); LESSOPEN and friends are refused as assignments",
    operands: "read",
    opts: "-R -N -S -X -F -r -i",
  },
  more: { why: "pages files", operands: "read", opts: "" },
  grep: {
    why: "prints matching lines; -f reads patterns only",
    anyWord: true,
    operands: "read",
    opts: opts("r R i n v c l L E F P w x o h H s q a I z Z b U y T"),
  },
  egrep: { why: "prints matching lines", anyWord: true, operands: "read", opts: opts("r R i n v c l L h H s q o w x") },
  fgrep: { why: "prints matching lines", anyWord: true, operands: "read", opts: opts("r R i n v c l L h H s q o w x") },
  zgrep: { why: "prints matching lines of compressed files", anyWord: true, operands: "read", opts: opts("i n v c l L E F w x h H s") },
  zcat: { why: "prints decompressed files", anyWord: true, operands: "read", opts: "-f" },
  bzcat: { why: "prints decompressed files", anyWord: true, operands: "read", opts: "" },
  xzcat: { why: "prints decompressed files", anyWord: true, operands: "read", opts: "" },
  zless: { why: "pages compressed files", operands: "read", opts: "" },
  nl: { why: "numbers lines", anyWord: true, operands: "read", opts: "-b: -n: -w: -s: -v: -i:" },
  tac: { why: "prints lines reversed", anyWord: true, operands: "read", opts: "-s: -b -r" },
  rev: { why: "prints lines reversed", anyWord: true, operands: "read", opts: "" },
  strings: { why: "prints printable strings", anyWord: true, operands: "read", opts: "-a -n: -t: -e: -w -f" },
  od: { why: "dumps bytes", anyWord: true, operands: "read", opts: "-A: -t: -N: -j: -w? -v -x -c -b -d -o -a" },
  hexdump: { why: "dumps bytes", anyWord: true, operands: "read", opts: "-C -n: -s: -v -x -c -b -d -o -e:" },
  xxd: {
    why: "dumps bytes (one operand: a second is written; -r is not listed)",
    operands: "read",
    maxOperands: 1,
    opts: "-l: -s: -c: -g: -p -u -i -b -a",
  },
  base64: {
    why: "encodes to the output",
    anyWord: true,
    operands: "read",
    maxOperands: 1,
    opts: "-d -w: -i --decode --wrap: --ignore-garbage",
  },
  cut: {
    why: "prints fields",
    anyWord: true,
    operands: "read",
    opts: "-d: -f: -c: -b: -s -z --complement --delimiter: --fields: --output-delimiter:",
  },
  sort: {
    why: "prints sorted lines (-o, -T, --compress-program are not listed)",
    operands: "read",
    opts: "-n -r -u -k: -t: -h -V -f -b -s -M -g -R -z -c -C --numeric-sort --reverse --unique --key: --field-separator: --human-numeric-sort --version-sort --ignore-case",
  },
  uniq: {
    why: "prints unique lines (one operand: a second is written)",
    operands: "read",
    maxOperands: 1,
    opts: "-c -d -u -i -f: -s: -w: -z --count --repeated --unique --ignore-case",
  },
  column: { why: "formats columns", anyWord: true, operands: "read", opts: "-t -s: -n -x -c: -o: -N: -J -R:" },
  comm: { why: "compares sorted files", anyWord: true, operands: "read", opts: "-1 -2 -3 -i --nocheck-order" },
  join: { why: "joins files", anyWord: true, operands: "read", opts: "-t: -1: -2: -a: -v: -i -o:" },
  paste: { why: "merges lines", anyWord: true, operands: "read", opts: "-d: -s" },
  fold: { why: "wraps lines", anyWord: true, operands: "read", opts: "-w: -s -b" },
  fmt: { why: "formats text", anyWord: true, operands: "read", opts: "-w: -s -u" },
  tr: { why: "translates characters of its input", anyWord: true, operands: "words", opts: "-d -s -c -C" },
  wc: { why: "counts lines, words, bytes", anyWord: true, operands: "stat", opts: "-l -w -c -m -L --lines --words --bytes --chars" },
  diff: { why: "compares files", anyWord: true, operands: "read", opts: opts("u r q N w b B i y a s") },
  cmp: { why: "compares files", anyWord: true, operands: "stat", opts: "-s -l -b -n: -i:" },
  jq: {
    why: "filters JSON to the output (no file options)",
    operands: "read",
    opts: "-r -c -e -S -j -n -s -M -C -a --raw-output --compact-output --tab --indent: --arg: --argjson: --sort-keys --slurp --null-input --exit-status",
    check: jqCheck,
  },
  sed: {
    why: "prints with a script that only prints or substitutes (no -i, -f, w, e, r)",
    operands: "read",
    opts: "-n -E -r -s -u -z -e: --quiet --silent --regexp-extended --expression: --posix --debug",
    check: sedCheck,
  },
  awk: {
    why: "runs a program with no system(), pipes, getline or print > file",
    operands: "read",
    opts: "-F: -v: --field-separator:",
    check: awkCheck,
  },
  gawk: { why: "as awk", operands: "read", opts: "-F: -v:", check: awkCheck },
  mawk: { why: "as awk", operands: "read", opts: "-F: -v:", check: awkCheck },
  // ─── files: only listed or measured ─────────────────────────────────────────
  ls: {
    why: "lists names and metadata",
    anyWord: true,
    operands: "stat",
    opts: opts(
      LS_LETTERS,
      "-I: -w: -T: --color? --time-style: --sort: --full-time --group-directories-first --human-readable --all --almost-all --si --block-size: --time: --hide: --ignore:",
    ),
  },
  ll: { why: "lists names and metadata (an alias of ls -l)", anyWord: true, operands: "stat", opts: opts(LS_LETTERS) },
  du: {
    why: "measures disk use",
    anyWord: true,
    operands: "stat",
    opts: "-s -h -a -c -x -k -m -b -L -P -l --max-depth: -d: --apparent-size --exclude: --time? --si --summarize --human-readable --total --one-file-system --threshold: -t:",
  },
  df: {
    why: "prints filesystem use (--output names columns)",
    anyWord: true,
    operands: "stat",
    opts: "-h -H -T -i -a -l -k -m -P -x: -t: --output? --total --human-readable --si --local --type: --exclude-type: --print-type --inodes",
    check: (_a, p) =>
      p.options.some((o) => o.name === "--output" && o.value && !/^[a-z,]*$/.test(o.value.text))
        ? "`df --output` names columns only"
        : undefined,
  },
  stat: {
    why: "prints file metadata",
    anyWord: true,
    operands: "stat",
    opts: "-c: -f -L -t --format: --printf: --dereference --file-system --terse",
  },
  file: { why: "guesses file types", anyWord: true, operands: "stat", opts: "-b -i -L -s --mime --mime-type --brief --dereference" },
  find: { why: "walks directories with tests and prints (no -exec, -ok, -delete, -fprint, -fls)", custom: true, check: findCheck },
  tar: { why: "lists an archive (t only; no c, x, r, u, A, --to-command, -I)", custom: true, check: tarCheck },
  tree: {
    why: "prints a directory tree (-o is not listed)",
    anyWord: true,
    operands: "stat",
    opts: opts("a d f i l p s u g h D F C n L: P: I:", "--du --noreport --dirsfirst"),
  },
  realpath: { why: "prints resolved paths", anyWord: true, operands: "stat", opts: "-e -m -s -q -z --relative-to: --relative-base:" },
  readlink: { why: "prints link targets", anyWord: true, operands: "stat", opts: "-f -e -m -n -q -s -v -z" },
  basename: { why: "prints a name part", anyWord: true, operands: "words", opts: "-a -s: -z" },
  dirname: { why: "prints a name part", anyWord: true, operands: "words", opts: "-z" },
  namei: { why: "prints path components", anyWord: true, operands: "stat", opts: "-l -m -o -n -v -x" },
  lsattr: { why: "prints file attributes", anyWord: true, operands: "stat", opts: "-d -R -a -v -p" },
  getfacl: { why: "prints ACLs", anyWord: true, operands: "stat", opts: "-R -p -n -a -d -c -e -s --absolute-names --omit-header" },
  md5sum: { why: "prints checksums", anyWord: true, operands: "stat", opts: "-c --check -b -t --quiet --status --strict" },
  sha1sum: { why: "prints checksums", anyWord: true, operands: "stat", opts: "-c --check -b -t --quiet --status" },
  sha256sum: { why: "prints checksums", anyWord: true, operands: "stat", opts: "-c --check -b -t --quiet --status" },
  sha512sum: { why: "prints checksums", anyWord: true, operands: "stat", opts: "-c --check -b -t --quiet --status" },
  b2sum: { why: "prints checksums", anyWord: true, operands: "stat", opts: "-c --check -b -t --quiet --status" },
  readelf: { why: "prints ELF headers", anyWord: true, operands: "stat", opts: opts("a h l S s d r n V A I W") },
  pwd: { why: "prints the directory", operands: "none", opts: "-L -P" },
  cd: { why: "changes the shell's directory (the classifier follows it)", anyWord: true, operands: "stat", maxOperands: 1, opts: "-L -P" },
  // ─── shell builtins and plain output ───────────────────────────────────────
  echo: { why: "prints its words", anyWord: true, operands: "words", opts: "-n -e -E" },
  printf: { why: "prints its words (-v assigns a variable: not listed)", anyWord: true, operands: "words", opts: "" },
  true: { why: "does nothing", anyWord: true, operands: "words" },
  false: { why: "does nothing", anyWord: true, operands: "words" },
  ":": { why: "does nothing", anyWord: true, operands: "words" },
  test: {
    why: "evaluates an expression",
    anyWord: true,
    operands: "words",
    opts: opts("a b c d e f g h k L p r s S t u w x z n o v O G N", "-eq -ne -lt -le -gt -ge -nt -ot -ef"),
  },
  "[": {
    why: "evaluates an expression",
    anyWord: true,
    operands: "words",
    opts: opts("a b c d e f g h k L p r s S t u w x z n o v O G N", "-eq -ne -lt -le -gt -ge -nt -ot -ef"),
  },
  "[[": {
    why: "evaluates an expression",
    anyWord: true,
    operands: "words",
    opts: opts("a b c d e f g h k L p r s S t u w x z n o v O G N", "-eq -ne -lt -le -gt -ge -nt -ot -ef"),
  },
  sleep: { why: "waits", anyWord: true, operands: "words" },
  seq: { why: "prints numbers", anyWord: true, operands: "words", opts: "-s: -w -f:" },
  expr: { why: "evaluates arithmetic", anyWord: true, operands: "words" },
  numfmt: { why: "formats numbers", anyWord: true, operands: "words", opts: "--to: --from: --suffix: --format: --padding:" },
  exit: { why: "ends the shell", anyWord: true, operands: "words" },
  wait: { why: "waits for children", anyWord: true, operands: "words" },
  read: { why: "reads its input into a variable", opts: "-r -p: -t: -n: -d: -a: -s", operands: "words" },
  shift: { why: "shifts positional parameters", operands: "words" },
  set: { why: "sets shell options (-e, -u, -x, -o pipefail) or positional parameters", opts: "-e -u -x -o: -v -f -C", operands: "words" },
  type: { why: "says what a name is", anyWord: true, operands: "words", opts: "-a -t -p -P -f" },
  which: { why: "finds programs on PATH", anyWord: true, operands: "words", opts: "-a" },
  whereis: { why: "finds programs and pages", anyWord: true, operands: "words", opts: "-b -m -s" },
  hash: { why: "lists remembered paths (no operand, no -p)", operands: "none", opts: "-l" },
  alias: { why: "lists aliases (a definition is not listed)", operands: "none", opts: "-p" },
  history: {
    why: "lists history (no -c, -w, -d)",
    operands: "words",
    check: (_a, p) => (p.operands.some((o) => !/^\d+$/.test(o.text)) ? "`history` with an argument" : undefined),
  },
  printenv: {
    why: "prints the environment (values are redacted before the model sees them)",
    anyWord: true,
    operands: "words",
    opts: "-0",
  },
  cal: { why: "prints a calendar", anyWord: true, operands: "words", opts: "-3 -y -m" },
  // ─── system state ──────────────────────────────────────────────────────────
  date: {
    why: "prints the date (an operand not starting with + sets it; -s is not listed)",
    operands: "words",
    opts: "-u -R -I? -d: --date: -r: --utc --rfc-3339: --iso-8601?",
    check: dateCheck,
  },
  uptime: { why: "prints load", operands: "none", opts: "-p -s" },
  uname: { why: "prints system names", operands: "none", opts: opts("a r n m s v o p i") },
  whoami: { why: "prints the user", operands: "none" },
  id: { why: "prints identities", anyWord: true, operands: "words", opts: "-u -g -G -n -r -a -z" },
  groups: { why: "prints groups", anyWord: true, operands: "words" },
  hostname: {
    why: "prints names (an operand sets the name)",
    operands: "none",
    opts: "-I -i -f -s -d -A --fqdn --short --all-ip-addresses",
  },
  nproc: { why: "prints CPU count", operands: "none", opts: "--all" },
  arch: { why: "prints the architecture", operands: "none" },
  free: { why: "prints memory use", operands: "none", opts: "-m -h -g -k -b -t -w -l --mega --giga --human --total --wide -s: -c: --si" },
  vmstat: { why: "prints VM statistics", anyWord: true, operands: "words", opts: "-a -d -s -S: -t -w -D" },
  iostat: { why: "prints I/O statistics", anyWord: true, operands: "words", opts: "-x -d -c -h -k -m -t -y -z -p? -N" },
  mpstat: { why: "prints CPU statistics", anyWord: true, operands: "words", opts: "-P: -u -A" },
  ps: {
    why: "lists processes (no option of ps writes or signals)",
    anyWord: true,
    operands: "words",
    opts: opts(
      "e f A a u x l j o: p: C: U: u: g: G: t: T H L m w y Z M N q: s: F c",
      "--sort: --forest --no-headers --ppid: --pid: --format: -eo: --cols: --width: --headers -ww",
    ),
  },
  pgrep: {
    why: "lists matching processes (pkill is another command)",
    anyWord: true,
    operands: "words",
    opts: "-f -a -l -u: -U: -x -n -o -c -P: -g: -s: -t: -i -w --full --list-name --list-full --count --exact -d:",
  },
  pidof: { why: "prints process ids", anyWord: true, operands: "words", opts: "-s -x -o: -c -q" },
  pwdx: { why: "prints process directories", anyWord: true, operands: "words" },
  pstree: { why: "prints the process tree", anyWord: true, operands: "words", opts: opts("a c h l n p s u A G U T g") },
  top: {
    why: "prints processes in batch mode",
    operands: "none",
    opts: "-b -n: -d: -o: -c -H -p: -u: -w? -i -E: -e: -1",
    check: (a) => (a.some((x) => /^-[a-zA-Z]*b/.test(x.text)) ? undefined : "`top` without -b is interactive (and can kill)"),
  },
  lscpu: { why: "prints CPU information", operands: "none", opts: "-e? -p? -J -a -b -c -x -y" },
  lsblk: {
    why: "lists block devices",
    anyWord: true,
    operands: "stat",
    opts: opts(
      "f a p d n b J l m S T D z t e: I: o: O x: M",
      "--output: --json --list --fs --all --paths --nodeps --noheadings --bytes --tree --exclude: --include:",
    ),
  },
  blkid: { why: "prints block device attributes", anyWord: true, operands: "stat", opts: "-o: -s: -t: -l -p -i -U: -L: -k" },
  findmnt: {
    why: "lists mounts",
    anyWord: true,
    operands: "words",
    opts: opts(
      "l n r J a D u A b f k m s o: t: O: S: T: M: v x",
      "--output: --json --list --raw --real --types: --source: --target: --mountpoint: --df --notruncate",
    ),
  },
  lsusb: { why: "lists USB devices", operands: "none", opts: "-v -t -s: -d:" },
  lspci: { why: "lists PCI devices", operands: "none", opts: "-v -vv -vvv -k -nn -n -t -s: -d: -D -mm -m" },
  lsmod: { why: "lists modules", operands: "none" },
  modinfo: { why: "prints module information", anyWord: true, operands: "words", opts: "-F: -a -d -l -n -p -0 -k:" },
  lsscsi: { why: "lists SCSI devices", operands: "none", opts: "-s -g -d -t -l -c -H -v" },
  dmesg: {
    why: "prints the kernel ring buffer (-c, -C, -n, -D, -E are not listed)",
    operands: "none",
    opts: "-T -H -l: -f: -k -u -x -w -W -L? -e -r -t -P --ctime --human --level: --facility: --follow --color? --time-format: --since: --until: --nopager --kernel --userspace --decode --reltime --notime",
  },
  lsof: {
    why: "lists open files (no option of lsof writes or signals)",
    anyWord: true,
    operands: "stat",
    opts: opts("n P i: p: u: c: t a l b w V R", "+D: +d: -iTCP -iUDP -sTCP:LISTEN"),
  },
  ss: {
    why: "lists sockets (-K/--kill is not listed)",
    operands: "words",
    opts: opts(
      "t u l n p a x w s e m o i 4 6 H r Z z 0 O b E N: f: A: F:",
      "--tcp --udp --listening --numeric --processes --all --summary --extended --info --no-header --unix",
    ),
  },
  netstat: { why: "lists sockets and routes", operands: "none", opts: opts("t u l n p a r i s e c W x g o 4 6") },
  arp: { why: "prints the neighbour table (-d, -s, -f are not listed)", operands: "words", opts: "-a -n -e -v -i:" },
  route: { why: "prints routes (an operand changes them)", operands: "none", opts: "-n -e -v -A: -ee -C -F" },
  ping: {
    why: "sends echo requests and prints replies (no option writes or runs anything)",
    anyWord: true,
    operands: "words",
    opts: "-c: -i: -W: -w: -q -n -s: -t: -4 -6 -I: -D -O -v -a",
  },
  ping6: { why: "sends echo requests and prints replies", operands: "words", opts: "-c: -i: -W: -w: -q -n -s: -I:" },
  traceroute: { why: "prints the route to a host", operands: "words", opts: "-n -I -T -U -4 -6 -m: -q: -w: -p: -i: -s:" },
  tracepath: { why: "prints the route to a host", operands: "words", opts: "-n -b -4 -6 -m: -l: -p:" },
  mtr: {
    why: "prints the route to a host in report mode",
    operands: "words",
    opts: "-r -c: -w -n -b -z -4 -6 -T -u -i: --report --report-wide --report-cycles: --no-dns",
  },
  dig: { why: "queries DNS", anyWord: true, operands: "words", opts: "-x: -t: -p: -4 -6 -c: -q:" },
  host: { why: "queries DNS", anyWord: true, operands: "words", opts: "-t: -a -v -4 -6 -W: -c: -R:" },
  nslookup: { why: "queries DNS", anyWord: true, operands: "words" },
  getent: {
    why: "looks up name-service databases (shadow and gshadow are refused as secret stores)",
    anyWord: true,
    operands: "words",
    opts: "-s: -i",
    check: (_a, p) =>
      /^g?shadow$/.test(p.operands[0]?.text ?? "") ? "`getent shadow` prints password hashes (a secret store)" : undefined,
  },
  w: { why: "lists logged-in users", operands: "words", opts: "-h -s -f -i -o -u" },
  who: { why: "lists logged-in users", operands: "none", opts: "-a -b -q -r -H -u -m" },
  last: { why: "lists logins", anyWord: true, operands: "words", opts: "-n: -a -d -F -i -w -x -R" },
  lastlog: { why: "prints last logins (-C and -S are not listed)", operands: "none", opts: "-u: -b: -t:" },
  tty: { why: "prints the terminal", operands: "none", opts: "-s" },
  locale: { why: "prints locale settings", operands: "words", opts: "-a -m -k" },
  sensors: { why: "prints sensor readings", operands: "none", opts: "-A -u -f -j" },
  pveversion: { why: "prints Proxmox versions", operands: "none", opts: "-v --verbose" },
  "iptables-save": { why: "prints rules (-f is not listed)", operands: "none", opts: "-t: -c --counters" },
  "ip6tables-save": { why: "prints rules (-f is not listed)", operands: "none", opts: "-t: -c --counters" },
  // ─── services and logs ─────────────────────────────────────────────────────
  systemctl,
  journalctl: {
    why: "prints the journal (vacuum, rotate, flush, setup-keys are not listed)",
    operands: "words",
    numeric: true,
    opts: opts(
      "u: n: f b? p: e x k r a q o: t: g: S: U: D: m",
      "--unit: --lines? --follow --boot? --priority: --no-pager --since: --until: --output: --reverse --grep: --identifier: --list-boots --disk-usage --all --quiet --utc --dmesg --system --user --no-hostname --case-sensitive? --catalog --output-fields: --user-unit: --merge --pager-end --directory:",
    ),
  },
  service: {
    why: "prints a service's state",
    operands: "words",
    opts: "--status-all",
    check: (_a, p) => (p.operands.length === 0 || p.operands[1]?.text === "status" ? undefined : "`service` with a verb other than status"),
  },
  "systemd-analyze": {
    why: "prints boot timing",
    sub: {
      "": { why: "prints boot time" },
      time: { why: "prints boot time" },
      blame: { why: "prints unit times", opts: "--no-pager" },
      "critical-chain": { why: "prints the boot chain", opts: "--no-pager" },
    },
  },
  timedatectl: {
    why: "prints time settings",
    sub: {
      "": { why: "prints status" },
      status: { why: "prints status" },
      show: { why: "prints properties", opts: "-p: -a --value" },
      "list-timezones": { why: "lists zones" },
      "timesync-status": { why: "prints sync state" },
      "show-timesync": { why: "prints sync properties" },
    },
  },
  hostnamectl: { why: "prints host names", sub: { "": { why: "prints status" }, status: { why: "prints status" } } },
  localectl: { why: "prints locale settings", sub: { "": { why: "prints status" }, status: { why: "prints status" } } },
  loginctl: {
    why: "prints sessions",
    sub: {
      "": { why: "lists sessions" },
      "list-sessions": { why: "lists sessions" },
      "list-users": { why: "lists users" },
      "show-session": { why: "prints a session" },
      "show-user": { why: "prints a user" },
      "session-status": { why: "prints a session" },
      "user-status": { why: "prints a user" },
    },
  },
  resolvectl: {
    why: "prints resolver state",
    sub: {
      "": { why: "prints status" },
      status: { why: "prints status" },
      query: { why: "resolves a name" },
      statistics: { why: "prints statistics" },
    },
  },
  networkctl: {
    why: "prints link state",
    sub: {
      "": { why: "lists links" },
      status: { why: "prints status", opts: "-a" },
      list: { why: "lists links" },
      lldp: { why: "prints neighbours" },
    },
  },
  chronyc: {
    why: "prints time sync state",
    sub: {
      tracking: { why: "prints tracking" },
      sources: { why: "lists sources", opts: "-v" },
      sourcestats: { why: "prints statistics", opts: "-v" },
      activity: { why: "prints activity" },
    },
  },
  crontab: {
    why: "lists cron jobs",
    operands: "none",
    opts: "-l -u:",
    check: (a) => (a.some((x) => x.text === "-l") ? undefined : "`crontab` without -l installs or edits"),
  },
  // ─── Proxmox ───────────────────────────────────────────────────────────────
  pct,
  qm,
  pvesh: {
    why: "reads the Proxmox API",
    sub: { get: pveshRead, ls: pveshRead, usage: { why: "prints API usage", opts: "--verbose? --returns?" }, help: { why: "prints help" } },
  },
  pvecm: {
    why: "prints cluster state",
    sub: { status: { why: "prints status" }, nodes: { why: "lists nodes" }, "qdevice-status": { why: "prints qdevice state" } },
  },
  pvesm: {
    why: "prints storage state",
    sub: {
      status: { why: "prints status", opts: "--storage: --content: --enabled? --target:" },
      list: { why: "lists volumes", opts: "--content: --vmid:" },
      path: { why: "prints a volume path" },
    },
  },
  pveam: {
    why: "lists templates",
    sub: { list: { why: "lists templates" }, available: { why: "lists available templates", opts: "--section:" } },
  },
  "ha-manager": {
    why: "prints HA state",
    sub: { status: { why: "prints status", opts: "--verbose?" }, config: { why: "prints configuration" } },
  },
  // ─── storage ───────────────────────────────────────────────────────────────
  zfs,
  zpool,
  lvs: {
    why: "lists logical volumes",
    anyWord: true,
    operands: "words",
    opts: "-o: -O: -a --all --units: --noheadings --nosuffix -S: --select: --separator: --segments -v --reportformat: --binary",
  },
  vgs: {
    why: "lists volume groups",
    anyWord: true,
    operands: "words",
    opts: "-o: -O: -a --all --units: --noheadings --nosuffix -S: --select: --separator: -v --reportformat:",
  },
  pvs: {
    why: "lists physical volumes",
    anyWord: true,
    operands: "words",
    opts: "-o: -O: -a --all --units: --noheadings --nosuffix -S: --select: --separator: -v --reportformat:",
  },
  lvdisplay: { why: "prints logical volumes", anyWord: true, operands: "words", opts: "-m -C -c -v -a" },
  vgdisplay: { why: "prints volume groups", anyWord: true, operands: "words", opts: "-C -c -v -s -A" },
  pvdisplay: { why: "prints physical volumes", anyWord: true, operands: "words", opts: "-m -C -c -v -s" },
  lvscan: { why: "lists logical volumes", operands: "none", opts: "-a" },
  vgscan: { why: "lists volume groups (--mknodes is not listed)", operands: "none" },
  pvscan: { why: "lists physical volumes (--cache is not listed)", operands: "none", opts: "-s -n -e" },
  smartctl: {
    why: "prints drive health (-t, -s, -o are not listed)",
    operands: "stat",
    opts: "-a -i -H -A -x -c -j -l: -d: -T: --all --info --health --attributes --xall --capabilities --scan --scan-open --json?",
  },
  nvme: {
    why: "prints drive information",
    sub: {
      list: { why: "lists drives", opts: "-o:" },
      "smart-log": { why: "prints health", opts: "-o:" },
      "id-ctrl": { why: "prints the controller", opts: "-o:" },
      "id-ns": { why: "prints a namespace", opts: "-o: -n:" },
      "error-log": { why: "prints errors", opts: "-o:" },
      "list-subsys": { why: "lists subsystems" },
    },
  },
  hdparm: { why: "prints drive identity (-I, -i, -g, -C only)", operands: "stat", opts: "-I -i -g -C" },
  fdisk: {
    why: "lists partition tables (-l only)",
    operands: "stat",
    opts: "-l -x --list --list-details -o:",
    check: (a) =>
      a.some((x) => /^(-l|-x|--list|--list-details)$/.test(x.text)) ? undefined : "`fdisk` without -l opens a device to rewrite",
  },
  sfdisk: {
    why: "prints partition tables",
    operands: "stat",
    opts: "-l -d -s -J --list --dump --show-size --json",
    check: (a) =>
      a.some((x) => /^(-[ldsJ]|--list|--dump|--show-size|--json)$/.test(x.text))
        ? undefined
        : "`sfdisk` without a listing option rewrites a table",
  },
  parted: {
    why: "prints partition tables (print only)",
    operands: "words",
    opts: "-l -s -m --list --script --machine",
    check: (a, p) =>
      a.some((x) => /^(-l|--list)$/.test(x.text)) || (p.operands.length === 2 && p.operands[1]!.text === "print")
        ? undefined
        : "`parted` with a command other than print",
  },
  wipefs: {
    why: "lists signatures (no -a, -o, -f)",
    operands: "stat",
    opts: "-n --no-act -J --json -O: --output: -i --noheadings -p --parsable",
  },
  mdadm: {
    why: "prints RAID state",
    operands: "stat",
    opts: "--detail -D --examine -E --query -Q --scan -s -b --brief -v --verbose",
    check: (a) =>
      a.some((x) => /^(--detail|-D|--examine|-E|--query|-Q)$/.test(x.text)) ? undefined : "`mdadm` without --detail/--examine/--query",
  },
  cryptsetup: {
    why: "prints LUKS state",
    sub: {
      luksDump: { why: "prints LUKS headers (no --dump-master-key)" },
      status: { why: "prints a mapping" },
      isLuks: { why: "tests a device", opts: "-v" },
    },
  },
  mount: { why: "lists mounts (no operand, no -a)", operands: "none", opts: "-l -t:" },
  swapon: {
    why: "lists swap (--show only)",
    operands: "none",
    opts: "--show? -s --summary --noheadings --bytes",
    check: (a) => (a.length > 0 ? undefined : "`swapon` without --show"),
  },
  losetup: { why: "lists loop devices", operands: "none", opts: "-l -a --list --all -J --json -O: --output: -n --noheadings" },
  // ─── packages ──────────────────────────────────────────────────────────────
  apt,
  "apt-get": {
    why: "simulated runs only: -s prints what would happen",
    opts: "-s --simulate --dry-run --just-print --no-act -y -q -qq --no-install-recommends",
    sub: Object.fromEntries(
      ["install", "upgrade", "dist-upgrade", "full-upgrade", "remove", "purge", "autoremove"].map((v) => [
        v,
        { why: "simulated", opts: "-s --simulate --dry-run --just-print --no-act -y -q -qq --no-install-recommends" },
      ]),
    ),
    check: (a) =>
      a.some((x) => /^(-s|--simulate|--dry-run|--just-print|--no-act)$/.test(x.text)) ? undefined : "`apt-get` without -s changes packages",
  },
  "apt-cache": {
    why: "queries the package cache (gencaches is not listed)",
    sub: Object.fromEntries(
      ["policy", "show", "search", "depends", "rdepends", "madison", "showpkg", "stats", "pkgnames", "showsrc"].map((v) => [
        v,
        { why: "queries the cache", opts: "--names-only --full -q --installed --recurse" },
      ]),
    ),
  },
  dpkg: {
    why: "queries the package database",
    operands: "words",
    opts: "-l -L -s -S -p --list --listfiles --status --search --print-avail --get-selections --print-architecture --audit -C --version --verify -V",
    check: (a) => (a.some((x) => x.text.startsWith("-")) ? undefined : "`dpkg` without a query option"),
  },
  "dpkg-query": {
    why: "queries the package database",
    anyWord: true,
    operands: "words",
    opts: "-W -f: -l -s -L -S -p --show --showformat: --list --status --listfiles --search",
  },
  // ─── containers, clusters, network clients ─────────────────────────────────
  docker,
  podman: docker,
  "docker-compose": docker.sub!.compose!,
  kubectl: {
    why: "reads cluster objects (Secrets refused)",
    opts: "-n: --namespace: --context: -A --all-namespaces",
    check: kubectlCheck,
    sub: Object.fromEntries(
      ["get", "describe", "logs", "top", "version", "cluster-info", "explain", "api-resources"].map((v) => [
        v,
        {
          why: "reads",
          anyWord: false,
          opts: "-n: --namespace: -A --all-namespaces -o: --output: -l: --selector: -w --watch --tail: -f --follow -c: --container: --previous -p --since: --show-labels --no-headers --client --sort-by: --field-selector: --all-containers -L:",
          check: kubectlCheck,
        },
      ]),
    ),
  },
  virsh: {
    why: "reads libvirt state",
    sub: Object.fromEntries(
      ["list", "dominfo", "dumpxml", "domstate", "version", "nodeinfo"].map((v) => [
        v,
        { why: "reads", opts: "--all --inactive --name --uuid" },
      ]),
    ),
  },
  curl: {
    why: "fetches to the output (-o/-D only to /dev/null; no upload, data, config, cookie jar or trace files)",
    operands: "words",
    opts: "-f -s -S -L -I -i -v -k -4 -6 -m: -H: -A: -e: -u: -X: -o: -D: -w: --fail --silent --show-error --location --head --include --verbose --insecure --max-time: --connect-timeout: --header: --user-agent: --compressed --http1.1 --http2 --retry: --retry-delay: --request: --output: --dump-header: --write-out: --resolve: --noproxy: --no-progress-meter --fail-with-body --ipv4 --ipv6 --cacert: --unix-socket: -sS -fsS -fsSL",
    check: curlCheck,
  },
  wget: {
    why: "fetches to the output only (-O - or --spider)",
    operands: "words",
    opts: "-q -S -O: -T: -t: --spider --server-response --timeout: --tries: --no-check-certificate -qO: --quiet",
    check: (a) =>
      a.some((x) => x.text === "--spider") || a.some((x, i) => /^-q?O-?$/.test(x.text) && (x.text.endsWith("-") || a[i + 1]?.text === "-"))
        ? undefined
        : "`wget` without -O - writes a file",
  },
  nc: {
    why: "checks a port (-z)",
    operands: "words",
    opts: "-z -v -w: -n -u -4 -6",
    check: (a) => (a.some((x) => /^-[a-z]*z/.test(x.text)) ? undefined : "`nc` without -z sends data"),
  },
  ip: {
    why: "prints addresses, links, routes (every object's show/list/get verb; options are ip's single-dash words)",
    custom: true,
    check: ipCheck,
  },
  iptables: {
    why: "lists rules (-L, -S only)",
    operands: "words",
    opts: "-L? -S? -n -v -x -t: -w? --line-numbers --list? --list-rules? -C",
    check: (a) =>
      a.some((x) => /^(-L|-S|--list|--list-rules|-[nvx]*[LS][nvx]*)$/.test(x.text)) ? undefined : "`iptables` without -L/-S changes rules",
  },
  ip6tables: {
    why: "lists rules (-L, -S only)",
    operands: "words",
    opts: "-L? -S? -n -v -x -t: -w? --line-numbers --list? --list-rules?",
    check: (a) =>
      a.some((x) => /^(-L|-S|--list|--list-rules|-[nvx]*[LS][nvx]*)$/.test(x.text)) ? undefined : "`ip6tables` without -L/-S changes rules",
  },
  nft: { why: "lists rules", opts: "-a -n -j -s -c -t", sub: { list: { why: "lists rules", anyWord: true, operands: "words" } } },
  ufw: {
    why: "prints firewall state",
    sub: {
      status: { why: "prints status", operands: "words" },
      show: { why: "prints reports", operands: "words" },
      version: { why: "prints the version" },
    },
  },
  "pve-firewall": {
    why: "prints firewall state",
    sub: { status: { why: "prints status" }, compile: { why: "prints the compiled rules" }, localnet: { why: "prints the local network" } },
  },
  "fail2ban-client": {
    why: "prints jail state",
    sub: { status: { why: "prints status" }, ping: { why: "checks the server" }, version: { why: "prints the version" } },
  },
  tailscale: {
    why: "prints tailnet state",
    sub: {
      status: { why: "prints status", opts: "--json? --peers?" },
      ip: { why: "prints addresses", opts: "-4 -6" },
      version: { why: "prints the version" },
      netcheck: { why: "checks connectivity" },
    },
  },
  wg: {
    why: "prints tunnels (showconf prints the private key: not listed)",
    sub: { "": { why: "prints tunnels" }, show: { why: "prints tunnels", anyWord: true } },
  },
  openssl: {
    why: "prints certificates (no -out, -engine, key files are checked as secret stores)",
    sub: {
      version: { why: "prints the version", opts: "-a" },
      x509: {
        why: "prints a certificate",
        operands: "none",
        opts: "-in: -noout -text -subject -issuer -dates -enddate -startdate -fingerprint -serial -hash -ext: -nameopt: -inform: -sha256 -sha1 -checkend: -purpose",
      },
      s_client: {
        why: "prints a server's certificate",
        operands: "none",
        opts: "-connect: -servername: -showcerts -brief -verify_return_error -CAfile: -starttls:",
      },
    },
  },
  git,
  psql: {
    why: "runs SQL judged read-only by sql.ts (-c only; no -f, -o, -P pager)",
    operands: "words",
    opts: "-c: --command: -U: --username: -d: --dbname: -h: --host: -p: --port: -A --no-align -t --tuples-only -X --no-psqlrc -q --quiet -x --expanded -w --no-password -l --list --csv -F: --field-separator: -R: -v: --set:",
    check: (a) =>
      a.some((x) => /^(-c|--command|-l|--list)/.test(x.text)) ? undefined : "`psql` without -c reads SQL this check cannot see",
  },
  mysql: {
    why: "runs SQL judged read-only by sql.ts (-e only)",
    operands: "words",
    opts: "-e: --execute: -u: --user: -h: --host: -P: --port: -D: --database: -N -B -s -t -E --batch --silent --skip-column-names --table --vertical -p? --password? --protocol:",
    check: (a) => (a.some((x) => /^(-e|--execute)/.test(x.text)) ? undefined : "`mysql` without -e reads SQL this check cannot see"),
  },
  "redis-cli": {
    why: "reads keys and server information (CONFIG, SAVE, --rdb and writes are not listed)",
    operands: "words",
    opts: "-h: -p: -a: -n: --user: --pass: --raw --no-auth-warning --tls -c --scan --pattern: --bigkeys --memkeys --latency --stat",
    check: (_a, p) =>
      p.operands.length === 0 ||
      /^(get|info|keys|scan|ping|ttl|pttl|type|exists|mget|hget|hgetall|hkeys|hlen|lrange|llen|scard|smembers|zrange|zcard|dbsize|strlen|memory|slowlog|client)$/i.test(
        p.operands[0]!.text,
      )
        ? /^(memory|slowlog|client)$/i.test(p.operands[0]?.text ?? "") && !/^(usage|stats|get|list|info)$/i.test(p.operands[1]?.text ?? "")
          ? "that redis-cli subcommand changes state"
          : undefined
        : `\`redis-cli ${p.operands[0]!.text}\` is not on the read-only list`,
  },
  dd: {
    why: "copies to the output (if=, bs=, count=, skip= and status= only; of=, seek=, conv= are not listed)",
    operands: "words",
    check: (_a, p) =>
      p.operands.find((o) => !/^(if|bs|ibs|count|skip|iseek|status|iflag)=/.test(o.text))?.text.replace(/^(.*)$/, "`dd $1` writes"),
  },
};

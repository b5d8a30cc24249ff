// The classifier against real bash (issue 12): every command it calls
// read_only — the table's, and a generated set built from the allowlist's
// shapes with random paths and options — runs inside a private mount
// namespace whose every mount is remounted read-only, with no network (a new
// network namespace: not even loopback is up), under strace. None may fail
// with "Read-only file system", and none may start a program that is not its
// own. /tmp is a fresh private tmpfs inside the namespace (apt writes a
// temporary file there to check signatures), so nothing written there
// survives. Skipped, with the reason printed, where namespaces or strace are
// not available; each command is killed after 3 s.
import { spawnSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { classifyCommand } from "../src/risk/classify.js";
import { READ_ONLY_SHAPES } from "../src/risk/read-only-shapes.js";
import { diagnostics } from "./fixtures/risk-rows.js";

const SANDBOX = `
mount -o remount,bind,ro / || exit 97
findmnt -rn -o TARGET | while read -r m; do [ "$m" = / ] || mount -o remount,bind,ro "$m" 2>/dev/null; done
mount -t tmpfs -o size=16m scratch /tmp || exit 97
cd /tmp
exec timeout -s KILL 3 strace -f -qq -e trace=execve -e signal=none bash -c "exec 2>&1; $1"
`;

function sandboxed(command: string): { output: string; execs: string[]; status: number | null } {
  const r = spawnSync("unshare", ["-m", "-n", "--propagation", "private", "sh", "-c", SANDBOX, "sh", command], {
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 10_000,
    encoding: "utf8",
  });
  // strace writes the trace on its stderr; the command's own stderr is joined to its stdout.
  const trace = String(r.stderr ?? "");
  // A successful execve, also one strace split across lines (`<unfinished ...>`): any that did not fail.
  const execs = trace
    .split("\n")
    .filter((l) => l.includes('execve("') && !/= -1 /.test(l))
    .map((l) => /execve\("([^"]+)"/.exec(l)![1]!)
    .map((p) => p.slice(p.lastIndexOf("/") + 1));
  return { output: `${r.stdout ?? ""}`, execs, status: r.status };
}

function unavailable(): string | undefined {
  if (process.getuid?.() !== 0) return "not root: cannot make a mount namespace";
  if (spawnSync("strace", ["-V"]).status !== 0) return "strace is not installed (apt-get install strace)";
  const probe = sandboxed("true");
  if (probe.status !== 0) return `namespaces are not allowed here (exit ${probe.status}): ${probe.output.trim()}`;
  return undefined;
}

/** Programs a command may start besides those its words name (scripts that call their helpers). */
const HELPERS: Record<string, string[]> = {
  zcat: ["gzip"],
  zgrep: ["grep", "gzip", "sed", "zcat"],
  zless: ["less", "gzip", "zcat"],
  egrep: ["grep"],
  fgrep: ["grep"],
  which: ["sh", "dash"],
  service: ["systemctl", "basename", "sed", "env", "ls", "run-parts", "sh", "readlink", "id", "dirname", "cat"],
  ll: ["ls"],
  dpkg: ["dpkg-query"],
  apt: ["dpkg", "apt-config"],
  ldd: [],
};

function allowedPrograms(command: string): Set<string> {
  const words = command.split(/[^A-Za-z0-9_.+-]+/).filter(Boolean);
  const allowed = new Set(["bash", "timeout", "strace", ...words]);
  for (const w of words) for (const h of HELPERS[w] ?? []) allowed.add(h);
  return allowed;
}

const PATHS = ["/etc/hostname", "/etc/os-release", "/var/log", "/tmp", "/proc/cpuinfo", "/usr/bin", "/nonexistent", "/etc/fstab", "."];

/** Read-only commands built from the shapes: a name, some of its flags, a path. */
function generated(n: number): string[] {
  const simple = Object.entries(READ_ONLY_SHAPES).filter(([, s]) => !s.sub && !s.custom && s.opts);
  const arb = fc
    .tuple(fc.constantFrom(...simple), fc.array(fc.nat(), { minLength: 0, maxLength: 2 }), fc.constantFrom(...PATHS))
    .map(([[name, shape], picks, path]) => {
      const flags = (shape.opts ?? "").split(/\s+/).filter((o) => o && !o.endsWith(":") && !o.endsWith("?"));
      const chosen = flags.length ? picks.map((p) => flags[p % flags.length]!) : [];
      return [name, ...chosen, path].join(" ");
    });
  return fc
    .sample(arb, { numRuns: n * 4, seed: 12 })
    .filter((c) => classifyCommand(c).risk === "read_only")
    .slice(0, n);
}

const skip = unavailable();
if (skip) console.log(`risk-differential skipped: ${skip}`);

// The suite's name says why it was skipped, so the run's closing "skipped suites" line does too.
const suiteName = `read_only against real bash in a read-only namespace${skip ? `: skipped because ${skip}` : ""}`;
describe.skipIf(skip !== undefined)(suiteName, () => {
  it("catches a write and a foreign program (the check itself works)", () => {
    expect(sandboxed("touch /var/tmp/nomos-differential-probe").output).toMatch(/Read-only file system/);
    expect(sandboxed("ls /tmp | sh -c true").execs).toContain("sh");
  });

  it("no read_only command writes or starts another program", { timeout: 600_000 }, () => {
    const table = diagnostics
      .map(([c]) => c)
      .filter((c) => classifyCommand(c).risk === "read_only" && !/\b(ssh|ping|dig|host|nslookup|curl|getent ahosts)\b/.test(c));
    const commands = [...new Set([...table, ...generated(80)])];
    const failures: string[] = [];
    const started = Date.now();
    for (const command of commands) {
      const r = sandboxed(command);
      if (/Read-only file system/i.test(r.output)) failures.push(`${command}: wrote (${r.output.trim().slice(0, 160)})`);
      const allowed = allowedPrograms(command);
      const foreign = r.execs.filter((p) => !allowed.has(p));
      if (foreign.length > 0) failures.push(`${command}: started ${foreign.join(", ")}`);
    }
    console.log(
      `risk-differential: ${commands.length} read_only commands (${table.length} from the table) run in ${Math.round((Date.now() - started) / 1000)} s; ${failures.length} failures`,
    );
    expect(failures).toEqual([]);
  });
});

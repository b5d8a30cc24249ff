// The risk of a command line: read_only < config_mutation < destructive.
// Invariants: every simple command the line would run is classified (the
// parser looks through pipelines, lists, subshells and substitutions; the
// rules look through sudo, env, bash -c, pct exec, ssh and friends) and the
// highest wins; read_only comes only from the allowlist of read-only shapes
// (read-only-shapes.ts); an expansion that runs code (`$(...)`, backticks,
// `<(...)`) makes the line at least config_mutation; a line the parser
// cannot understand is never read_only. Every verdict carries the rule that
// decided it (`reasons[0]`), which is stored with the execution and shown to
// the operator.
import type { Risk } from "../db/schema.js";
import { commandRule } from "./command-rules.js";
import { fileEffects, namedTargetEffects } from "./effects.js";
import { couldBeSecret, HOME, redirectEffect, resolvePath } from "./paths.js";
import type { Classification, RuleContext, Stdin } from "./rule-kit.js";
import { innerSubstitutions, parseShell, ShellParseError, type SimpleCommand, type Word } from "./shell-words.js";
import { SAFE_ENV } from "./wrappers.js";

export type { Classification, Risk };

const ORDER: Record<Risk, number> = { read_only: 0, config_mutation: 1, destructive: 2 };

export function maxRisk(a: Risk, b: Risk): Risk {
  return ORDER[a] >= ORDER[b] ? a : b;
}

/** Accumulates the highest risk and the reasons for it; the first reason at the highest risk is the one that decided. */
export class Verdict {
  risk: Risk = "read_only";
  reasons: string[] = [];

  add(risk: Risk, reason: string): void {
    if (ORDER[risk] > ORDER[this.risk]) {
      this.risk = risk;
      this.reasons = reason ? [reason] : [];
    } else if (risk === this.risk && reason && !this.reasons.includes(reason)) {
      this.reasons.push(reason);
    }
  }

  merge(other: Classification): void {
    for (const reason of other.reasons) this.add(other.risk, reason);
    if (other.reasons.length === 0) this.add(other.risk, "");
  }
}

const MAX_DEPTH = 8;

/** Looks for destructive words in a line the parser could not read. */
const UNPARSED_DESTRUCTIVE =
  /\b(mkfs(\.\w+)?|wipefs|dd\s+[^|;&]*of=\/dev\/|rm\s+-\w*[rR]\w*|reboot|shutdown|poweroff|halt|destroy|lvremove|vgremove|blkdiscard|shred|drop\s+database|sysrq-trigger|luksFormat|sgdisk|fdisk|parted|init\s+[06])\b/i;

/** The state a line carries from one command to the next: the directory and the values `for` gives a variable. */
interface LineState {
  cwd: string | undefined;
  vars: Map<string, Word[]>;
}

export function classifyCommand(command: string): Classification {
  const verdict = classifyLine(command, 0, { cwd: HOME, vars: new Map() }, { kind: "none" });
  const reasons = verdict.reasons.filter((r) => r !== "");
  if (reasons.length === 0) reasons.push(verdict.risk === "read_only" ? "runs nothing" : "not understood");
  return { risk: verdict.risk, reasons };
}

/** The one-line reason stored with an execution and shown on its card. */
export function riskReasonOf(c: Classification): string {
  return c.reasons.join("; ").slice(0, 500);
}

function classifyLine(line: string, depth: number, state: LineState, stdin: Stdin): Verdict {
  const verdict = new Verdict();
  if (depth > MAX_DEPTH) {
    if (UNPARSED_DESTRUCTIVE.test(line)) verdict.add("destructive", "nested too deeply to read, and it names a destructive command");
    else verdict.add("config_mutation", "nested too deeply to read");
    return verdict;
  }
  let parsed: ReturnType<typeof parseShell>;
  try {
    parsed = parseShell(line);
  } catch (err) {
    if (!(err instanceof ShellParseError)) throw err;
    if (UNPARSED_DESTRUCTIVE.test(line)) verdict.add("destructive", `could not parse (${err.message}) and it names a destructive command`);
    else verdict.add("config_mutation", `could not parse: ${err.message}`);
    return verdict;
  }
  for (const cmd of parsed.commands) classifySimple(cmd, verdict, depth, state, stdinOf(cmd, stdin, verdict, depth, state));
  for (const sub of parsed.substitutions) {
    verdict.add("config_mutation", `runs \`${sub.trim().slice(0, 80)}\` to build its words (a command substitution)`);
    verdict.merge(toClassification(classifyLine(sub, depth + 1, { cwd: state.cwd, vars: new Map(state.vars) }, { kind: "none" })));
  }
  return verdict;
}

function toClassification(v: Verdict): Classification {
  return { risk: v.risk, reasons: v.reasons };
}

/** What a command reads on stdin: a here-string, a here-document, the words `echo`/`printf` pipe into it, a file. */
function stdinOf(cmd: SimpleCommand, lineStdin: Stdin, verdict: Verdict, depth: number, state: LineState): Stdin {
  let result: Stdin = cmd.pipedFrom ? pipedText(cmd.pipedFrom) : lineStdin;
  for (const r of cmd.redirects) {
    if (r.op === "<<<")
      result = r.target.expanded
        ? { kind: "unknown", from: "a here-string only known when it runs" }
        : { kind: "text", text: r.target.text };
    else if (r.op === "<<" || r.op === "<<-") {
      const body = r.body ?? "";
      // An unquoted here-document's body is expanded: its substitutions run.
      for (const sub of innerSubstitutions(body)) {
        verdict.add("config_mutation", `runs \`${sub.trim().slice(0, 80)}\` inside a here-document`);
        verdict.merge(toClassification(classifyLine(sub, depth + 1, { cwd: state.cwd, vars: new Map(state.vars) }, { kind: "none" })));
      }
      result = { kind: "text", text: body };
    } else if (r.op === "<" || r.op === "<>") result = { kind: "unknown", from: `the file ${r.target.text}` };
  }
  return result;
}

function pipedText(from: SimpleCommand): Stdin {
  const [name, ...args] = from.words;
  const quoted = args.every((a) => !a.expanded);
  if (name && !name.expanded && quoted && from.redirects.length === 0) {
    if (name.text === "echo")
      return {
        kind: "text",
        text: args
          .filter((a) => !/^-[neE]+$/.test(a.text))
          .map((a) => a.text)
          .join(" "),
      };
    if (name.text === "printf" && args[0])
      return { kind: "text", text: [args[0].text.replace(/\\n/g, "\n").replace(/%s/g, ""), ...args.slice(1).map((a) => a.text)].join(" ") };
  }
  return {
    kind: "unknown",
    from: `the output of \`${from.words
      .map((w) => w.text)
      .join(" ")
      .slice(0, 60)}\``,
  };
}

/** Control words that precede a command without being one. */
const PREFIX_WORDS = new Set(["if", "then", "else", "elif", "do", "while", "until", "!", "{", "function"]);
const ALONE_WORDS = new Set(["fi", "done", "}", "esac"]);
/** Shell variables whose value changes what later commands run, load or read. */
const RISKY_SHELL_VARS =
  /^(PATH|IFS|ENV|BASH_ENV|CDPATH|LD_[A-Z_]+|PS4|PROMPT_COMMAND|HOME|SHELLOPTS|BASHOPTS|GLOBIGNORE|BASH_[A-Z_]+|[A-Z_]*PAGER|EDITOR|VISUAL|LESS[A-Z]*|GIT_[A-Z_]+|PYTHON[A-Z_]*|PERL[A-Z0-9_]*|RUBY[A-Z_]*|NODE_[A-Z_]+|SSH_[A-Z_]+|KUBECONFIG|DOCKER_[A-Z_]+|SYSTEMD_[A-Z_]+|TMPDIR|OPENSSL_[A-Z_]+|MANPAGER|BROWSER|TERMINAL)$/;
const DECLARE_WORDS = new Set(["export", "declare", "typeset", "local", "readonly"]);

function classifySimple(cmd: SimpleCommand, verdict: Verdict, depth: number, state: LineState, stdin: Stdin): void {
  for (const r of cmd.redirects) {
    const effect = redirectEffect(r, state.cwd);
    if (effect) verdict.add(effect.risk, effect.reason);
  }
  let words: Word[] = cmd.words;
  const first = () => words[0]?.text;
  while (words.length > 0 && PREFIX_WORDS.has(first()!) && !words[0]!.expanded) words = words.slice(1);
  if (ALONE_WORDS.has(first() ?? "")) words = words.slice(1);
  // `for x in a b c` names no command; remember the values for `$x`.
  if (first() === "for" || first() === "select") {
    const name = words[1]?.text ?? "";
    const inAt = words.findIndex((w) => w.text === "in");
    if (inAt >= 0) state.vars.set(name, words.slice(inAt + 1));
    else state.vars.delete(name);
    return;
  }
  if (first() === "case") {
    verdict.add("config_mutation", "`case` statements are not understood");
    return;
  }
  // Assignments: `FOO=bar cmd` puts FOO in cmd's environment; `FOO=bar` alone sets it for the shell.
  const assigned: string[] = [];
  while (/^[A-Za-z_][A-Za-z0-9_]*=/.test(first() ?? "")) {
    assigned.push(first()!.split("=")[0]!);
    words = words.slice(1);
  }
  const prefixed = words.length > 0;
  for (const name of assigned) {
    if (prefixed ? !SAFE_ENV.test(name) : RISKY_SHELL_VARS.test(name))
      verdict.add("config_mutation", `sets ${name}, which can make a command run or load another program`);
    state.vars.delete(name);
  }
  const name = words[0];
  if (!name) {
    if (assigned.length > 0) verdict.add("read_only", "sets shell variables");
    return;
  }
  if (name.expanded) {
    // `$SUDO rm -rf /x`, `$cmd -rf /`: the name is unknown, so read the rest
    // as a command too (the variable may be a wrapper) and look for
    // destructive words in the whole.
    verdict.add("config_mutation", `the command name \`${name.text}\` is only known when it runs`);
    const rest = words.slice(1);
    if (rest.length > 0 && !rest[0]!.text.startsWith("-")) classifySimple({ words: rest, redirects: [] }, verdict, depth, state, stdin);
    const whole = words.map((w) => w.text).join(" ");
    if (UNPARSED_DESTRUCTIVE.test(whole)) verdict.add("destructive", `\`${whole}\` may run a destructive command`);
    return;
  }
  const args = words.slice(1);
  const base = name.text.includes("/") ? name.text.slice(name.text.lastIndexOf("/") + 1) : name.text;
  if (DECLARE_WORDS.has(base)) {
    for (const a of args) {
      const v = a.text.split("=")[0]!;
      if (
        a.text.startsWith("-")
          ? /[fn]/.test(a.text)
          : RISKY_SHELL_VARS.test(v) || (base === "export" && a.text.includes("=") && !SAFE_ENV.test(v))
      )
        verdict.add("config_mutation", `\`${base} ${a.text}\` changes what later commands run or load`);
    }
    verdict.add("read_only", `\`${base}\` only sets shell variables`);
    return;
  }
  const ctx = contextFor(depth, state, stdin);
  const got = commandRule(name.text, args, ctx);
  verdict.merge(got);
  if (got.risk === "read_only") {
    for (const r of got.reads) {
      const bound = /^\$\{?([A-Za-z_]\w*)\}?$/.exec(r.text)?.[1];
      const candidates = bound && state.vars.has(bound) ? state.vars.get(bound)! : [r];
      const secret = candidates.find((c) => couldBeSecret(c, state.cwd) || (recursive(args) && holdsSecrets(c, state.cwd)));
      if (secret) verdict.add("config_mutation", `reads \`${secret.text}\`, which is or may be a secret store (the operator decides)`);
    }
  }
  for (const e of [...fileEffects(base, args, state.cwd), ...namedTargetEffects(base, args, state.cwd, got.known)])
    verdict.add(e.risk, e.reason);
  if (base === "cd" || base === "pushd") state.cwd = args[0] ? resolvePath(args[0], state.cwd) : HOME;
  if (base === "popd") state.cwd = undefined;
}

const recursive = (args: Word[]) =>
  args.some((a) => /^-[a-zA-Z]*[rR]/.test(a.text) || a.text === "--recursive" || a.text === "--dereference-recursive");
/** A directory under which a secret store lives (a recursive grep of /etc reads /etc/shadow). */
function holdsSecrets(word: Word, cwd: string | undefined): boolean {
  const p = resolvePath(word, cwd);
  if (p === undefined) return true;
  return (
    p === "/" ||
    /^\/(etc|root|home|var|var\/lib|etc\/pve|etc\/ssl|etc\/ssh|proc|run)\/?$/.test(p) ||
    /(^|\/)\.ssh\/?$/.test(p) ||
    /^\/home\/[^/]+\/?$/.test(p)
  );
}

function contextFor(depth: number, state: LineState, stdin: Stdin): RuleContext {
  return {
    classifyLine: (line, lineStdin) =>
      toClassification(classifyLine(line, depth + 1, { cwd: state.cwd, vars: new Map(state.vars) }, lineStdin ?? stdin)),
    classifyWords: (words) => {
      const v = new Verdict();
      if (depth + 1 > MAX_DEPTH) v.add("config_mutation", "nested too deeply to read");
      else classifySimple({ words, redirects: [] }, v, depth + 1, state, stdin);
      return toClassification(v);
    },
    cwd: state.cwd,
    stdin,
  };
}

// The risk of a command line: read_only < config_mutation < destructive.
// Invariants: every simple command the line would run is classified (the
// parser looks through pipelines, lists, subshells and substitutions; the
// rules look through sudo, env, bash -c, pct exec, ssh and friends) and the
// highest wins; an unknown command is config_mutation; a line the parser
// cannot understand is never read_only.
import type { Risk } from "../db/schema.js";
import { type Classification, commandRule, type RuleContext } from "./command-rules.js";
import { redirectRisk } from "./paths.js";
import { parseShell, ShellParseError, type SimpleCommand, type Word } from "./shell-words.js";

export type { Classification, Risk };

const ORDER: Record<Risk, number> = { read_only: 0, config_mutation: 1, destructive: 2 };

export function maxRisk(a: Risk, b: Risk): Risk {
  return ORDER[a] >= ORDER[b] ? a : b;
}

/** Accumulates the highest risk and the reasons for it. */
export class Verdict {
  risk: Risk = "read_only";
  reasons: string[] = [];

  add(risk: Risk, reason: string): void {
    if (ORDER[risk] > ORDER[this.risk]) {
      this.risk = risk;
      this.reasons = [reason];
    } else if (risk === this.risk && risk !== "read_only" && !this.reasons.includes(reason)) {
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
  /\b(mkfs(\.\w+)?|wipefs|dd\s+[^|;&]*of=\/dev\/|rm\s+-\w*[rR]\w*|reboot|shutdown|poweroff|halt|destroy|lvremove|vgremove|blkdiscard|shred|drop\s+database)\b/i;

export function classifyCommand(command: string): Classification {
  const verdict = classifyLine(command, 0);
  const reasons = verdict.reasons.filter((r) => r !== "");
  if (verdict.risk === "read_only" && reasons.length === 0) reasons.push("only reads state");
  return { risk: verdict.risk, reasons };
}

function classifyLine(line: string, depth: number): Verdict {
  const verdict = new Verdict();
  if (depth > MAX_DEPTH) {
    verdict.add("config_mutation", "nested too deeply to read");
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
  if (parsed.commands.length === 0 && parsed.substitutions.length === 0 && line.trim() !== "") {
    // Only comments: nothing runs.
    return verdict;
  }
  const ctx = makeContext(depth);
  for (const cmd of parsed.commands) classifySimple(cmd, verdict, ctx);
  for (const sub of parsed.substitutions) verdict.merge(toClassification(classifyLine(sub, depth + 1)));
  return verdict;
}

function toClassification(v: Verdict): Classification {
  return { risk: v.risk, reasons: v.reasons };
}

function makeContext(depth: number): RuleContext {
  return {
    classifyLine: (line) => toClassification(classifyLine(line, depth + 1)),
    classifyWords: (words) => {
      const v = new Verdict();
      if (depth + 1 > MAX_DEPTH) v.add("config_mutation", "nested too deeply to read");
      else classifySimple({ words, redirects: [] }, v, makeContext(depth + 1));
      return toClassification(v);
    },
  };
}

/** Control words that precede a command without being one. */
const PREFIX_WORDS = new Set(["if", "then", "else", "elif", "do", "while", "until", "!", "{", "time"]);
const ALONE_WORDS = new Set(["fi", "done", "}", "esac"]);

function classifySimple(cmd: SimpleCommand, verdict: Verdict, ctx: RuleContext): void {
  for (const r of cmd.redirects) {
    const risk = redirectRisk(r);
    if (risk) verdict.add(risk.risk, risk.reason);
  }
  let words: Word[] = cmd.words;
  const first = () => words[0]?.text;
  while (words.length > 0 && PREFIX_WORDS.has(first()!) && !words[0]!.dynamic) words = words.slice(1);
  if (ALONE_WORDS.has(first() ?? "")) words = words.slice(1);
  // `for x in a b c` names no command.
  if (first() === "for" || first() === "select") return;
  if (first() === "case") {
    verdict.add("config_mutation", "`case` statements are not understood");
    return;
  }
  // Leading assignments: FOO=bar cmd.
  while (/^[A-Za-z_][A-Za-z0-9_]*=/.test(first() ?? "")) words = words.slice(1);
  const name = words[0];
  if (!name) return;
  if (name.dynamic) {
    // `$SUDO rm -rf /x`, `$cmd -rf /`: the name is unknown, so read the rest
    // as a command too (the variable may be a wrapper) and look for
    // destructive words in the whole.
    verdict.add("config_mutation", `the command name \`${name.text}\` is only known when it runs`);
    const rest = words.slice(1);
    if (rest.length > 0 && !rest[0]!.text.startsWith("-")) classifySimple({ words: rest, redirects: [] }, verdict, ctx);
    const whole = words.map((w) => w.text).join(" ");
    if (UNPARSED_DESTRUCTIVE.test(whole)) verdict.add("destructive", `\`${whole}\` may run a destructive command`);
    return;
  }
  verdict.merge(commandRule(name.text, words.slice(1), ctx));
}

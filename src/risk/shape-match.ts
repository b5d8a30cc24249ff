// Matching a command's words against a read-only shape (read-only-shapes.ts).
// It owns the reading of options: short clusters (`-tlnp`), short options
// with their value attached or next (`-n5`, `-n 5`), long options with `=`
// or a following value, numeric options (`-50`), and subcommands.
//
// Invariant: a word it does not recognise (an option not in the shape, a
// subcommand not listed, an expansion where an option could hide) makes the
// match fail with a reason naming that word; it never guesses "harmless".
import type { Word } from "./shell-words.js";

export interface Shape {
  /** Why this shape cannot write or execute: the line a reviewer checks. */
  why: string;
  /**
   * The options it accepts, space-separated: `-a` a flag, `-n:` a flag with
   * a value, `--all` a long flag, `--lines:` a long option with a value,
   * `--color?` a long option with an optional `=value`.
   */
  opts?: string;
  /** Accepts `-5` for a count (head -5, tail -20). */
  numeric?: boolean;
  /** What its operands are: files it prints ("read"), files it only lists or measures ("stat"), or other words. */
  operands?: "read" | "stat" | "words" | "none";
  /** The most operands it may have (uniq's second operand is an output file). */
  maxOperands?: number;
  /** Shapes of its subcommands, chosen by the first operand. */
  sub?: Record<string, Shape>;
  /** Options may be spelled in any order and none of them writes or executes: an expansion cannot smuggle one in. */
  anyWord?: boolean;
  /** The words are not options and operands in the usual sense (find's expressions, tar's letters): `check` reads them all. */
  custom?: boolean;
  /** A last look at the words, for what a list of options cannot say (sed scripts, curl's -o target). */
  check?: (args: Word[], parsed: ParsedArgs) => string | undefined;
}

export interface ParsedArgs {
  options: { name: string; value?: Word }[];
  operands: Word[];
}

export type ShapeMatch = { ok: true; why: string; reads: Word[]; stats: Word[] } | { ok: false; reason: string };

interface OptSpec {
  value: "none" | "required" | "optional";
}

const specCache = new WeakMap<Shape, Map<string, OptSpec>>();

function specOf(shape: Shape): Map<string, OptSpec> {
  let spec = specCache.get(shape);
  if (spec) return spec;
  spec = new Map();
  for (const o of (shape.opts ?? "").split(/\s+/).filter(Boolean)) {
    if (o.endsWith(":")) spec.set(o.slice(0, -1), { value: "required" });
    else if (o.endsWith("?")) spec.set(o.slice(0, -1), { value: "optional" });
    else spec.set(o, { value: "none" });
  }
  specCache.set(shape, spec);
  return spec;
}

/** Reads args against a shape's options; stops at the first operand when `stopAtOperand`. */
export function parseArgs(
  shape: Shape,
  args: Word[],
  label: string,
  stopAtOperand: boolean,
): { parsed: ParsedArgs; rest: Word[] } | { error: string } {
  const spec = specOf(shape);
  const parsed: ParsedArgs = { options: [], operands: [] };
  let i = 0;
  let onlyOperands = false;
  while (i < args.length) {
    const w = args[i]!;
    const t = w.text;
    // `$X` may expand to `-o /etc/passwd`: only a shape none of whose options can harm takes it.
    if (!onlyOperands && (w.dynamic || w.expanded) && !shape.anyWord)
      return { error: `\`${label}\` is given \`${t}\`, only known when it runs (it could be any option)` };
    if (onlyOperands || !t.startsWith("-") || t === "-") {
      if (stopAtOperand) return { parsed, rest: args.slice(i) };
      parsed.operands.push(w);
      i++;
      continue;
    }
    if (t === "--") {
      onlyOperands = true;
      i++;
      continue;
    }
    if (shape.numeric && /^-\d+$/.test(t)) {
      parsed.options.push({ name: "-N", value: { text: t.slice(1), dynamic: false } });
      i++;
      continue;
    }
    if (t.startsWith("--")) {
      const eq = t.indexOf("=");
      const name = eq < 0 ? t : t.slice(0, eq);
      const o = spec.get(name);
      if (!o) return { error: `\`${label} ${name}\` is not on the read-only list` };
      if (eq >= 0) {
        if (o.value === "none") return { error: `\`${label} ${name}\` takes no value here` };
        parsed.options.push({ name, value: { ...w, text: t.slice(eq + 1) } });
        i++;
      } else if (o.value === "required") {
        const v = args[i + 1];
        if (!v) return { error: `\`${label} ${name}\` lacks its value` };
        parsed.options.push({ name, value: v });
        i += 2;
      } else {
        parsed.options.push({ name });
        i++;
      }
      continue;
    }
    // A short cluster: -abc, -n5, -n 5.
    let j = 1;
    let consumedNext = false;
    while (j < t.length) {
      const name = `-${t[j]}`;
      const o = spec.get(name);
      if (!o) {
        if (shape.numeric && /\d/.test(t[j]!)) {
          parsed.options.push({ name: "-N", value: { text: t.slice(j), dynamic: false } });
          break;
        }
        return { error: `\`${label} ${name}\` is not on the read-only list` };
      }
      if (o.value === "required") {
        const attached = t.slice(j + 1);
        if (attached) parsed.options.push({ name, value: { ...w, text: attached } });
        else {
          const v = args[i + 1];
          if (!v) return { error: `\`${label} ${name}\` lacks its value` };
          parsed.options.push({ name, value: v });
          consumedNext = true;
        }
        break;
      }
      parsed.options.push({ name });
      j++;
    }
    i += consumedNext ? 2 : 1;
  }
  return { parsed, rest: [] };
}

/** Does this command (name and arguments) match the shape? */
export function matchShape(shape: Shape, args: Word[], label: string): ShapeMatch {
  if (shape.sub) {
    const head = parseArgs(shape, args, label, true);
    if ("error" in head) return { ok: false, reason: head.error };
    const pathy = outputToPath(head.parsed, label);
    if (pathy) return { ok: false, reason: pathy };
    const subWord = head.rest[0];
    if (!subWord) {
      const none = shape.sub[""];
      return none ? matchShape(none, [], label) : { ok: false, reason: `\`${label}\` without a subcommand is not on the read-only list` };
    }
    if (subWord.expanded) return { ok: false, reason: `\`${label}\` subcommand \`${subWord.text}\` is only known when it runs` };
    const sub = shape.sub[subWord.text];
    if (!sub) return { ok: false, reason: `\`${label} ${subWord.text}\` is not on the read-only list` };
    const inner = matchShape(sub, head.rest.slice(1), `${label} ${subWord.text}`);
    if (inner.ok && shape.check) {
      const veto = shape.check(args, head.parsed);
      if (veto) return { ok: false, reason: veto };
    }
    return inner;
  }
  if (shape.custom) {
    const veto = shape.check?.(args, { options: [], operands: [] }) ?? (shape.check ? undefined : "no check");
    if (veto) return { ok: false, reason: veto };
    const roots = args.slice(
      0,
      Math.max(
        0,
        args.findIndex((a) => /^[-!(]/.test(a.text)),
      ) || args.length,
    );
    return { ok: true, why: shape.why, reads: [], stats: roots };
  }
  const got = parseArgs(shape, args, label, false);
  if ("error" in got) return { ok: false, reason: got.error };
  const { parsed } = got;
  const pathy = outputToPath(parsed, label);
  if (pathy) return { ok: false, reason: pathy };
  if (shape.operands === "none" && parsed.operands.length > 0)
    return { ok: false, reason: `\`${label}\` with an operand (\`${parsed.operands[0]!.text}\`) is not on the read-only list` };
  if (shape.maxOperands !== undefined && parsed.operands.length > shape.maxOperands)
    return { ok: false, reason: `\`${label}\` with more than ${shape.maxOperands} operand(s) may write its last one` };
  const veto = shape.check?.(args, parsed);
  if (veto) return { ok: false, reason: veto };
  return {
    ok: true,
    why: shape.why,
    reads: shape.operands === "read" ? parsed.operands : [],
    stats: shape.operands === "stat" ? parsed.operands : [],
  };
}

/** --output, -o and friends choose columns or formats on these shapes; given a path, they may be writing it somewhere. */
function outputToPath(parsed: ParsedArgs, label: string): string | undefined {
  const o = parsed.options.find(
    (x) =>
      /^(-o|-O|--output|--output-file|--out|--log-file|--write)$/.test(x.name) &&
      x.value?.text.includes("/") &&
      !/^\/dev\/(null|stdout|stderr)$/.test(x.value.text),
  );
  return o ? `\`${label} ${o.name} ${o.value!.text}\` names a path: it may write there` : undefined;
}

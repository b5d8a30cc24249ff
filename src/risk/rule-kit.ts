// The vocabulary the command rules are written in: verdict constructors,
// option parsing, and the Rule type. No policy lives here.
import type { Risk } from "../db/schema.js";
import type { Word } from "./shell-words.js";

export interface Classification {
  risk: Risk;
  reasons: string[];
  /** Set by a wrapper: the risk is its inner command's, already judged against the read-only list. */
  wrapped?: boolean;
}

/** Marks a classification as a wrapper's look-through. */
export const lookedThrough = (c: Classification): Classification => ({ ...c, wrapped: true });

/** What a command reads on its standard input, as far as the line shows. */
export type Stdin = { kind: "text"; text: string } | { kind: "unknown"; from: string } | { kind: "none" };

export interface RuleContext {
  /** Classifies a whole command line (bash -c, ssh host 'cmd'); `stdin` is what that line reads. */
  classifyLine(line: string, stdin?: Stdin): Classification;
  /** Classifies the command made of these words (sudo cmd, xargs cmd), with this command's stdin. */
  classifyWords(words: Word[]): Classification;
  /** The directory the command runs in, undefined when a `cd` made it unknown. */
  cwd: string | undefined;
  /** What the command reads on its standard input. */
  stdin: Stdin;
}

export type Rule = (args: Word[], ctx: RuleContext, name: string) => Classification;

export const ORDER = { read_only: 0, config_mutation: 1, destructive: 2 } as const;

/** At least `floor`: a wrapper that itself changes something (systemd-run creates a unit). */
export const atLeast = (c: Classification, floor: Classification): Classification => merge(c, floor);

/** The inner classification, each reason prefixed with how it is reached ("runs a command given in ProxyCommand: ..."). */
export const via = (label: string, c: Classification): Classification => ({ ...c, reasons: c.reasons.map((r) => `${label}: ${r}`) });

export const ro = (): Classification => ({ risk: "read_only", reasons: [] });
export const cm = (reason: string): Classification => ({ risk: "config_mutation", reasons: [reason] });
export const de = (reason: string): Classification => ({ risk: "destructive", reasons: [reason] });

export const texts = (args: Word[]) => args.map((a) => a.text);
export const positional = (args: Word[]) => args.filter((a) => !a.text.startsWith("-"));
/** Short flags (letters of -abc) and long options (--name, without =value). */
export function optionSet(args: Word[]): Set<string> {
  const set = new Set<string>();
  for (const a of args) {
    if (a.text === "--") break;
    if (a.text.startsWith("--")) set.add(a.text.split("=")[0] ?? a.text);
    else if (a.text.startsWith("-") && a.text.length > 1) for (const ch of a.text.slice(1)) set.add(`-${ch}`);
  }
  return set;
}
export const has = (args: Word[], ...opts: string[]) => {
  const set = optionSet(args);
  return opts.some((o) => set.has(o));
};

/** Skips options (and the values of those listed in `withValue`), returning the rest from the first operand. */
export function afterOptions(args: Word[], withValue: string[] = []): Word[] {
  let i = 0;
  while (i < args.length) {
    const t = args[i]!.text;
    if (t === "--") return args.slice(i + 1);
    if (!t.startsWith("-") || t === "-") break;
    if (withValue.includes(t)) i += 2;
    else i += 1;
  }
  return args.slice(i);
}

export const merge = (...parts: Classification[]): Classification => {
  const order = ORDER;
  let best: Classification = ro();
  for (const p of parts) {
    if (order[p.risk] > order[best.risk]) best = { risk: p.risk, reasons: [...p.reasons] };
    else if (p.risk === best.risk) best.reasons.push(...p.reasons.filter((r) => !best.reasons.includes(r)));
  }
  return best;
};

/** Read-only unless the subcommand is in `mutating` or `destroying`; unknown subcommands mutate. */
export function bySubcommand(tool: string, readOnly: string[], destroying: string[] = [], optsWithValue: string[] = []): Rule {
  return (args) => {
    const rest = afterOptions(args, optsWithValue);
    const sub = rest[0]?.text;
    if (sub === undefined) return readOnly.includes("") ? ro() : cm(`\`${tool}\` without a subcommand`);
    if (destroying.includes(sub)) return de(`\`${tool} ${sub}\` destroys data or availability`);
    if (readOnly.includes(sub)) return ro();
    return cm(`\`${tool} ${sub}\` changes state`);
  };
}

// The rules for single commands: what `apt`, `systemctl`, `zfs`, `rm`... do
// to a host, by their subcommand and options, gathered from the rules-*.ts
// modules, plus the read-only allowlist (read-only-shapes.ts) and the
// wrappers looked through (wrappers.ts, rules-remote.ts).
// Invariant: read_only comes only from a matched read-only shape, or from a
// wrapper whose inner command matched one; a command with no rule and no
// shape is config_mutation.
import { READ_ONLY_SHAPES } from "./read-only-shapes.js";
import { type Classification, cm, de, type Rule, type RuleContext } from "./rule-kit.js";
import { registerFileAndStorageRules } from "./rules-files-storage.js";
import { registerNetworkAndAppRules } from "./rules-network-apps.js";
import { registerPowerRules } from "./rules-power.js";
import { registerRemoteRules } from "./rules-remote.js";
import { registerSystemRules } from "./rules-system.js";
import { matchShape } from "./shape-match.js";
import type { Word } from "./shell-words.js";
import { registerWrapperRules } from "./wrappers.js";

export type { Classification, RuleContext };

const rules = new Map<string, Rule>();
registerSystemRules(rules);
registerFileAndStorageRules(rules);
registerNetworkAndAppRules(rules);
registerWrapperRules(rules);
registerRemoteRules(rules);
registerPowerRules(rules);

export interface CommandVerdict extends Classification {
  /** Operands a read-only shape prints (checked against secret stores by the caller). */
  reads: Word[];
  /** Whether a rule knows this command (an unknown one pointed at a vital file is judged worst). */
  known: boolean;
}

export function commandRule(name: string, args: Word[], ctx: RuleContext): CommandVerdict {
  const base = name.includes("/") ? name.slice(name.lastIndexOf("/") + 1) : name;
  if (/^mkfs\./.test(base)) return { ...de(`\`${base}\` formats a filesystem`), reads: [], known: true };
  const rule = rules.get(base);
  const ruled = rule?.(args, ctx, base);
  if (ruled && (ruled.wrapped || ruled.risk !== "read_only")) return { risk: ruled.risk, reasons: ruled.reasons, reads: [], known: true };
  const shape = Object.hasOwn(READ_ONLY_SHAPES, base) ? READ_ONLY_SHAPES[base] : undefined;
  if (!shape) {
    const reason = rule
      ? `\`${base}\` with these arguments is not on the read-only list`
      : `unknown command \`${base}\`: assumed to change state`;
    return { ...cm(reason), reads: [], known: rule !== undefined };
  }
  const m = matchShape(shape, args, base);
  if (!m.ok) return { ...cm(m.reason), reads: [], known: true };
  return { risk: "read_only", reasons: [`read-only shape \`${base}\`: ${m.why}`], reads: m.reads, known: true };
}

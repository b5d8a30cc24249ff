// The rules for single commands: what `apt`, `systemctl`, `zfs`, `rm`... do
// to a host, by their subcommand and options, gathered from the rules-*.ts
// modules. Wrappers (sudo, env, timeout, xargs, bash -c, pct exec, ssh,
// docker exec) are looked through: their risk is the risk of what they run.
// Invariant: a command with no rule is config_mutation, never read_only.
import { type Classification, cm, de, type Rule, type RuleContext } from "./rule-kit.js";
import { registerFileAndStorageRules } from "./rules-files-storage.js";
import { registerNetworkAndAppRules } from "./rules-network-apps.js";
import { registerShellRules } from "./rules-shell.js";
import { registerSystemRules } from "./rules-system.js";
import type { Word } from "./shell-words.js";

export type { Classification, RuleContext };

const rules = new Map<string, Rule>();
registerShellRules(rules);
registerSystemRules(rules);
registerFileAndStorageRules(rules);
registerNetworkAndAppRules(rules);

export function commandRule(name: string, args: Word[], ctx: RuleContext): Classification {
  const base = name.includes("/") ? name.slice(name.lastIndexOf("/") + 1) : name;
  if (/^mkfs\./.test(base)) return de(`\`${base}\` formats a filesystem`);
  const rule = rules.get(base);
  if (!rule) return cm(`unknown command \`${base}\`: assumed to change state`);
  return rule(args, ctx, base);
}

// The risk of SQL handed to psql or mysql on their command line or input.
// Invariant: only a statement list made of SELECT/SHOW/EXPLAIN/DESCRIBE and
// listing meta-commands, calling no function that reads or writes server
// files, runs programs or changes state, is read-only; DROP, TRUNCATE and
// DELETE without WHERE are destructive; shell escapes are judged as shell.
import { type Classification, cm, de, ro } from "./rule-kit.js";
import type { Word } from "./shell-words.js";

/** Every value of the SQL options (psql accepts several -c). */
export function sqlArgs(args: Word[], names: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (names.includes(t) && args[i + 1]) out.push(args[++i]!.text);
    else for (const n of names) if (n.startsWith("--") && t.startsWith(`${n}=`)) out.push(t.slice(n.length + 1));
    if (/^-[ce].+/.test(t) && names.includes(t.slice(0, 2))) out.push(t.slice(2));
  }
  return out;
}

const LISTING_META = /^\\(l\+?|d[tivsnufbmxgpyTDEFo]*\+?S?|conninfo|x|timing|encoding|dn\+?|du\+?|dx\+?|q|\?|h)(\s|$)/;
const DANGEROUS_FUNCTIONS =
  /\b(pg_read_file|pg_read_binary_file|pg_ls_dir|pg_stat_file|lo_import|lo_export|lo_unlink|dblink\w*|pg_terminate_backend|pg_cancel_backend|set_config|pg_reload_conf|pg_rotate_logfile|pg_promote|nextval|setval|pg_advisory\w*|pg_switch_wal|pg_create\w*|pg_drop\w*|load_file|sys_exec|sys_eval|sleep|benchmark|txid_current)\s*\(/i;

export function sqlRisk(sql: string, tool: string): Classification {
  if (/\b(drop\s+(database|schema|table|owned)|truncate\b|dropdb)/i.test(sql)) return de(`\`${tool}\` drops or truncates data`);
  if (/\bdelete\s+from\b/i.test(sql) && !/\bwhere\b/i.test(sql)) return de(`\`${tool}\` deletes every row of a table`);
  if (/\bcopy\b[\s\S]*\b(to|from)\s+program\b/i.test(sql) || /(^|\s)\\!|^\s*system\s/im.test(sql))
    return cm(`\`${tool}\` runs a program from SQL (COPY ... PROGRAM, \\!, system)`);
  const statements = sql
    .split(/;|\n/)
    .map((s) => s.trim())
    .filter(Boolean);
  const readOnly = statements.every(
    (s) =>
      (LISTING_META.test(s) || /^(select|show|explain|describe|desc|table|values)\b/i.test(s)) &&
      !/\b(into|insert|update|delete|create|alter|grant|revoke|copy|for\s+update|for\s+share)\b/i.test(s) &&
      !DANGEROUS_FUNCTIONS.test(s),
  );
  return readOnly && statements.length > 0 ? ro() : cm(`\`${tool}\` runs SQL that may change data or touch the server's files`);
}

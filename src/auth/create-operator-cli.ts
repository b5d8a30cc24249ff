// `npm run create-operator -- [--role viewer|operator|admin] <username>`:
// adds an operator to the configured database (DATABASE_URL, or the embedded
// one under NOMOS_DATA_DIR). The password is read from the first line of
// stdin, so it never shows in the process list or the shell history:
//   printf '%s\n' "$PASSWORD" | npm run create-operator -- --role viewer alice
// The first operator is always an admin; later ones are operators unless
// --role says otherwise. Migrations run as NOMOS_DATABASE_OWNER_URL when set.
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../config/env.js";
import { openDatabase } from "../db/open.js";
import { migrateAsOwner } from "../db/service-role.js";
import { createLogger } from "../log/logger.js";
import { OperatorExistsError, operatorCreate } from "./operators.js";
import { passwordProblem } from "./password-strength.js";
import { isRole, ROLES } from "./roles.js";

const USAGE = `usage: printf '%s\\n' "$PASSWORD" | npm run create-operator -- [--role ${ROLES.join("|")}] <username>\n`;

/** A refusal the person can fix: printed as is; exit 2 for a bad command line, 1 for a bad password. */
class UsageError extends Error {
  override name = "UsageError";
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
}

async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write("password (a few unrelated words make a strong one, then Enter): ");
  const rl = createInterface({ input: process.stdin });
  for await (const line of rl) {
    rl.close();
    return line;
  }
  return "";
}

async function run(): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: { role: { type: "string" } }; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: process.argv.slice(2), options: { role: { type: "string" } }, allowPositionals: true });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const username = parsed.positionals[0];
  const role = parsed.values.role;
  if (!username || parsed.positionals.length > 1) throw new UsageError(USAGE);
  if (role !== undefined && !isRole(role)) throw new UsageError(`--role must be one of ${ROLES.join(", ")} (got "${role}")\n`);
  const config = loadConfig(process.env);
  const log = createLogger({ level: "warn", format: config.log.format });
  const password = await readPassword();
  const problem = passwordProblem(password, { username });
  if (problem) throw new UsageError(`${problem}\n`, 1);
  const opened = await openDatabase(config, log, { applicationName: "nomos-create-operator" });
  try {
    await migrateAsOwner({ serviceSql: opened.db.sql, ownerUrl: config.databaseOwnerUrl, log });
    const op = await operatorCreate(opened.db.kysely, {
      username,
      password,
      actor: "system:create-operator",
      ...(role !== undefined ? { role } : {}),
    });
    process.stdout.write(`operator "${op?.username}" created (${op?.role})\n`);
    return 0;
  } finally {
    await opened.close();
  }
}

run().then(
  (code) => process.exit(code),
  (err: Error) => {
    if (err instanceof UsageError) {
      process.stderr.write(err.message);
      process.exit(err.exitCode);
    }
    const known = err instanceof ConfigError || err instanceof OperatorExistsError || /^(username|password) /.test(err.message);
    process.stderr.write(`${known ? "" : "create-operator failed: "}${err.message}\n`);
    process.exit(err instanceof ConfigError ? 2 : 1);
  },
);

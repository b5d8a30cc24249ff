// `npm run create-operator -- <username>`: adds an operator to the configured
// database (DATABASE_URL, or the embedded one under NOMOS_DATA_DIR). The
// password is read from the first line of stdin, so it never shows in the
// process list or the shell history:
//   printf '%s\n' "$PASSWORD" | npm run create-operator -- alice
import { createInterface } from "node:readline";
import { ConfigError, loadConfig } from "../config/env.js";
import { migrate } from "../db/migrate.js";
import { openDatabase } from "../db/open.js";
import { createLogger } from "../log/logger.js";
import { OperatorExistsError, operatorCreate } from "./operators.js";

async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write("password (at least 8 characters, then Enter): ");
  const rl = createInterface({ input: process.stdin });
  for await (const line of rl) {
    rl.close();
    return line;
  }
  return "";
}

async function run(): Promise<number> {
  const username = process.argv[2];
  if (!username) {
    process.stderr.write("usage: printf '%s\\n' \"$PASSWORD\" | npm run create-operator -- <username>\n");
    return 2;
  }
  const config = loadConfig(process.env);
  const log = createLogger({ level: "warn", format: config.log.format });
  const password = await readPassword();
  const opened = await openDatabase(config, log, { applicationName: "nomos-create-operator" });
  try {
    await migrate(opened.db.sql);
    const op = await operatorCreate(opened.db.kysely, { username, password, actor: "system:create-operator" });
    process.stdout.write(`operator "${op?.username}" created\n`);
    return 0;
  } finally {
    await opened.close();
  }
}

run().then(
  (code) => process.exit(code),
  (err: Error) => {
    const known = err instanceof ConfigError || err instanceof OperatorExistsError || /^(username|password) /.test(err.message);
    process.stderr.write(`${known ? "" : "create-operator failed: "}${err.message}\n`);
    process.exit(err instanceof ConfigError ? 2 : 1);
  },
);

// `npm run migrate`: apply pending migrations to the configured database
// (DATABASE_URL, or the embedded one under NOMOS_DATA_DIR) and say what ran.
// As the owner: NOMOS_DATABASE_OWNER_URL when set (then DATABASE_URL's role
// is let into nomos_service, as at start), else DATABASE_URL itself.
import { ConfigError, loadConfig } from "../config/env.js";
import { createLogger } from "../log/logger.js";
import { openDatabase } from "./open.js";
import { migrateAsOwner } from "./service-role.js";

async function run(): Promise<number> {
  const config = loadConfig(process.env);
  const log = createLogger({ level: config.log.level, format: config.log.format });
  const opened = await openDatabase(config, log, { applicationName: "nomos-migrate" });
  try {
    const result = await migrateAsOwner({ serviceSql: opened.db.sql, ownerUrl: config.databaseOwnerUrl, log });
    for (const m of result.applied) log.info({ migration: m.file }, "applied");
    log.info({ applied: result.applied.length, alreadyApplied: result.alreadyApplied }, "database is up to date");
    return 0;
  } finally {
    await opened.close();
  }
}

run().then(
  (code) => process.exit(code),
  (err: Error) => {
    process.stderr.write(`${err instanceof ConfigError ? "" : "migrate failed: "}${err.message}\n`);
    process.exit(err instanceof ConfigError ? 2 : 1);
  },
);

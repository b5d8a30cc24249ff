// Finds the database this process should use: DATABASE_URL when set
// (nothing is started), else the embedded PostgreSQL under NOMOS_DATA_DIR.
// Shared by `npm start` and `npm run migrate` so both always agree on where
// the data lives. close() ends the pool, then the embedded server if we
// started one.
import type { Config } from "../config/env.js";
import type { Logger } from "../log/logger.js";
import { connect, type Db } from "./connect.js";
import { startEmbeddedPostgres } from "./embedded.js";

export interface OpenedDatabase {
  db: Db;
  /** Where it is, for connections of their own (the event stream's LISTEN). */
  url: string;
  /** "external" for DATABASE_URL, "embedded" for the one we started. */
  source: "external" | "embedded";
  close(): Promise<void>;
}

export async function openDatabase(
  config: Pick<Config, "databaseUrl" | "dataDir">,
  log: Logger,
  options: { applicationName?: string } = {},
): Promise<OpenedDatabase> {
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres({ dataDir: config.dataDir, log, ownProcessGroup: true });
  const url = config.databaseUrl ?? (embedded?.url as string);
  const db = connect(url, { applicationName: options.applicationName ?? "nomos" });
  let closing: Promise<void> | undefined;
  return {
    db,
    url,
    source: embedded ? "embedded" : "external",
    close() {
      closing ??= db.close().finally(() => embedded?.stop());
      return closing;
    },
  };
}

// Opens the database: a postgres.js pool and the Kysely instance over it.
// Invariant: each Db is closed exactly once by whoever created it (main.ts,
// a CLI, or a test helper); close() is idempotent and waits for queries in
// flight. Nothing else creates pools, so connection counts stay knowable.
import { Kysely } from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";
import postgres from "postgres";
import type { Database } from "./schema.js";

export type Sql = postgres.Sql;

export interface Db {
  /** postgres.js, for LISTEN, COPY and hand-written SQL. */
  sql: Sql;
  /** Kysely over the same pool, for typed queries. */
  kysely: Kysely<Database>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Pool size; postgres.js opens connections lazily up to this. */
  max?: number;
  /** Shown in pg_stat_activity, so operators can tell our connections apart. */
  applicationName?: string;
}

export function connect(url: string, options: ConnectOptions = {}): Db {
  const sql = postgres(url, {
    max: options.max ?? 10,
    connection: { application_name: options.applicationName ?? "nomos" },
    onnotice: () => {},
    // Idle pooled connections are closed after a while so a quiet service
    // does not hold slots on a shared server.
    idle_timeout: 60,
  });
  const kysely = new Kysely<Database>({ dialect: new PostgresJSDialect({ postgres: sql }) });
  let closing: Promise<void> | undefined;
  return {
    sql,
    kysely,
    close() {
      // Kysely holds nothing of its own (its destroy() only ends the pool,
      // and only once it has been used), so ending the pool closes both.
      // Queries in flight get 5 s to finish before their connections close.
      closing ??= sql.end({ timeout: 5 });
      return closing;
    },
  };
}

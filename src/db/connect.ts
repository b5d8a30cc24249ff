// Opens the database: a postgres.js pool and the Kysely instance over it.
// Invariant: each Db is closed exactly once by whoever created it (main.ts,
// a CLI, or a test helper); close() is idempotent and waits for queries in
// flight. Nothing else in src/ calls postgres() (tests/module-ownership
// keeps it so), so connection counts stay knowable, and none is opened on
// an unpatched driver (driver-patch.ts).
import { CompiledQuery, type DatabaseConnection, Kysely } from "kysely";
import { PostgresJSDialect, PostgresJSDriver } from "kysely-postgres-js";
import postgres from "postgres";
import { assertDriverPatched } from "./driver-patch.js";
import { poolRegister } from "./pool-execute.js";
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
  assertDriverPatched();
  const sql = postgres(url, {
    max: options.max ?? 10,
    connection: { application_name: options.applicationName ?? "nomos" },
    onnotice: () => {},
    // Idle pooled connections are closed after a while so a quiet service
    // does not hold slots on a shared server.
    idle_timeout: 60,
    backoff: reconnectDelaySeconds,
  });
  const kysely = new Kysely<Database>({ dialect: new Dialect({ postgres: preparing(sql) }) });
  poolRegister(kysely, sql);
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

/**
 * How long postgres.js waits before reopening a connection, after `failures`
 * failed attempts in a row (counted across the pool). Its default grows to
 * 20 s, so after a restart of a few seconds (ten connections failing a few
 * times each) queries waited up to 17 s more once the server was back
 * (npm run bench:pg-restart). Capped at 2 s: ten connections retrying every
 * 1–2 s are no load on a server that is down.
 */
export function reconnectDelaySeconds(failures: number): number {
  return (0.5 + Math.random() / 2) * Math.min(3 ** failures / 100, 2);
}

/**
 * The pool as Kysely sees it: every query with parameters goes out as a
 * named prepared statement, cached per connection, as postgres.js's own
 * tagged templates do. kysely-postgres-js runs queries through
 * `unsafe()`, which postgres.js leaves unprepared, and an unprepared query
 * with parameters costs two round trips (Parse/Describe, wait for the
 * parameter types, then Bind/Execute) and a fresh parse and plan on every
 * call: on the continuation's claim that was half its latency (issue 20).
 * `?prepare=false` in the URL (behind PgBouncer in transaction mode,
 * README) still turns every prepared statement off, these included.
 * (db/pool-execute.ts runs a turn's statements on the pool itself, without
 * the reservation, prepared the same way.)
 */
function preparing(sql: Sql): Sql {
  const reserve = async () => {
    const reserved = await sql.reserve();
    return {
      unsafe: (query: string, parameters?: unknown[], options?: Record<string, unknown>) =>
        reserved.unsafe(query, parameters as never, { prepare: true, ...options }),
      release: () => reserved.release(),
    };
  };
  const pool = (...args: unknown[]) => (sql as unknown as (...a: unknown[]) => unknown)(...args);
  return Object.assign(pool, { reserve, end: (o?: { timeout?: number }) => sql.end(o) }) as unknown as Sql;
}

/**
 * kysely-postgres-js 3 inherits rollbackTransaction from Kysely 0.28's `pg`
 * driver, which on a failed ROLLBACK calls a method only `pg` connections
 * have. A transaction whose connection died therefore threw "TypeError:
 * connection[PRIVATE_MARK_FOR_DISCARD_METHOD] is not a function" in place of
 * its real error (CONNECTION_CLOSED), and retries that look for that error
 * (retryWhileDbUnavailable) never happened. Here a failed ROLLBACK throws
 * its own error. Nothing needs discarding: a ROLLBACK fails when the
 * connection is gone, and the patched postgres.js ends the reservation with
 * it (patches/postgres+3.4.9.patch).
 */
class Driver extends PostgresJSDriver {
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("rollback"));
  }
}

class Dialect extends PostgresJSDialect {
  constructor(private readonly config: { postgres: Sql }) {
    super(config);
  }

  override createDriver(): Driver {
    return new Driver(this.config);
  }
}

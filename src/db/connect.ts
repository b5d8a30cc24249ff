// Opens the database: a postgres.js pool and the Kysely instance over it.
// Invariant: each Db is closed exactly once by whoever created it (main.ts,
// a CLI, or a test helper); close() is idempotent and waits for queries in
// flight. Nothing else in src/ calls postgres() (tests/module-ownership
// keeps it so), so connection counts stay knowable, and none is opened on
// an unpatched driver (driver-patch.ts).
import {
  CompiledQuery,
  type DatabaseConnection,
  Kysely,
  PostgresDialect,
  PostgresDriver,
  type QueryResult,
  type TransactionSettings,
} from "kysely";
import postgres from "postgres";
import { assertDriverPatched } from "./driver-patch.js";
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
  const kysely = new Kysely<Database>({ dialect: new Dialect(sql) });
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
 * Kysely's PostgreSQL driver over postgres.js's pool (Kysely's own speaks
 * to `pg`; this replaces kysely-postgres-js's, for two reasons):
 *
 * - Only a transaction holds a connection of its own, reserved at its BEGIN
 *   until it ends; any other query runs on the pool itself (postgres.js
 *   hands it a free connection). kysely-postgres-js reserved a connection
 *   for every query, and postgres.js builds a whole reserved `sql` object
 *   for that: about 10 KB of garbage and 7 µs of CPU a query (issue 20).
 *   Kysely's connection() API, which would pin one connection for several
 *   queries outside a transaction, is refused by name (see Connection).
 * - Kysely's `pg` driver, which kysely-postgres-js extends, calls on a
 *   failed ROLLBACK a method only `pg` connections have: a transaction
 *   whose connection died threw "TypeError: connection[...] is not a
 *   function" in place of its real error (CONNECTION_CLOSED), and retries
 *   that look for that error (retryWhileDbUnavailable) never happened. Here
 *   a failed ROLLBACK throws its own error. Nothing needs discarding: a
 *   ROLLBACK fails when the connection is gone, and the patched postgres.js
 *   ends the reservation with it (patches/postgres+3.4.9.patch).
 *
 * BEGIN (with its settings), COMMIT and savepoints are Kysely's, inherited.
 */
class Driver extends PostgresDriver {
  constructor(private readonly pool: Sql) {
    // The `pg` pool Kysely's driver would open is never asked for: init,
    // acquiring, releasing and destroy are all overridden here.
    super({ pool: () => Promise.reject(new Error("db/connect.ts: Kysely runs on postgres.js's pool, not pg's")) });
  }

  override async init(): Promise<void> {}

  override async destroy(): Promise<void> {
    await this.pool.end();
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    return new Connection(this.pool);
  }

  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await (connection as Connection).reserve();
    await super.beginTransaction(connection, settings);
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("rollback"));
  }

  override async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as Connection).release();
  }
}

/**
 * One Kysely connection: a transaction's reserved connection, or the pool
 * for exactly one query. Every query with parameters goes out as a named
 * prepared statement, cached per connection, as postgres.js's own tagged
 * templates do: through `unsafe()`, postgres.js leaves a query unprepared,
 * and an unprepared query with parameters costs two round trips
 * (Parse/Describe, wait for the parameter types, then Bind/Execute) and a
 * fresh parse and plan on every call; on the continuation's claim that was
 * half its latency (issue 20). `?prepare=false` in the URL (behind
 * PgBouncer in transaction mode, README) still turns them all off.
 */
class Connection implements DatabaseConnection {
  private reserved: postgres.ReservedSql | undefined;
  private pooledQueries = 0;

  constructor(private readonly pool: Sql) {}

  async reserve(): Promise<void> {
    this.reserved ??= await this.pool.reserve();
  }

  release(): void {
    this.reserved?.release();
    this.reserved = undefined;
  }

  private send(query: CompiledQuery) {
    if (!this.reserved && this.pooledQueries++ > 0)
      throw new Error(
        "a Kysely connection outside a transaction runs one query on the pool (db/connect.ts): use db.transaction() for statements that must share a connection",
      );
    return (this.reserved ?? this.pool).unsafe(query.sql, [...query.parameters] as never[], { prepare: true });
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.send(query);
    const { command, count } = result;
    const changed = command === "INSERT" || command === "UPDATE" || command === "DELETE" || command === "MERGE";
    return { numAffectedRows: changed ? BigInt(count) : undefined, rows: Array.from(result.values()) as R[] };
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    if (!Number.isInteger(chunkSize) || chunkSize <= 0) throw new Error(`streaming needs a positive whole chunk size, not ${chunkSize}`);
    for await (const rows of this.send(query).cursor(chunkSize)) yield { rows: rows as unknown as R[] };
  }
}

class Dialect extends PostgresDialect {
  constructor(private readonly pool: Sql) {
    super({ pool: () => Promise.reject(new Error("db/connect.ts: Kysely runs on postgres.js's pool, not pg's")) });
  }

  override createDriver(): Driver {
    return new Driver(this.pool);
  }
}

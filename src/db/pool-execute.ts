// Runs a statement written with Kysely's sql tag straight on the pool of
// postgres.js that a Kysely instance from connect() sits on, skipping
// kysely-postgres-js's reservation of a connection per query (postgres.js
// builds a whole reserved `sql` object for it: about 10 KB of garbage and
// 7 µs of CPU a statement, issue 20). For the statements of a turn's path,
// each of which is one round trip and its own transaction.
//
// Invariant: the statement runs exactly as Kysely would run it (the same
// compiled text and parameters, a named prepared statement as connect.ts's
// `preparing` makes every Kysely query, the driver's errors as they are),
// and a Kysely instance that is not a pool's (a transaction's, withActor)
// runs it through Kysely, on the transaction's connection.
import type { Kysely, RawBuilder } from "kysely";
import type postgres from "postgres";
import type { Database } from "./schema.js";

const pools = new WeakMap<Kysely<Database>, postgres.Sql>();

/** connect.ts: `kysely` runs over `sql`'s pool. */
export function poolRegister(kysely: Kysely<Database>, sql: postgres.Sql): void {
  pools.set(kysely, sql);
}

export async function poolExecute<R>(db: Kysely<Database>, query: RawBuilder<R>): Promise<{ rows: R[] }> {
  const pool = pools.get(db);
  if (!pool) return query.execute(db);
  const compiled = query.compile(db);
  const rows = await pool.unsafe(compiled.sql, [...compiled.parameters] as postgres.ParameterOrJSON<never>[], { prepare: true });
  return { rows: rows as unknown as R[] };
}

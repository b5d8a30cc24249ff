// The one door for writes: a transaction that first names its actor, so the
// audit trigger can record who did what. Invariant: set_config(..., true) is
// transaction-local, so the actor dies with the transaction and a pooled
// connection can never carry one transaction's actor into the next.
//
// Actors read as "<kind>:<name>": operator:alice, agent:<sessionId>,
// system:runner, system:listener, system:sweep, system:startup.
import { type Kysely, sql, type Transaction } from "kysely";
import type { Database } from "./schema.js";

export type Tx = Transaction<Database>;

export async function withActor<T>(db: Kysely<Database>, actor: string, work: (tx: Tx) => Promise<T>): Promise<T> {
  if (!/^[a-z]+:\S{1,200}$/.test(actor)) {
    throw new Error(`withActor: actor must read "<kind>:<name>" (e.g. "operator:alice"), got "${actor}"`);
  }
  return db.transaction().execute(async (tx) => {
    await sql`SELECT set_config('nomos.actor', ${actor}, true)`.execute(tx);
    return work(tx);
  });
}

// Rows with sensible defaults, for tests that need a session, a target or an
// execution to exist without caring about every column. Each takes the
// overrides it is given and returns the inserted row.
import type { Kysely } from "kysely";
import type { Insertable } from "kysely";
import type { Database } from "../../src/db/schema.js";

type Db = Kysely<Database>;

export async function makeSession(db: Db, values: Partial<Insertable<Database["sessions"]>> = {}) {
  return db
    .insertInto("sessions")
    .values({ title: "test session", ...values })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function makeExecution(db: Db, values: Partial<Insertable<Database["executions"]>> = {}) {
  return db
    .insertInto("executions")
    .values({ target: "pve1", command: "true", risk: "read_only", ...values })
    .returningAll()
    .executeTakeFirstOrThrow();
}

// How Kysely's queries meet the pool (src/db/connect.ts): a transaction
// holds one connection of its own from BEGIN to its end, and any other
// query runs on the pool itself, one query per Kysely connection.
//
// Invariants pinned: a transaction's statements share one backend and its
// local settings (the audit actor rides on them); Kysely's connection()
// outside a transaction, which would need a pinned connection, fails by
// name at its second query instead of silently spreading over the pool.
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "./helpers/database.js";

const t = useTestDatabase();

describe("Kysely over the postgres.js pool", () => {
  it("keeps a transaction on one connection, with its local settings, while other queries run beside it", async () => {
    const db = t.connect({ max: 3 });
    const seen = await db.kysely.transaction().execute(async (tx) => {
      const first = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid, set_config('nomos.actor', 'test:tx', true)`.execute(tx);
      // Queries outside the transaction, meanwhile, take whatever connection is free.
      await Promise.all(Array.from({ length: 6 }, () => sql`SELECT pg_sleep(0.01)`.execute(db.kysely)));
      const second = await sql<{
        pid: number;
        actor: string;
      }>`SELECT pg_backend_pid() AS pid, current_setting('nomos.actor') AS actor`.execute(tx);
      return { first: first.rows[0]!.pid, second: second.rows[0]! };
    });
    expect(seen.second.pid).toBe(seen.first);
    expect(seen.second.actor).toBe("test:tx");
  });

  it("rolls a failed transaction back on its own connection and frees it", async () => {
    const db = t.connect({ max: 1 });
    await expect(
      db.kysely.transaction().execute(async (tx) => {
        await sql`SELECT set_config('nomos.actor', 'test:rolled-back', true)`.execute(tx);
        await sql`SELECT 1 / 0`.execute(tx);
      }),
    ).rejects.toThrow(/division by zero/);
    // The pool's one connection is free again, and the setting died with the transaction.
    const after = await sql<{ actor: string | null }>`SELECT current_setting('nomos.actor', true) AS actor`.execute(db.kysely);
    expect(after.rows[0]!.actor ?? "").toBe("");
  });

  it("refuses a second query on a Kysely connection outside a transaction, by name", async () => {
    const db = t.connect({ max: 2 });
    await expect(
      db.kysely.connection().execute(async (c) => {
        await sql`SELECT 1`.execute(c);
        await sql`SELECT 2`.execute(c);
      }),
    ).rejects.toThrow(/outside a transaction runs one query on the pool.*use db.transaction\(\)/);
  });
});

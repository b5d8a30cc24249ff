// message_counts (migration 130): every session's transcript rows counted in
// the writing transaction, which the history cache relies on to prove that
// no row committed late below what it read (turns/history-cache.ts):
// backfilled for the rows already there, kept by every kind of write, and no
// row may move to another session.
import { mkdtemp, readdir, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MIGRATIONS_DIR, migrate } from "../src/db/migrate.js";
import { messageAppend } from "../src/turns/messages.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";

const t = useTestDatabase({ empty: true });

const text = (s: string) => [{ type: "text", text: s }];

describe("message_counts", () => {
  it("backfills the rows written before it", async () => {
    const db = t.db;
    const before = await mkdtemp(join(tmpdir(), "nomos-migrations-"));
    try {
      for (const f of await readdir(MIGRATIONS_DIR)) if (f < "130_") await symlink(join(MIGRATIONS_DIR, f), join(before, f));
      await migrate(db.sql, { dir: before });
    } finally {
      await rm(before, { recursive: true });
    }
    const sessions = await db.sql<{ id: string }[]>`INSERT INTO sessions (title) SELECT 's' || g FROM generate_series(1, 3) g RETURNING id`;
    await db.sql`INSERT INTO messages (session_id, kind, content)
                 SELECT s, 'system_note', '[]'::jsonb FROM unnest(${[sessions[0]!.id, sessions[0]!.id, sessions[1]!.id]}::uuid[]) s`;
    await migrate(db.sql);
    const counts = await db.sql<{ session_id: string; n: number }[]>`SELECT session_id, n::int FROM message_counts ORDER BY n DESC`;
    expect(counts).toEqual([
      { session_id: sessions[0]!.id, n: 2 },
      { session_id: sessions[1]!.id, n: 1 },
    ]);
  });

  it("counts every session's rows, however they are written, and forbids moving a row to another session", async () => {
    const db = t.db;
    await migrate(db.sql); // this file's database starts empty
    const a = await makeSession(db.kysely);
    const b = await makeSession(db.kysely);
    const counts = async () =>
      Object.fromEntries(
        (
          await db.sql<
            { session_id: string; n: string }[]
          >`SELECT session_id, n::text FROM message_counts WHERE session_id IN (${a.id}, ${b.id})`
        ).map((r) => [r.session_id, Number(r.n)]),
      );
    await db.sql`INSERT INTO messages (session_id, kind, content)
                 SELECT s, 'system_note', '[]'::jsonb FROM unnest(${[a.id, a.id, b.id]}::uuid[]) s`;
    expect(await counts()).toEqual({ [a.id]: 2, [b.id]: 1 });
    await messageAppend(db.kysely, { sessionId: b.id, turnId: null, kind: "system_note", content: text("x") });
    await expect(
      db.kysely.transaction().execute(async (tx) => {
        await messageAppend(tx, { sessionId: b.id, turnId: null, kind: "system_note", content: text("rolled back") });
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    const rows = await db.sql<{ session_id: string; n: string }[]>`SELECT session_id::text, count(*)::text AS n FROM messages
                                                                   WHERE session_id IN (${a.id}, ${b.id}) GROUP BY session_id`;
    expect(await counts()).toEqual(Object.fromEntries(rows.map((r) => [r.session_id, Number(r.n)])));
    await expect(db.sql`UPDATE messages SET session_id = ${b.id} WHERE session_id = ${a.id}`).rejects.toThrow(/never changes/);
    await db.sql`UPDATE messages SET turn_id = NULL WHERE session_id = ${a.id}`; // other columns move freely
    await db.sql`DELETE FROM messages WHERE id = (SELECT min(id) FROM messages WHERE session_id = ${a.id})`;
    expect((await counts())[a.id]).toBe(1);
    await db.sql`DELETE FROM sessions WHERE id = ${a.id}`;
    expect(await counts()).toEqual({ [b.id]: Number(rows.find((r) => r.session_id === b.id)!.n) });
  });
});

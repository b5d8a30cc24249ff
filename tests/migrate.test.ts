// Migrations: applied in order, once each, safely from several processes at
// once, and never silently over an edited history.
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MIGRATIONS_DIR, MigrationError, migrate, readMigrations } from "../src/db/migrate.js";
import { useTestDatabase } from "./helpers/database.js";

const t = useTestDatabase({ empty: true });

describe("migrate", () => {
  it("applies every migration to an empty database, in order", async () => {
    const files = await readMigrations();
    const result = await migrate(t.db.sql);
    expect(result.applied.map((m) => m.file)).toEqual(files.map((m) => m.file));
    const ledger = await t.db.sql<{ id: number }[]>`SELECT id FROM nomos_migrations ORDER BY id`;
    expect(ledger.map((r) => r.id)).toEqual(files.map((m) => m.id));
    const [{ count }] = (await t.db.sql`SELECT count(*)::int AS count FROM information_schema.tables
      WHERE table_name = 'nomos_plan_executions'`) as unknown as [{ count: number }];
    expect(count).toBe(1);
  });

  it("changes nothing when run again", async () => {
    const before = await t.db.sql`SELECT id, applied_at FROM nomos_migrations ORDER BY id`;
    const result = await migrate(t.db.sql);
    expect(result.applied).toEqual([]);
    expect(result.alreadyApplied).toBe(before.length);
    expect(await t.db.sql`SELECT id, applied_at FROM nomos_migrations ORDER BY id`).toEqual(before);
  });
});

describe("migrate, concurrently and against edits", () => {
  const fresh = useTestDatabase({ empty: true });
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "nomos-migrations-"));
    await cp(MIGRATIONS_DIR, dir, { recursive: true });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("lets four migrators race on one empty database and applies each file exactly once", async () => {
    const pools = [1, 2, 3, 4].map(() => fresh.connect({ max: 2 }));
    const results = await Promise.all(pools.map((p) => migrate(p.sql, { dir })));
    const appliedCounts = results.map((r) => r.applied.length);
    const files = await readMigrations(dir);
    // Between them they applied every file once; nobody applied one twice.
    expect(appliedCounts.reduce((a, b) => a + b, 0)).toBe(files.length);
    const all = results.flatMap((r) => r.applied.map((m) => m.id));
    expect(new Set(all).size).toBe(all.length);
    const [row] = await fresh.db.sql`SELECT count(*)::int AS n FROM nomos_migrations`;
    expect(row?.n).toBe(files.length);
  });

  it("refuses to start when an applied migration was edited, saying what to do", async () => {
    const file = join(dir, "002_domain.sql");
    const original = await readFile(file, "utf8");
    await writeFile(file, `${original}\n-- a sneaky edit\n`);
    try {
      const err = await migrate(fresh.db.sql, { dir }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MigrationError);
      expect((err as Error).message).toMatch(/002_domain\.sql was edited after it was applied/);
      expect((err as Error).message).toMatch(/new migration/);
    } finally {
      await writeFile(file, original);
    }
  });

  it("refuses a database that has a migration this code does not know", async () => {
    await fresh.db.sql`INSERT INTO nomos_migrations (id, name, checksum) VALUES (999, 'from_the_future', 'x')`;
    const err = await migrate(fresh.db.sql, { dir }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/999_from_the_future\.sql is applied to this database but missing/);
    await fresh.db.sql`DELETE FROM nomos_migrations WHERE id = 999`;
  });

  it("rolls a failing migration back whole, recording nothing", async () => {
    await writeFile(join(dir, "900_broken.sql"), "CREATE TABLE half_done (id int);\nSELECT no_such_function();\n");
    try {
      const err = await migrate(fresh.db.sql, { dir }).catch((e: unknown) => e);
      expect((err as Error).message).toMatch(/900_broken\.sql failed: function no_such_function\(\) does not exist/);
      const [ledger] = await fresh.db.sql`SELECT count(*)::int AS n FROM nomos_migrations WHERE id = 900`;
      expect(ledger?.n).toBe(0);
      const [table] = await fresh.db.sql`SELECT to_regclass('half_done') IS NULL AS gone`;
      expect(table?.gone).toBe(true);
    } finally {
      await rm(join(dir, "900_broken.sql"));
    }
  });

  it("names a file that does not follow NNN_name.sql", async () => {
    await writeFile(join(dir, "add-things.sql"), "SELECT 1;");
    try {
      await expect(readMigrations(dir)).rejects.toThrow(/add-things\.sql is not named NNN_name\.sql/);
    } finally {
      await rm(join(dir, "add-things.sql"));
    }
  });
});

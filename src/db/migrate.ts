// Forward-only migrations from db/migrations/NNN_name.sql.
//
// Invariants:
// - Each file is applied once, in number order, in its own transaction
//   together with its ledger row in nomos_migrations, so a failed migration
//   leaves neither its changes nor a record of them.
// - Every step holds one transaction-scoped advisory lock, so migrators that
//   start together (two replicas, a replica and `npm run migrate`) take turns:
//   the second sees the first one's ledger rows and applies nothing twice.
// - The ledger keeps each file's sha256. A file edited after it was applied,
//   or an applied file that is missing, stops start-up with a message saying
//   what to do: migrations that landed are never edited; write a new one.
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Sql } from "./connect.js";

export const MIGRATIONS_DIR = fileURLToPath(new URL("../../db/migrations/", import.meta.url));

/** pg_advisory_xact_lock key: the int8 of "nomos.migrate", fixed forever. */
const LOCK_KEY = 7_208_530_411_117_104n;

const FILE_NAME = /^(\d{3})_([a-z0-9_]+)\.sql$/;

export class MigrationError extends Error {
  override name = "MigrationError";
}

export interface Migration {
  id: number;
  name: string;
  file: string;
  sql: string;
  checksum: string;
}

export interface MigrateResult {
  applied: Migration[];
  alreadyApplied: number;
}

export async function readMigrations(dir: string = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".sql")).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = FILE_NAME.exec(file);
    if (!match) {
      throw new MigrationError(`db/migrations/${file} is not named NNN_name.sql (three digits, lower-case name)`);
    }
    const id = Number(match[1]);
    const previous = migrations.at(-1);
    if (previous && previous.id === id) {
      throw new MigrationError(`db/migrations/${previous.file} and ${file} share the number ${match[1]}`);
    }
    const text = await readFile(`${dir}/${file}`, "utf8");
    migrations.push({
      id,
      name: match[2] as string,
      file,
      sql: text,
      checksum: createHash("sha256").update(text).digest("hex"),
    });
  }
  return migrations;
}

interface LedgerRow {
  id: number;
  name: string;
  checksum: string;
}

function checkLedger(ledger: LedgerRow[], migrations: Migration[]): void {
  const byId = new Map(migrations.map((m) => [m.id, m]));
  for (const row of ledger) {
    const file = byId.get(row.id);
    const label = `${String(row.id).padStart(3, "0")}_${row.name}.sql`;
    if (!file) {
      throw new MigrationError(
        `migration ${label} is applied to this database but missing from db/migrations: ` +
          `this code is older than the database; run the newer version`,
      );
    }
    if (file.checksum !== row.checksum) {
      throw new MigrationError(
        `migration db/migrations/${file.file} was edited after it was applied ` +
          `(checksum ${row.checksum.slice(0, 12)} in the database, ${file.checksum.slice(0, 12)} on disk); ` +
          `applied migrations are never edited: restore the file and put the change in a new migration`,
      );
    }
  }
}

/** Applies every pending migration; safe to call from several processes at once. */
export async function migrate(sql: Sql, options: { dir?: string } = {}): Promise<MigrateResult> {
  const migrations = await readMigrations(options.dir);
  const applied: Migration[] = [];
  let alreadyApplied = 0;
  for (;;) {
    const next = await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${LOCK_KEY.toString()}::bigint)`;
      // Only when missing: the service's role (not the owner) may read the
      // ledger to learn nothing is pending, but may not create tables.
      const [ledgerExists] = await tx`SELECT to_regclass('nomos_migrations') IS NOT NULL AS present`;
      if (!ledgerExists?.present)
        await tx`
        CREATE TABLE IF NOT EXISTS nomos_migrations (
          id         integer PRIMARY KEY,
          name       text NOT NULL,
          checksum   text NOT NULL,
          applied_at timestamptz NOT NULL DEFAULT now()
        )`;
      const ledger = await tx<LedgerRow[]>`SELECT id, name, checksum FROM nomos_migrations ORDER BY id`;
      checkLedger(ledger, migrations);
      if (applied.length === 0) alreadyApplied = ledger.length;
      const done = new Set(ledger.map((r) => r.id));
      const pending = migrations.find((m) => !done.has(m.id));
      if (!pending) return undefined;
      try {
        await tx.unsafe(pending.sql);
      } catch (err) {
        throw new MigrationError(`migration db/migrations/${pending.file} failed: ${(err as Error).message}`, {
          cause: err,
        });
      }
      await tx`
        INSERT INTO nomos_migrations (id, name, checksum)
        VALUES (${pending.id}, ${pending.name}, ${pending.checksum})`;
      return pending;
    });
    if (!next) return { applied, alreadyApplied };
    applied.push(next);
  }
}

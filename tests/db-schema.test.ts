// The schema as migrations leave it, compared with a committed dump
// (tests/__snapshots__/schema.txt). A migration that changes the schema
// changes this file in the same commit, where a reviewer sees it; and
// src/db/schema.ts, the Kysely types, is updated to match.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "./helpers/database.js";

const t = useTestDatabase();

describe("schema", () => {
  it("matches the committed dump", async () => {
    const columns = await t.db.sql<{ line: string }[]>`
      SELECT format('%s.%s.%s %s%s%s', table_schema, table_name, column_name, data_type,
                    CASE WHEN is_nullable = 'NO' THEN ' not null' ELSE '' END,
                    CASE WHEN column_default IS NOT NULL THEN ' default ' || column_default ELSE '' END) AS line
        FROM information_schema.columns
       WHERE table_schema IN ('public', 'audit')
       ORDER BY table_schema, table_name, ordinal_position`;
    const indexes = await t.db.sql<{ line: string }[]>`
      SELECT indexdef AS line FROM pg_indexes WHERE schemaname IN ('public', 'audit') ORDER BY indexname`;
    const triggers = await t.db.sql<{ line: string }[]>`
      SELECT format('trigger %s on %s', tgname, tgrelid::regclass) AS line
        FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgrelid::regclass::text, tgname`;
    const dump = [...columns, ...indexes, ...triggers].map((r) => r.line).join("\n");
    await expect(`${dump}\n`).toMatchFileSnapshot("./__snapshots__/schema.txt");
  });
});

// A scratch database for a benchmark: on the server tests would use
// (TEST_DATABASE_URL, DATABASE_URL, or an embedded PostgreSQL), migrated,
// dropped afterwards.
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { connect, type Db } from "../../src/db/connect.js";
import { migrate } from "../../src/db/migrate.js";
import { startPostgresSource, withDatabase } from "../../tests/helpers/postgres-source.js";

export async function withBenchDatabase<T>(work: (db: Db, url: string) => Promise<T>): Promise<T> {
  const source = await startPostgresSource();
  const name = `nomos_bench_${randomBytes(4).toString("hex")}`;
  const admin = postgres(source.adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = withDatabase(source.adminUrl, name);
  const db = connect(url, { max: 8, applicationName: "nomos-bench" });
  try {
    await migrate(db.sql);
    return await work(db, url);
  } finally {
    await db.close();
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    await source.stop();
  }
}

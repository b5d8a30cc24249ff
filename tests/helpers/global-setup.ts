// Runs once per `vitest run`: finds a PostgreSQL (postgres-source.ts) and a
// Chromium (browser-source.ts), migrates a template database once, and
// hands both to every test file, which then clones its own fresh database
// from the template (database.ts). Teardown
// drops the template and stops whatever was started.
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import type { TestProject } from "vitest/node";
import { migrate } from "../../src/db/migrate.js";
import { findBrowser } from "./browser-source.js";
import { startPostgresSource, withDatabase } from "./postgres-source.js";

declare module "vitest" {
  export interface ProvidedContext {
    testDatabase: { adminUrl: string; template: string; sourceKind: string };
    /** The browser tests' Chromium (browser-source.ts), or why there is none. */
    browser: { path: string; from: string } | { error: string };
  }
}

export default async function setup(project: TestProject) {
  const source = await startPostgresSource();
  const template = `nomos_tpl_${randomBytes(4).toString("hex")}`;
  const admin = postgres(source.adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${template}`);
  const tpl = postgres(withDatabase(source.adminUrl, template), { max: 1, onnotice: () => {} });
  try {
    await migrate(tpl);
  } finally {
    await tpl.end();
  }
  project.provide("testDatabase", { adminUrl: source.adminUrl, template, sourceKind: source.kind });
  project.provide("browser", await findBrowser().catch((err: unknown) => ({ error: (err as Error).message })));

  return async () => {
    // Databases a crashed test file left behind, and the template.
    const leftovers = await admin<{ datname: string }[]>`
      SELECT datname FROM pg_database WHERE datname LIKE ${`${template}%`} OR datname = ${template}`;
    for (const { datname } of leftovers) await admin.unsafe(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    await admin.end();
    await source.stop();
  };
}

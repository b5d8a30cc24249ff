// Each test file gets its own fresh database, cloned from the template that
// global-setup migrated once (CREATE DATABASE ... TEMPLATE: milliseconds).
//
//   const t = useTestDatabase();          // at the top of a test file
//   it("...", async () => { await t.db.kysely.selectFrom(...) });
//
// After the file's tests, the helper closes the pools it handed out and then
// checks that nothing else is still connected to the database: a listener,
// a pool or a child process the tests forgot fails the file, naming the
// application_name of what leaked.
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, inject } from "vitest";
import { type ConnectOptions, connect, type Db } from "../../src/db/connect.js";
import { withDatabase } from "./postgres-source.js";

export interface TestDatabase {
  /** The database's name and URL, for child processes and extra connections. */
  readonly name: string;
  readonly url: string;
  /** A pool on it, closed after the file. */
  readonly db: Db;
  /** Another pool (e.g. a second "process"), also closed after the file. */
  connect(options?: ConnectOptions): Db;
}

export async function createDatabase(options: { empty?: boolean } = {}) {
  const { adminUrl, template } = inject("testDatabase");
  const name = `${template}_${randomBytes(4).toString("hex")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(options.empty ? `CREATE DATABASE ${name}` : `CREATE DATABASE ${name} TEMPLATE ${template}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  return {
    name,
    url,
    /** Fails if anything is still connected, then drops the database. */
    async drop(): Promise<void> {
      const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
      try {
        const leaked = await admin<{ application_name: string; state: string | null }[]>`
          SELECT application_name, state FROM pg_stat_activity
           WHERE datname = ${name} AND pid <> pg_backend_pid()`;
        await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        if (leaked.length > 0) {
          const names = leaked.map((r) => `${r.application_name || "(no application_name)"} [${r.state}]`);
          throw new Error(`test left ${leaked.length} connection(s) open to ${name}: ${names.join(", ")}`);
        }
      } finally {
        await admin.end();
      }
    },
  };
}

export function useTestDatabase(options: { empty?: boolean } = {}): TestDatabase {
  let created: Awaited<ReturnType<typeof createDatabase>> | undefined;
  let main: Db | undefined;
  const pools: Db[] = [];
  const need = () => {
    if (!created) throw new Error("useTestDatabase(): use it inside tests or hooks, not at import time");
    return created;
  };

  beforeAll(async () => {
    created = await createDatabase(options);
  });
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.close()));
    await created?.drop();
  });

  return {
    get name() {
      return need().name;
    },
    get url() {
      return need().url;
    },
    get db() {
      main ??= this.connect({ applicationName: "nomos-test" });
      return main;
    },
    connect(connectOptions?: ConnectOptions) {
      const pool = connect(need().url, { applicationName: "nomos-test", ...connectOptions });
      pools.push(pool);
      return pool;
    },
  };
}

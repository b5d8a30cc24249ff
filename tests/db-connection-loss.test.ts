// What our database driver does when a connection dies under it. postgres.js
// 3.4.9 is patched on install (patches/postgres+3.4.9.patch); unpatched, each
// of these tests fails: a query or a transaction waits for good, a statement
// meant for a dead transaction runs on its own on the connection the pool
// opened in its place, or the pool loses a connection until it has none.
// docs/reliability.md, "The database driver", tells the story.
//
// Invariant pinned: after a connection is lost every query settles (done or
// a clear error), nothing meant for a dead transaction runs anywhere, and a
// pool of one connection serves again as soon as the server answers.
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createConnection, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type Db, reconnectDelaySeconds } from "../src/db/connect.js";
import { assertDriverPatched, unpatchedDriverError } from "../src/db/driver-patch.js";
import { useTestDatabase } from "./helpers/database.js";
import { PgProxy } from "./helpers/pg-proxy.js";

const t = useTestDatabase();

beforeAll(async () => {
  await t.db.sql`CREATE TABLE driver_probe (note text NOT NULL)`;
});

/** Ends, from outside, every backend of the pool named `applicationName`. */
async function killBackends(applicationName: string): Promise<number> {
  const rows = await t.db.sql`
    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
     WHERE application_name = ${applicationName} AND datname = current_database()`;
  return rows.length;
}

async function notes(): Promise<string[]> {
  const rows = await t.db.sql<{ note: string }[]>`SELECT note FROM driver_probe ORDER BY note`;
  return rows.map((r) => r.note);
}

/** Until the pool answers again (its connection is reopened). */
async function answers(db: Db): Promise<void> {
  await expect
    .poll(
      () =>
        db.sql`SELECT 1`.then(
          () => true,
          () => false,
        ),
      { timeout: 10_000 },
    )
    .toBe(true);
}

describe("a connection killed inside a transaction", () => {
  it("fails the transaction's next statement with CONNECTION_CLOSED, and a pool of one connection serves the next queries", async () => {
    const db = t.connect({ max: 1, applicationName: "loss-between" });
    const transaction = db.kysely.transaction().execute(async (trx) => {
      await sql`SELECT 1`.execute(trx);
      expect(await killBackends("loss-between")).toBe(1);
      await new Promise((r) => setTimeout(r, 200));
      await sql`SELECT 2`.execute(trx);
    });
    await expect(transaction).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
    for (let i = 0; i < 5; i++) expect((await sql<{ n: number }>`SELECT ${i}::int AS n`.execute(db.kysely)).rows).toEqual([{ n: i }]);
  });

  it("never runs a Kysely transaction's later statement on the connection opened in its place", async () => {
    const db = t.connect({ max: 1, applicationName: "loss-kysely" });
    const transaction = db.kysely.transaction().execute(async (trx) => {
      await sql`INSERT INTO driver_probe VALUES ('kysely: before the kill')`.execute(trx);
      await killBackends("loss-kysely");
      // The pool's only connection is reopened for someone else meanwhile.
      await answers(db);
      await sql`INSERT INTO driver_probe VALUES ('kysely: after the kill')`.execute(trx);
    });
    await expect(transaction).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
    await answers(db);
    expect(await notes()).not.toContain("kysely: after the kill");
    expect(await notes()).not.toContain("kysely: before the kill");
  });

  it("never runs a sql.begin() callback's later statement on the connection opened in its place", async () => {
    const db = t.connect({ max: 1, applicationName: "loss-begin" });
    let late: Promise<unknown> | undefined;
    const transaction = db.sql.begin(async (tx) => {
      await tx`INSERT INTO driver_probe VALUES ('begin: before the kill')`;
      await killBackends("loss-begin");
      await answers(db);
      late = tx`INSERT INTO driver_probe VALUES ('begin: after the kill')`;
      await late;
    });
    await expect(transaction).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
    await expect.poll(() => late !== undefined, { timeout: 10_000 }).toBe(true);
    await expect(late).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
    expect(await notes()).not.toContain("begin: after the kill");
    expect(await notes()).not.toContain("begin: before the kill");
  });
});

describe("a server that drops every connection and refuses new ones for a while", () => {
  let proxy: PgProxy;
  beforeAll(async () => {
    proxy = await PgProxy.start(t.url);
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it("fails what waits meanwhile, and then a pool of one connection serves every kind of query again", async () => {
    // Nomos's own pool (connect()), reaching PostgreSQL through the relay.
    const db = connect(proxy.url, { max: 1, applicationName: "loss-proxy" });
    try {
      await sql`SELECT 1`.execute(db.kysely);
      proxy.refuse(true);
      proxy.cutAll();
      // Plain queries, Kysely queries (each on a reserved connection) and
      // transactions, all while nothing can connect: each one settles.
      const during = await Promise.allSettled([
        db.sql`SELECT 1`,
        sql`SELECT 1`.execute(db.kysely),
        sql`SELECT 2`.execute(db.kysely),
        db.kysely.transaction().execute((trx) => sql`SELECT 3`.execute(trx)),
      ]);
      expect(during.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected", "rejected"]);

      proxy.refuse(false);
      await answers(db);
      const after = await Promise.all([
        ...Array.from({ length: 10 }, (_, i) => sql<{ n: number }>`SELECT ${i}::int AS n`.execute(db.kysely).then((r) => r.rows[0]?.n)),
        ...Array.from({ length: 5 }, (_, i) =>
          db.kysely.transaction().execute((trx) => sql<{ n: number }>`SELECT ${i}::int AS n`.execute(trx).then((r) => r.rows[0]?.n)),
        ),
        db.sql<{ n: number }[]>`SELECT 99::int AS n`.then((r) => r[0]?.n),
      ]);
      expect(after).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 99]);
    } finally {
      await db.close();
    }
  });
});

describe("a connection that closes while a write is still buffered", () => {
  it("flushes its writes again once it has reconnected", async () => {
    // The close is delivered while postgres.js holds a small write back for
    // the next turn of the event loop: the moment a server's goodbye and our
    // next statement cross. The driver is given its sockets, so the test can
    // deliver that close at exactly this moment.
    const url = new URL(t.url);
    let current: Socket | undefined;
    // `socket` is a documented postgres.js option its type definitions lack.
    const options = {
      max: 1,
      onnotice: () => {},
      connect_timeout: 5,
      connection: { application_name: "loss-buffered" },
      socket: () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = createConnection({ host: url.hostname, port: Number(url.port || 5432) });
          socket.once("connect", () => {
            current = socket;
            resolve(socket);
          });
          socket.once("error", reject);
        }),
    };
    const db = postgres(t.url, options as postgres.Options<Record<string, never>>);
    try {
      await db`SELECT 1`;
      const buffered = db`SELECT 2`.execute();
      // The query reaches the connection a microtask later; its write then
      // waits for setImmediate, which cannot run before this test yields.
      await new Promise((r) => process.nextTick(r));
      const dying = current!;
      dying.emit("close", false);
      dying.destroy();
      await expect(buffered).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
      // Unpatched, the reconnect's start-up message stays in the buffer and
      // this fails with CONNECT_TIMEOUT after 5 s.
      expect(await db<{ n: number }[]>`SELECT 3::int AS n`).toEqual([{ n: 3 }]);
    } finally {
      await db.end({ timeout: 1 });
    }
  });
});

describe("a connection whose backend is ended while it fetches the array types", () => {
  // Every new connection's first statement is the driver's own query of
  // pg_type (fetch_types). A restart's fast shutdown ends the backends of
  // connections that have just opened, so some die right there. The
  // driver is given its sockets, so the test can end the backend (a real
  // pg_terminate_backend: 57P01, then the server closes) at exactly that
  // moment: when the types query is on its way out.
  let unhandled: unknown[] = [];
  const record = (reason: unknown) => unhandled.push(reason);
  beforeAll(() => {
    process.on("unhandledRejection", record);
  });
  afterAll(() => {
    process.off("unhandledRejection", record);
  });

  /** A pool whose first connection's backend is ended as it sends the types query; `ended` settles once it is. */
  function poolEndedAtTypes(applicationName: string) {
    const url = new URL(t.url);
    let armed = true;
    let ended: Promise<unknown> = Promise.resolve();
    const options = {
      max: 1,
      onnotice: () => {},
      connect_timeout: 5,
      backoff: reconnectDelaySeconds,
      connection: { application_name: applicationName },
      socket: () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = createConnection({ host: url.hostname, port: Number(url.port || 5432) });
          socket.once("connect", () => resolve(socket));
          socket.once("error", reject);
          const write = socket.write.bind(socket) as (chunk: unknown, ...rest: unknown[]) => boolean;
          socket.write = ((chunk: unknown, ...rest: unknown[]) => {
            if (armed && String(chunk).includes("pg_catalog.pg_type")) {
              armed = false;
              // The types query never reaches the server, whose backend is ended instead.
              ended = killBackends(applicationName);
              return true;
            }
            return write(chunk, ...rest);
          }) as typeof socket.write;
        }),
    };
    // `socket` is a documented postgres.js option its type definitions lack.
    const db = postgres(t.url, options as postgres.Options<Record<string, never>>);
    return { db, ended: () => ended };
  }

  it("serves a reserved connection (every Kysely query's) on the reopened one, and nothing rejects unheard", async () => {
    unhandled = [];
    const pool = poolEndedAtTypes("loss-types-reserve");
    try {
      const reserved = await pool.db.reserve();
      expect(await reserved<{ n: number }[]>`SELECT 1::int AS n`).toEqual([{ n: 1 }]);
      reserved.release();
      expect(await pool.ended()).toBe(1);
      await new Promise((r) => setImmediate(r));
      // Unpatched: the types query's promise rejects with no one to hear it
      // (write CONNECTION_CLOSED), which ends a process like Nomos's.
      expect(unhandled).toEqual([]);
    } finally {
      await pool.db.end({ timeout: 1 });
    }
  });

  it("runs a plain query that was waiting for the connection on the reopened one, not failing it with the old backend's error", async () => {
    unhandled = [];
    const pool = poolEndedAtTypes("loss-types-plain");
    try {
      // Unpatched: this fails with the ended backend's 57P01 ("terminating
      // connection due to administrator command"), replayed onto the new
      // connection, and the types query's promise rejects unheard.
      expect(await pool.db<{ n: number }[]>`SELECT 2::int AS n`).toEqual([{ n: 2 }]);
      expect(await pool.ended()).toBe(1);
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
    } finally {
      await pool.db.end({ timeout: 1 });
    }
  });
});

describe("the installed driver", () => {
  it("is the patched one, and an unpatched copy is refused with a message that says how to fix the install", async () => {
    expect(() => assertDriverPatched()).not.toThrow();
    const dir = await mkdtemp(join(tmpdir(), "nomos-driver-"));
    try {
      await cp("node_modules/postgres", dir, { recursive: true });
      expect(unpatchedDriverError(dir)).toBeNull();
      const file = join(dir, "src/connection.js");
      await writeFile(file, (await readFile(file, "utf8")).replaceAll("nomos-patch", "upstream"));
      expect(unpatchedDriverError(dir)?.message).toMatch(/src\/connection\.js lack the fix.*Run `npm install`.*not --ignore-scripts/s);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("reopening connections after failures", () => {
  it("waits at most 2 s, however many attempts failed in a row", async () => {
    const delays = [0, 1, 3, 5, 8, 50, 1000].map((failures) => reconnectDelaySeconds(failures));
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(0);
    expect(Math.max(...delays)).toBeLessThanOrEqual(2);
    expect(reconnectDelaySeconds(0)).toBeLessThanOrEqual(0.01);
  });
});

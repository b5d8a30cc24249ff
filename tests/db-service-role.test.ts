// The service's database role (migration 030, src/db/service-role.ts): as a
// login role in nomos_service it reads and writes the domain, appends to and
// reads the audit trail, and can do nothing else to the trail: DISABLE
// TRIGGER, DELETE, UPDATE, TRUNCATE, DROP and session_replication_role are
// refused. Migrations still run as the owner (NOMOS_DATABASE_OWNER_URL),
// including an owner that is no superuser.
// Roles belong to the whole server: each test makes its own, named after this
// file's database so parallel runs never collide, and drops them after.
import { spawn } from "node:child_process";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { connect, type Db } from "../src/db/connect.js";
import { migrate } from "../src/db/migrate.js";
import { migrateAsOwner, rolePowers } from "../src/db/service-role.js";
import { withActor } from "../src/db/with-actor.js";
import { createLogger } from "../src/log/logger.js";
import { messageAppend } from "../src/turns/messages.js";
import { useTestDatabase } from "./helpers/database.js";
import { withDatabase } from "./helpers/postgres-source.js";

const t = useTestDatabase();
const log = createLogger({ level: "silent" });
let appRole: string;
let app: Db;

// Test roles log in with a password: the machine's server may trust loopback,
// but the embedded one (a fresh machine's `npm test`) asks for one.
const ROLE_PASSWORD = "nomos-test-role";
const asRole = (url: string, role: string) => {
  const u = new URL(url);
  u.username = role;
  u.password = ROLE_PASSWORD;
  return u.toString();
};

beforeAll(async () => {
  appRole = `${t.name}_app`;
  await t.db.sql.unsafe(`CREATE ROLE ${appRole} LOGIN PASSWORD '${ROLE_PASSWORD}'`);
  app = connect(asRole(t.url, appRole), { applicationName: "nomos-test-app-role" });
  // The service starting with an owner URL: migrations (none pending) as the
  // owner, then the service's role joins nomos_service.
  await migrateAsOwner({ serviceSql: app.sql, ownerUrl: t.url, log });
});
afterAll(async () => {
  await app.close();
  await t.db.sql.unsafe(`DROP OWNED BY ${appRole}`);
  await t.db.sql.unsafe(`DROP ROLE IF EXISTS ${appRole}`);
});

describe("the service's role", () => {
  it("is in nomos_service, no superuser, owns nothing of the trail; the owner does", async () => {
    expect(await rolePowers(app.sql)).toEqual({ role: appRole, superuser: false, ownsAudit: false });
    expect((await rolePowers(t.db.sql)).ownsAudit).toBe(true);
  });

  it("writes the domain with its actor, reads and appends to the trail, sees no pending migration", async () => {
    const s = await withActor(app.kysely, "operator:alice", (tx) =>
      tx.insertInto("sessions").values({ title: "as the app role" }).returning("id").executeTakeFirstOrThrow(),
    );
    await withActor(app.kysely, "operator:alice", (tx) =>
      tx.updateTable("sessions").set({ title: "renamed" }).where("id", "=", s.id).execute(),
    );
    const trail = await app.kysely.selectFrom("audit.events").select(["actor", "operation"]).where("row_key", "=", s.id).execute();
    expect(trail).toEqual([
      { actor: "operator:alice", operation: "INSERT" },
      { actor: "operator:alice", operation: "UPDATE" },
    ]);
    await app.kysely.selectFrom("audit.timeline").selectAll().where("session_id", "=", s.id).execute();
    // A transcript row moves the session's message_counts (migration 130's trigger runs as the writer).
    await messageAppend(app.kysely, {
      sessionId: s.id,
      turnId: null,
      kind: "system_note",
      content: [{ type: "text", text: "hi" }],
      actor: "operator:alice",
    });
    expect(await app.sql`SELECT n::int FROM message_counts WHERE session_id = ${s.id}`).toEqual([{ n: 1 }]);
    expect((await migrate(app.sql)).applied).toEqual([]);
  });

  it("cannot disable the trail's triggers, edit, remove, empty or drop it, nor turn triggers off for its session", async () => {
    for (const statement of [
      "ALTER TABLE audit.events DISABLE TRIGGER USER",
      "ALTER TABLE audit.events DISABLE TRIGGER ALL",
      "DELETE FROM audit.events",
      "UPDATE audit.events SET actor = 'someone else'",
      "TRUNCATE audit.events",
      "DROP TABLE audit.events",
      "DROP TRIGGER audit_events_no_update_delete ON audit.events",
      "ALTER TABLE sessions DISABLE TRIGGER audit_row",
      "DROP FUNCTION audit.record() CASCADE",
      "SET session_replication_role = replica",
      "CREATE TABLE evil (x int)",
    ]) {
      const err = await app.sql.unsafe(statement).then(
        () => undefined,
        (e: Error & { code?: string }) => e,
      );
      expect(err, statement).toBeDefined();
      expect(err?.code, `${statement}: ${err?.message}`).toBe("42501");
    }
    const [count] = await t.db.sql<{ n: string }[]>`SELECT count(*) AS n FROM audit.events`;
    expect(Number(count!.n)).toBeGreaterThan(0);
  });
});

describe("migrations as an owner that is no superuser", () => {
  it("apply on an empty database, grant the service role its share, and the service role still cannot touch the trail", async () => {
    const { adminUrl } = inject("testDatabase");
    const owner = `${t.name}_own`;
    const dbName = `${t.name}_owned`;
    const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(`CREATE ROLE ${owner} LOGIN PASSWORD '${ROLE_PASSWORD}'`);
      await admin.unsafe(`CREATE DATABASE ${dbName} OWNER ${owner}`);
      const ownerUrl = asRole(withDatabase(adminUrl, dbName), owner);
      const service = connect(asRole(withDatabase(adminUrl, dbName), appRole), { max: 1, applicationName: "nomos-test-app-role" });
      try {
        // The app role is already in nomos_service (above): no grant of roles needed from this owner.
        const result = await migrateAsOwner({ serviceSql: service.sql, ownerUrl, log });
        expect(result.applied.length).toBeGreaterThan(0);
        await withActor(service.kysely, "system:test", (tx) => tx.insertInto("sessions").values({ title: "x" }).execute());
        await expect(service.sql.unsafe("DELETE FROM audit.events")).rejects.toMatchObject({ code: "42501" });
        await expect(service.sql.unsafe("ALTER TABLE audit.events DISABLE TRIGGER USER")).rejects.toMatchObject({ code: "42501" });
      } finally {
        await service.close();
      }
    } finally {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await admin.unsafe(`DROP ROLE IF EXISTS ${owner}`);
      await admin.end();
    }
  });
});

describe("npm run migrate", () => {
  it("runs as NOMOS_DATABASE_OWNER_URL and lets DATABASE_URL's role into nomos_service, as the service does at start", async () => {
    const cliRole = `${t.name}_cli`;
    await t.db.sql.unsafe(`CREATE ROLE ${cliRole} LOGIN PASSWORD '${ROLE_PASSWORD}'`);
    try {
      const code = await new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, ["--import", "tsx", "src/db/migrate-cli.ts"], {
          env: { PATH: process.env.PATH, DATABASE_URL: asRole(t.url, cliRole), NOMOS_DATABASE_OWNER_URL: t.url, LOG_LEVEL: "silent" },
          stdio: "ignore",
        });
        child.on("exit", resolve);
      });
      expect(code).toBe(0);
      const [row] = await t.db.sql<{ member: boolean }[]>`SELECT pg_has_role(${cliRole}, 'nomos_service', 'MEMBER') AS member`;
      expect(row!.member).toBe(true);
    } finally {
      await t.db.sql.unsafe(`DROP OWNED BY ${cliRole}`);
      await t.db.sql.unsafe(`DROP ROLE IF EXISTS ${cliRole}`);
    }
  });
});

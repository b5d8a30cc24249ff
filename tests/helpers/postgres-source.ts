// Where the test suite's PostgreSQL comes from, in this order:
//   1. TEST_DATABASE_URL or DATABASE_URL, when set (CI points at the
//      machine's server);
//   2. a testcontainers PostgreSQL, when a Docker engine answers;
//   3. an embedded PostgreSQL in a temporary directory.
// Each source gives an admin URL (a database we may CREATE DATABASE from)
// and a stop() that leaves nothing running.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "../../src/db/embedded.js";
import { createLogger } from "../../src/log/logger.js";

export interface PostgresSource {
  kind: "url" | "testcontainers" | "embedded";
  adminUrl: string;
  stop(): Promise<void>;
}

/** The same server, another database. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function fromTestcontainers(): Promise<PostgresSource | undefined> {
  try {
    const { getContainerRuntimeClient } = await import("testcontainers");
    await getContainerRuntimeClient();
  } catch {
    return undefined; // no Docker engine here
  }
  const { PostgreSqlContainer } = await import("@testcontainers/postgresql");
  const container = await new PostgreSqlContainer("postgres:17-alpine").start();
  return {
    kind: "testcontainers",
    adminUrl: withDatabase(container.getConnectionUri(), "postgres"),
    stop: async () => {
      await container.stop();
    },
  };
}

async function fromEmbedded(): Promise<PostgresSource> {
  const dir = await mkdtemp(join(tmpdir(), "nomos-test-pg-"));
  const { chmod } = await import("node:fs/promises");
  await chmod(dir, 0o755); // the server may run as `postgres` when we are root
  const log = createLogger({ level: "warn", format: "json" });
  const pg = await startEmbeddedPostgres({ dataDir: dir, log });
  return {
    kind: "embedded",
    adminUrl: withDatabase(pg.url, "postgres"),
    stop: async () => {
      await pg.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function startPostgresSource(env = process.env): Promise<PostgresSource> {
  const url = env.TEST_DATABASE_URL || env.DATABASE_URL;
  if (url) return { kind: "url", adminUrl: url, stop: async () => {} };
  return (await fromTestcontainers()) ?? (await fromEmbedded());
}

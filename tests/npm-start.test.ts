// The README's start command, as a person runs it: `npm start` in a copy of
// the project with no DATABASE_URL, so Nomos starts its embedded PostgreSQL
// under NOMOS_DATA_DIR (a scratch folder, mode 0700 as mkdtemp makes it:
// run as root, the server's user cannot reach it, which is the case of a
// clone in /root). Ctrl-C (SIGINT to the process group, as a terminal sends
// it) must stop the embedded server too, and a second start must find the
// data the first one left.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cp, lstat, mkdtemp, readlink, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { echoPolicy, type MessagesDouble, startMessagesDouble } from "../src/model-double/messages-double.js";
import { processAlive } from "./helpers/demo-process.js";

const ROOT = resolve(import.meta.dirname, "..");
const ADMIN = { username: "alice", password: "a long passphrase" };

let scratch: string;
let dataDir: string;
let double: MessagesDouble;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "nomos-npm-start-"));
  for (const entry of ["package.json", "tsconfig.json", "src", "db"])
    await cp(join(ROOT, entry), join(scratch, entry), { recursive: true });
  await symlink(join(ROOT, "node_modules"), join(scratch, "node_modules"));
  dataDir = join(scratch, ".nomos");
  double = await startMessagesDouble({ policy: echoPolicy });
});

afterAll(async () => {
  await double?.close();
  // As root the data may live under /var/lib/nomos, NOMOS_DATA_DIR/pg linking there.
  const link = join(dataDir, "pg");
  if ((await lstat(link).catch(() => undefined))?.isSymbolicLink())
    await rm(dirname(await readlink(link)), { recursive: true, force: true });
  await rm(scratch, { recursive: true, force: true });
});

interface Started {
  child: ChildProcess;
  url: string;
  lines: Record<string, unknown>[];
  /** Every process of it has let go of its output (npm dies of SIGINT at once; Nomos drains after it). */
  finished: Promise<void>;
}

/** `npm start` in its own process group, as from a terminal; resolves once it listens. */
async function npmStart(): Promise<Started> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? scratch,
    PORT: "0",
    NOMOS_LOG_FORMAT: "json",
    NOMOS_DATA_DIR: dataDir,
    ANTHROPIC_API_KEY: "sk-ant-npm-start-test",
    ANTHROPIC_BASE_URL: double.url,
    NOMOS_ADMIN_USER: ADMIN.username,
    NOMOS_ADMIN_PASSWORD: ADMIN.password,
  };
  const child = spawn("npm", ["start", "--silent"], { cwd: scratch, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const lines: Record<string, unknown>[] = [];
  const other: string[] = [];
  createInterface({ input: child.stderr! }).on("line", (l) => other.push(l));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  const output = new Promise<void>((done) => child.stdout!.once("close", () => done()));
  const url = await new Promise<string>((done, fail) => {
    createInterface({ input: child.stdout! }).on("line", (l) => {
      try {
        const line = JSON.parse(l) as Record<string, unknown>;
        lines.push(line);
        if (line.msg === "Nomos is listening") done(String(line.url));
      } catch {
        other.push(l);
      }
    });
    void exited.then((code) =>
      fail(new Error(`npm start exited with ${code} before listening:\n${other.join("\n")}\n${JSON.stringify(lines)}`)),
    );
  });
  return { child, url, lines, finished: output };
}

async function signIn(url: string): Promise<string> {
  const res = await fetch(`${url}/api/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(ADMIN),
  });
  expect(res.status).toBe(200);
  const cookie = res.headers.get("set-cookie") ?? "";
  expect(cookie).not.toBe("");
  return cookie.split(";")[0]!;
}

/** The postmaster's pid, from the data directory it runs on. */
function postmasterPid(): number {
  const file = join(dataDir, "pg", "postmaster.pid");
  return Number(readFileSync(file, "utf8").split("\n")[0]);
}

/** After Ctrl-C: Nomos drained and stopped the embedded server, which left no lock file behind. */
async function stoppedCleanly(nomos: Started, postmaster: number): Promise<void> {
  await nomos.finished;
  expect(nomos.lines.map((l) => l.msg)).toContain("embedded PostgreSQL stopped");
  expect(processAlive(postmaster)).toBe(false);
  expect(existsSync(join(dataDir, "pg", "postmaster.pid"))).toBe(false);
}

describe("npm start with no DATABASE_URL (the README's two commands)", () => {
  let sessionId = "";

  it("starts the embedded PostgreSQL, serves /healthz, signs in, reaches the model, and Ctrl-C stops it all", async () => {
    const nomos = await npmStart();
    let pid = 0;
    try {
      expect(nomos.lines.find((l) => l.msg === "database ready")).toMatchObject({ source: "embedded" });
      expect(nomos.lines.some((l) => l.msg === "initialising the embedded PostgreSQL (first start)")).toBe(true);
      pid = postmasterPid();
      expect(processAlive(pid)).toBe(true);

      const health = await fetch(`${nomos.url}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: "ok" });

      const cookie = await signIn(nomos.url);
      // A browser sends its Origin with a POST; the server refuses one without it.
      const headers = { cookie, origin: nomos.url, "content-type": "application/json" };
      const created = await fetch(`${nomos.url}/api/sessions`, { method: "POST", headers, body: JSON.stringify({ title: "npm start" }) });
      expect(created.status).toBe(201);
      sessionId = ((await created.json()) as { id: string }).id;
      const sent = await fetch(`${nomos.url}/api/sessions/${sessionId}/messages`, {
        method: "POST",
        headers,
        body: JSON.stringify({ text: "hello from npm start" }),
      });
      expect(sent.status).toBe(202);
      await expect
        .poll(() => double.requests.some((r) => JSON.stringify(r.messages).includes("hello from npm start")), { timeout: 20_000 })
        .toBe(true);
    } finally {
      process.kill(-nomos.child.pid!, "SIGINT");
    }
    await stoppedCleanly(nomos, pid);
  }, 120_000);

  it("a second start reuses the data: no initdb, the operator and the session are there", async () => {
    const nomos = await npmStart();
    const pid = postmasterPid();
    try {
      expect(nomos.lines.some((l) => l.msg === "initialising the embedded PostgreSQL (first start)")).toBe(false);
      expect(nomos.lines.find((l) => l.msg === "database ready")).toMatchObject({ source: "embedded", applied: [] });
      const cookie = await signIn(nomos.url);
      const res = await fetch(`${nomos.url}/api/sessions/${sessionId}`, { headers: { cookie } });
      expect(res.status).toBe(200);
      expect(JSON.stringify(await res.json())).toContain("hello from npm start");
    } finally {
      process.kill(-nomos.child.pid!, "SIGINT");
    }
    await stoppedCleanly(nomos, pid);
  }, 120_000);
});

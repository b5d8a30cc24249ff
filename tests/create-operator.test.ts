// Getting the first operator: `npm run create-operator` (password on stdin),
// and NOMOS_ADMIN_USER/NOMOS_ADMIN_PASSWORD on the service's first start.
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { passwordVerify } from "../src/auth/password.js";
import { useTestDatabase } from "./helpers/database.js";
import { startService } from "./helpers/service-process.js";

const t = useTestDatabase();

function createOperator(username: string, password: string, args: string[] = []) {
  return new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/auth/create-operator-cli.ts", ...args, username], {
      env: { PATH: process.env.PATH, DATABASE_URL: t.url, LOG_LEVEL: "silent" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.stdin.end(`${password}\n`);
    child.on("exit", (code) => resolve({ code, out, err }));
  });
}

describe("npm run create-operator", () => {
  it("creates an operator with an scrypt hash of the password read from stdin", async () => {
    const r = await createOperator("dana", "dana's long password");
    expect(r).toMatchObject({ code: 0, out: 'operator "dana" created (admin)\n' });
    const row = await t.db.kysely.selectFrom("operators").selectAll().where("username", "=", "dana").executeTakeFirstOrThrow();
    expect(await passwordVerify("dana's long password", row.password_hash)).toBe(true);
  });

  it("--role viewer makes a viewer (the first operator was an admin, later ones are operators by default)", async () => {
    expect(await createOperator("vic", "tangerine orbit kettle", ["--role", "viewer"])).toMatchObject({
      code: 0,
      out: 'operator "vic" created (viewer)\n',
    });
    expect(await createOperator("olga", "tangerine orbit kettle")).toMatchObject({ code: 0, out: 'operator "olga" created (operator)\n' });
    const bad = await createOperator("root", "tangerine orbit kettle", ["--role", "root"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toBe('--role must be one of viewer, operator, admin (got "root")\n');
    const rows = await t.db.kysely.selectFrom("operators").select(["username", "role"]).orderBy("created_at").execute();
    expect(rows).toEqual([
      { username: "dana", role: "admin" },
      { username: "vic", role: "viewer" },
      { username: "olga", role: "operator" },
    ]);
  });

  it("refuses a taken name and a short password with a message, exit 1", async () => {
    const taken = await createOperator("dana", "another long password");
    expect(taken.code).toBe(1);
    expect(taken.err).toBe('an operator named "dana" already exists\n');
    const short = await createOperator("erin", "short");
    expect(short.code).toBe(1);
    expect(short.err).toBe("password must be at least 8 characters\n");
  });
});

describe("the first operator from the environment", () => {
  it("is created on start when there is none, and is the only one; the page is served", async () => {
    await t.db.kysely.deleteFrom("operators").execute();
    const service = await startService({
      DATABASE_URL: t.url,
      NOMOS_ADMIN_USER: "admin",
      NOMOS_ADMIN_PASSWORD: "admin password",
    });
    try {
      const rows = await t.db.kysely.selectFrom("operators").select("username").execute();
      expect(rows.map((r) => r.username)).toEqual(["admin"]);
      const login = await fetch(`${service.url}/api/login`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: service.url },
        body: JSON.stringify({ username: "admin", password: "admin password" }),
      });
      expect(login.status).toBe(200);
      const page = await fetch(`${service.url}/`);
      expect(await page.text()).toMatch(/<script type="module" src="\/assets\/app\.[0-9a-f]+\.js">/);
    } finally {
      expect(await service.stop()).toBe(0);
    }
  });
});

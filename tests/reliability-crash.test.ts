// The service killed with SIGKILL in the middle of a turn, then started
// again on the same database. Two commands are under way: one finished
// before the kill (its continuation waits behind the running turn) and one
// still running on the node (its runner dies with the process). Invariant
// after the restart: the interrupted turn is marked interrupted; the command
// whose runner died is reported failed as lost and never run again (the SSH
// double's log shows each command exactly once); both results reach the
// agent, each exactly once; nothing is left pending.
// Leases are 120 s (turns) and 30 s (executions); the test ages them in the
// database instead of waiting, as if the restart came that much later.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DoubleRequest, type MessagesDouble, startMessagesDouble } from "../src/model-double/messages-double.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";
import { type ServiceProcess, startService } from "./helpers/service-process.js";
import { SshTestHost } from "./helpers/ssh-test-host.js";

const t = useTestDatabase();
const TOKEN = "crash-test-token-0123456789";
let host: SshTestHost;
let double: MessagesDouble;
let dir: string;
let env: Record<string, string>;
const services: ServiceProcess[] = [];
const release: (() => void)[] = [];

beforeAll(async () => {
  host = await SshTestHost.start();
  host.handle("apt-get update", (ctx) => {
    ctx.out("Hit:1 http://deb.debian.org/debian bookworm InRelease\n");
    return 0;
  });
  host.handle("apt-get install -y nginx", async (ctx) => {
    ctx.out("Reading package lists...\n");
    await ctx.sleep(120_000);
  });
  dir = await mkdtemp(join(tmpdir(), "nomos-crash-"));
  await writeFile(join(dir, "targets.json"), JSON.stringify([host.targetsFileEntry()]));
  double = await startMessagesDouble();
  env = {
    DATABASE_URL: t.url,
    ANTHROPIC_API_KEY: "sk-ant-test-crash",
    ANTHROPIC_BASE_URL: double.url,
    NOMOS_TARGETS_FILE: join(dir, "targets.json"),
    NOMOS_API_TOKEN: TOKEN,
    NOMOS_SWEEP_SECONDS: "1",
    NOMOS_DATA_DIR: dir,
  };
});
afterAll(async () => {
  for (const r of release) r();
  await Promise.all(services.map((s) => s.stop()));
  await double?.close();
  await host?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const notesIn = (r: DoubleRequest) => JSON.stringify(r.messages).match(/execution [0-9a-f-]{36} (completed|failed)/g) ?? [];

describe("SIGKILL mid-turn, then a restart", () => {
  it("marks the turn interrupted, re-runs nothing, and delivers every result exactly once", async () => {
    const s = await makeSession(t.db.kysely);
    await t.db.kysely
      .insertInto("assent_windows")
      .values({ session_id: s.id, opened_by: "operator:alice", scope_targets: ["pve1"], expires_at: new Date(Date.now() + 30 * 60_000) })
      .execute();
    const never = new Promise<void>((r) => release.push(r));
    double.setPolicy((req) =>
      req.index === 0
        ? {
            content: [
              { type: "tool_use", id: "toolu_upd", name: "request_execution", input: { target: "pve1", command: "apt-get update" } },
              {
                type: "tool_use",
                id: "toolu_ins",
                name: "request_execution",
                input: { target: "pve1", command: "apt-get install -y nginx" },
              },
            ],
          }
        : { content: [{ type: "text", text: "never sent" }], hold: never },
    );
    const a = await startService(env);
    services.push(a);
    const res = await fetch(`${a.url}/api/sessions/${s.id}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "update and install nginx on pve1" }),
    });
    expect(res.status).toBe(202);
    // Mid-turn: the model is answering its second call, apt-get update is done, the install runs.
    await expect.poll(() => double.requests.length, { timeout: 20_000 }).toBe(2);
    await expect
      .poll(
        async () =>
          (
            await t.db.kysely
              .selectFrom("executions")
              .select(["command", "status"])
              .where("session_id", "=", s.id)
              .orderBy("command")
              .execute()
          ).map((e) => `${e.command}:${e.status}`),
        { timeout: 20_000 },
      )
      .toEqual(["apt-get install -y nginx:running", "apt-get update:completed"]);
    a.child.kill("SIGKILL");
    await new Promise((r) => a.child.once("exit", r));
    // The operator's turn was running; apt-get update's continuation may already be queued behind it.
    const atKill = (
      await t.db.kysely.selectFrom("turns").select("status").where("session_id", "=", s.id).orderBy("created_at").execute()
    ).map((r) => r.status);
    expect(atKill[0]).toBe("running");
    expect(atKill.slice(1).every((st) => st === "queued")).toBe(true);

    // Later: the leases have run out.
    await sql`UPDATE turns SET lease_expires_at = now() - interval '1 second' WHERE status = 'running'`.execute(t.db.kysely);
    await sql`UPDATE executions SET lease_expires_at = now() - interval '1 second' WHERE status = 'running'`.execute(t.db.kysely);
    double.setPolicy(() => ({ content: [{ type: "text", text: "Noted." }] }));
    const before = double.requests.length;
    const b = await startService(env);
    services.push(b);

    await expect
      .poll(
        async () => {
          // Claimed is not enough: the turn carrying the result must be queued (delivered_turn_id) and done.
          const pending = await t.db.kysely
            .selectFrom("nomos_plan_executions")
            .select("execution_id")
            .where("session_id", "=", s.id)
            .where("delivered_turn_id", "is", null)
            .execute();
          const busy = await t.db.kysely
            .selectFrom("turns")
            .select("id")
            .where("session_id", "=", s.id)
            .where("status", "in", ["queued", "running"])
            .execute();
          return pending.length + busy.length;
        },
        { timeout: 30_000 },
      )
      .toBe(0);

    const turns = await t.db.kysely
      .selectFrom("turns")
      .select(["status", "kind", "error"])
      .where("session_id", "=", s.id)
      .orderBy("created_at")
      .execute();
    expect(turns[0]).toMatchObject({ status: "interrupted", kind: "operator" });
    expect(turns.slice(1).map((tr) => `${tr.kind}:${tr.status}${tr.error ? ` (${tr.error})` : ""}`)).toEqual(
      turns.slice(1).map(() => "continuation:completed"),
    );
    const executions = await t.db.kysely.selectFrom("executions").selectAll().where("session_id", "=", s.id).orderBy("command").execute();
    expect(executions.map((e) => [e.command, e.status])).toEqual([
      ["apt-get install -y nginx", "failed"],
      ["apt-get update", "completed"],
    ]);
    expect(executions[0]!.error).toMatch(/lost|runner/i);
    // Each command reached the node exactly once.
    expect(host.log.filter((l) => l.command === "apt-get update")).toHaveLength(1);
    expect(host.log.filter((l) => l.command === "apt-get install -y nginx")).toHaveLength(1);
    // Each result was delivered exactly once (one system note names it), and
    // the model, asked again by the new process, saw it.
    const notes = JSON.stringify(
      (
        await t.db.kysely
          .selectFrom("messages")
          .select("content")
          .where("session_id", "=", s.id)
          .where("kind", "=", "system_note")
          .execute()
      ).map((m) => m.content),
    );
    for (const e of executions) expect(notes.split(`execution ${e.id} `).length - 1, e.command).toBe(1);
    const after = double.requests.slice(before);
    expect(after.length).toBeGreaterThan(0);
    const seen = after.flatMap(notesIn);
    for (const e of executions)
      expect(
        seen.some((n) => n.includes(e.id)),
        e.command,
      ).toBe(true);
  }, 90_000);
});

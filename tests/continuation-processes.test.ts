// The event loop end to end, through real service processes (src/main.ts,
// as `npm start` runs it): an operator asks for an asynchronous step, the
// runner of either process runs it over SSH, and when it finishes the
// system — not the operator — starts exactly one continuation turn, even
// with two processes listening on one database.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DoubleRequest, type MessagesDouble, startMessagesDouble } from "../src/model-double/messages-double.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeWindow } from "./helpers/factories.js";
import { type ServiceProcess, startService } from "./helpers/service-process.js";
import { SshTestHost } from "./helpers/ssh-test-host.js";

const t = useTestDatabase();
const TOKEN = "test-token-0123456789abcdef";

/** The text of the newest user-role message (operator words or system notes). */
function lastUserText(req: DoubleRequest): string {
  const last = [...req.messages].reverse().find((m) => m.role === "user");
  const content = last?.content;
  if (typeof content === "string") return content;
  return (content as { type: string; text?: string; content?: unknown }[])
    .map((b) => (b.type === "text" ? b.text : JSON.stringify(b.content ?? "")))
    .join("\n");
}

/**
 * A model that queues one asynchronous step when asked, ends its turn, and
 * when it is told the step finished, says so: it decides only from what the
 * conversation shows it.
 */
function asyncStepModel(req: DoubleRequest) {
  const text = lastUserText(req);
  const finished = /execution ([0-9a-f-]{36}) (completed|failed)/.exec(text);
  if (finished) return { content: [{ type: "text" as const, text: `The build ${finished[2]}: ${finished[1]}.` }] };
  if (text.includes("queued")) return { content: [{ type: "text" as const, text: "Queued; I'll continue when it finishes." }] };
  return {
    content: [
      {
        type: "tool_use" as const,
        name: "request_execution",
        input: { target: "pve1", command: "sleep 1; echo build done", description: "the slow build" },
      },
    ],
  };
}

let host: SshTestHost;
let model: MessagesDouble;
let dir: string;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  host = await SshTestHost.start();
  model = await startMessagesDouble({ policy: asyncStepModel });
  dir = await mkdtemp(join(tmpdir(), "nomos-processes-"));
  await writeFile(join(dir, "targets.json"), JSON.stringify([host.targetsFileEntry()]));
  const env = {
    DATABASE_URL: t.url,
    NOMOS_TARGETS_FILE: join(dir, "targets.json"),
    ANTHROPIC_API_KEY: "sk-ant-test-not-a-real-key",
    ANTHROPIC_BASE_URL: model.url,
    NOMOS_API_TOKEN: TOKEN,
  };
  // One migrates first, so the second starts on a ready database.
  services.push(await startService(env));
  services.push(await startService(env));
});

afterAll(async () => {
  for (const s of services) await s.stop();
  await model?.close();
  await host?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function api(service: ServiceProcess, method: string, path: string, body?: unknown) {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("two service processes on one database", () => {
  it("turn one finished asynchronous execution into exactly one continuation turn", async () => {
    const [a] = services as [ServiceProcess, ServiceProcess];
    const created = await api(a, "POST", "/api/sessions", { title: "async build" });
    expect(created.status).toBe(201);
    const sessionId = String(created.body.id);
    await makeWindow(t.db.kysely, sessionId); // the operator approved earlier: the window is open

    const sent = await api(a, "POST", `/api/sessions/${sessionId}/messages`, { text: "run the slow build" });
    expect(sent.status).toBe(202);

    const reply = await until("the agent's word that the build finished", async () => {
      const row = await t.db.kysely
        .selectFrom("messages")
        .select("content")
        .where("session_id", "=", sessionId)
        .where("kind", "=", "assistant")
        .orderBy("id", "desc")
        .executeTakeFirst();
      const text = JSON.stringify(row?.content ?? "");
      return text.includes("The build completed") ? text : undefined;
    });
    const execution = await t.db.kysely.selectFrom("executions").selectAll().where("session_id", "=", sessionId).executeTakeFirstOrThrow();
    expect(reply).toContain(execution.id);
    expect(execution).toMatchObject({ status: "completed", exit_code: 0, mode: "async" });

    // Both processes heard the NOTIFY; one claimed it. Give the other time to misbehave.
    await new Promise((r) => setTimeout(r, 1500));
    const turns = await t.db.kysely
      .selectFrom("turns")
      .select(["kind", "status", "owner"])
      .where("session_id", "=", sessionId)
      .orderBy("created_at")
      .execute();
    expect(turns.map((x) => [x.kind, x.status])).toEqual([
      ["operator", "completed"],
      ["continuation", "completed"],
    ]);
    const ledger = await t.db.kysely
      .selectFrom("nomos_plan_executions")
      .selectAll()
      .where("execution_id", "=", execution.id)
      .executeTakeFirstOrThrow();
    expect(ledger.continued_at).not.toBeNull();
    expect(ledger.delivered_turn_id).not.toBeNull();

    // The host ran the command once; the model was told once.
    expect(host.log.filter((c) => c.command.includes("echo build done"))).toHaveLength(1);
    const told = model.requests.filter((r) => lastUserText(r).includes(`execution ${execution.id} completed`));
    expect(told).toHaveLength(1);
    const operatorMessages = await t.db.kysely
      .selectFrom("messages")
      .select("id")
      .where("session_id", "=", sessionId)
      .where("kind", "=", "operator")
      .execute();
    expect(operatorMessages).toHaveLength(1);
  });

  it("report the listener and the sweep in /healthz", async () => {
    for (const s of services) {
      const res = await fetch(`${s.url}/healthz`);
      const body = (await res.json()) as { checks: Record<string, { ok: boolean; connected?: boolean }> };
      expect(res.status).toBe(200);
      expect(body.checks.listener).toMatchObject({ ok: true, connected: true });
      expect(body.checks.sweep?.ok).toBe(true);
    }
  });

  it("each hold one LISTEN connection, named nomos-listener, for every channel", async () => {
    const rows = await t.db.sql<{ application_name: string; n: number }[]>`
      SELECT application_name, count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND application_name IN ('nomos-listener', 'nomos-listen', 'nomos-events')
       GROUP BY application_name`;
    expect(rows).toEqual([{ application_name: "nomos-listener", n: services.length }]);
  });
});

// A turn cut off by a database outage is resumed once, by itself
// (src/turns/resume.ts). The outage is real: the turn's pool reaches
// PostgreSQL through a relay that, while the turn runs, drops every
// connection and refuses new ones for half a second.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentTurn } from "../src/agent/loop.js";
import { connect, type Db } from "../src/db/connect.js";
import { createLogger } from "../src/log/logger.js";
import { scriptedPolicy } from "../src/model-double/messages-double.js";
import { RESUME_REASON } from "../src/turns/resume.js";
import { Turns } from "../src/turns/turns.js";
import { useAgentHarness } from "./helpers/agent-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";
import { PgProxy } from "./helpers/pg-proxy.js";

const t = useTestDatabase();
const h = useAgentHarness(t);
let proxy: PgProxy;
let proxied: Db;
let turns: Turns;
/** Turns in which the next run loses the database at its start. */
let outagesLeft = 0;

beforeAll(async () => {
  proxy = await PgProxy.start(t.url);
  proxied = connect(proxy.url, { max: 4, applicationName: "nomos-test-proxied" });
  turns = new Turns({
    db: proxied.kysely,
    runTurn: async (ctx) => {
      if (outagesLeft > 0) {
        outagesLeft--;
        proxy.refuse(true);
        proxy.cutAll();
        setTimeout(() => proxy.refuse(false), 500);
      }
      return agentTurn({ ...h.agentDeps, db: proxied.kysely }, ctx);
    },
    approvals: { ...h.approvalDeps, db: proxied.kysely },
    log: createLogger({ level: "silent" }),
    owner: "test-resume",
    flushMs: 5,
  });
});
afterAll(async () => {
  await turns?.stop();
  await proxied?.close();
  await proxy?.close();
});

const turnsOf = (sessionId: string) =>
  t.db.kysely
    .selectFrom("turns")
    .select(["kind", "status", "error", "input"])
    .where("session_id", "=", sessionId)
    .orderBy("created_at")
    .execute();

describe("a turn cut off by a database outage", () => {
  it("ends failed, and a continuation resumes it once the database is back, telling the model why", async () => {
    const s = await makeSession(t.db.kysely);
    h.double.setPolicy(scriptedPolicy([{ content: [{ type: "text", text: "Picking up where I stopped." }] }]));
    outagesLeft = 1;
    await turns.chat(s.id, "check pve1 please", "operator:alice", { mayConfirmDestructive: true });
    await expect.poll(async () => (await turnsOf(s.id)).map((r) => r.status), { timeout: 30_000 }).toEqual(["failed", "completed"]);

    const [cut, resumed] = await turnsOf(s.id);
    expect(cut!.error).toMatch(/CONNECTION_|ECONN/);
    expect(resumed!.kind).toBe("continuation");
    expect((resumed!.input as { reason: string }).reason).toBe(RESUME_REASON);
    // The model saw the operator's message and the note saying what happened.
    const sent = JSON.stringify(h.double.requests.at(-1)!.messages);
    expect(sent).toContain("check pve1 please");
    expect(sent).toContain("cut off because the database became unavailable");
    expect(h.double.requests).toHaveLength(1);
  });

  it("is resumed only once: a resume cut off too waits for the operator", async () => {
    const s = await makeSession(t.db.kysely);
    h.double.setPolicy(scriptedPolicy([{ content: [{ type: "text", text: "Done." }] }]));
    const before = h.double.requests.length;
    outagesLeft = 2;
    await turns.chat(s.id, "check pve2 please", "operator:alice", { mayConfirmDestructive: true });
    await expect.poll(async () => (await turnsOf(s.id)).map((r) => r.status), { timeout: 30_000 }).toEqual(["failed", "failed"]);
    await turns.idle(s.id);
    expect((await turnsOf(s.id)).map((r) => r.status)).toEqual(["failed", "failed"]);
    expect(h.double.requests.length).toBe(before);

    // The operator's next message runs as usual.
    await turns.chat(s.id, "try again", "operator:alice", { mayConfirmDestructive: true });
    await expect
      .poll(async () => (await turnsOf(s.id)).map((r) => r.status), { timeout: 30_000 })
      .toEqual(["failed", "failed", "completed"]);
  });
});

// A tool call's surroundings for the tool tests (tests/tool-*.test.ts): a
// Proxmox node target pve1, a session with a queued turn, the real database
// and the executions port with the host's replies scripted.
import type { ToolCallContext, ToolRunDeps } from "../../src/agent/tools/tool.js";
import { EventWriter } from "../../src/events/event-writer.js";
import type { TestDatabase } from "./database.js";
import { dbExecutionsPort, makeNodeTarget } from "./db-executions-port.js";
import { makeSession } from "./factories.js";

export async function toolCallSetup(
  t: TestDatabase,
): Promise<{ deps: ToolRunDeps & { executions: ReturnType<typeof dbExecutionsPort> }; ctx: ToolCallContext }> {
  const known = await t.db.kysely.selectFrom("targets").select("name").where("name", "=", "pve1").executeTakeFirst();
  if (!known) await makeNodeTarget(t.db.kysely, "pve1");
  const s = await makeSession(t.db.kysely);
  const turn = await t.db.kysely
    .insertInto("turns")
    .values({ session_id: s.id, kind: "operator", input: {}, status: "queued" })
    .returning("id")
    .executeTakeFirstOrThrow();
  const deps = { db: t.db.kysely, executions: dbExecutionsPort(t.db.kysely), approvalMinutes: 60 };
  const ctx = {
    sessionId: s.id,
    turnId: turn.id,
    signal: new AbortController().signal,
    writer: new EventWriter(t.db.kysely, s.id, turn.id),
  };
  return { deps, ctx };
}

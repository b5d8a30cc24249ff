// The get_execution_status tool (src/agent/tools/get-execution-status.ts):
// the note the model reads, capped, and only the session's own executions.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { toolRun } from "../src/agent/tool-runner.js";
import { NOTE_OUTPUT_CHARS } from "../src/executions/execution-note.js";
import { useTestDatabase } from "./helpers/database.js";
import { toolCallSetup } from "./helpers/tool-call.js";

const t = useTestDatabase();

describe("get_execution_status", () => {
  it("get_execution_status reads the session's execution as the capped note the model reads everywhere", async () => {
    const { deps, ctx } = await toolCallSetup(t);
    const e = await t.db.kysely
      .insertInto("executions")
      .values({
        session_id: ctx.sessionId,
        target: "pve1",
        command: "journalctl -u nginx",
        risk: "read_only",
        mode: "async",
        status: "completed",
        exit_code: 0,
        approved_at: new Date(),
        started_at: new Date(),
        finished_at: new Date(),
        stdout: "x".repeat(NOTE_OUTPUT_CHARS + 10),
        stderr: "",
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    const out = await toolRun(deps, ctx, "get_execution_status", { execution_id: e.id });
    expect(out.content.startsWith(`execution ${e.id} completed (exit 0) on pve1: journalctl -u nginx\n`)).toBe(true);
    expect(out.content).toContain(`last ${NOTE_OUTPUT_CHARS} characters; 10 earlier dropped`);
    expect(await toolRun(deps, ctx, "get_execution_status", { execution_id: randomUUID() })).toMatchObject({ isError: true });
  });
});

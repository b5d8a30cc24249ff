// The agent's tool registry (src/agent/tools.ts) and its tools, run against
// the real database with the host's replies scripted: names are DESIGN.md's,
// each definition the model sees is built from the schema that validates its
// input, and a tool's result is what the runner hands back to the model.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { toolRun } from "../src/agent/tool-runner.js";
import { TOOL_NAMES, TOOLS, toolDefinitions } from "../src/agent/tools.js";
import { EventWriter } from "../src/events/event-writer.js";
import { NOTE_OUTPUT_CHARS } from "../src/executions/execution-note.js";
import { useTestDatabase } from "./helpers/database.js";
import { dbExecutionsPort, makeNodeTarget } from "./helpers/db-executions-port.js";
import { makeSession } from "./helpers/factories.js";

const t = useTestDatabase();

async function setup() {
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

describe("the tool registry", () => {
  it("names DESIGN.md's tools, once each, in the order the model sees them", () => {
    expect(TOOL_NAMES).toEqual([
      "list_targets",
      "run",
      "request_execution",
      "get_execution_status",
      "pct_create",
      "propose_plan",
      "report_outcome",
    ]);
    expect(new Set(TOOL_NAMES).size).toBe(TOOL_NAMES.length);
  });

  it("describes each tool to the model with its own description and schema; the last one carries the cache mark", () => {
    const defs = toolDefinitions();
    expect(defs.map((d) => d.name)).toEqual(TOOL_NAMES);
    for (const [i, tool] of TOOLS.entries()) {
      expect(defs[i]!.description).toBe(tool.description);
      expect(defs[i]!.input_schema.type).toBe("object");
    }
    expect(defs.at(-1)!.cache_control).toEqual({ type: "ephemeral" });
    expect(toolDefinitions({ cache: false }).some((d) => d.cache_control)).toBe(false);
  });
});

describe("the tools", () => {
  it("refuses an unknown tool and a bad input by name, without throwing", async () => {
    const { deps, ctx } = await setup();
    expect(await toolRun(deps, ctx, "make_coffee", {})).toMatchObject({
      isError: true,
      content: expect.stringMatching(/unknown tool "make_coffee"; the tools are: list_targets, run/),
    });
    expect(await toolRun(deps, ctx, "run", { target: "pve1" })).toMatchObject({
      isError: true,
      content: expect.stringMatching(/^invalid input for run: command:/),
    });
  });

  it("list_targets lists the registry's targets with their kinds", async () => {
    const { deps, ctx } = await setup();
    expect(await toolRun(deps, ctx, "list_targets", {})).toEqual({ content: "pve1 (proxmox)", isError: false, readOnly: true });
  });

  it("run outside a window creates a pending approval and runs nothing", async () => {
    const { deps, ctx } = await setup();
    const out = await toolRun(deps, ctx, "run", { target: "pve1", command: "apt-get install -y nginx" });
    expect(out).toMatchObject({
      isError: false,
      readOnly: false,
      content: expect.stringMatching(/^Not run: .* awaits the operator's approval/),
    });
    expect(deps.executions.inlineRuns).toEqual([]);
  });

  it("get_execution_status reads the session's execution as the capped note the model reads everywhere", async () => {
    const { deps, ctx } = await setup();
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

  it("report_outcome with no plan and no window records nothing and says so", async () => {
    const { deps, ctx } = await setup();
    expect(await toolRun(deps, ctx, "report_outcome", { outcome: "verified", summary: "done" })).toMatchObject({
      isError: true,
      content: expect.stringMatching(/no approved, unfinished plan and no open assent window/),
    });
  });
});

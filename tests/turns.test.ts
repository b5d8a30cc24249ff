// Turns: persisted history replayed exactly (tool_use ids paired with their
// results), continuation notes after the history and never stored as
// operator words, and one running turn per session across processes, with
// work that arrives meanwhile queued, coalesced and run next.
import { describe, expect, it } from "vitest";
import { scriptedPolicy } from "../src/model-double/messages-double.js";
import { historyLoad, historyToParams, type ReplayRow, SYSTEM_NOTE_PREFIX } from "../src/turns/history.js";
import { turnClaimNext } from "../src/turns/turn-store.js";
import { TurnSessionNotFoundError } from "../src/turns/turns.js";
import { useAgentHarness } from "./helpers/agent-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeNodeTarget } from "./helpers/db-executions-port.js";
import { makeSession } from "./helpers/factories.js";

const t = useTestDatabase();
const h = useAgentHarness(t, { respond: () => ({ exitCode: 0, stdout: "pve-manager/8.2.4\n" }) });

const turnsOf = (sessionId: string) =>
  t.db.kysely
    .selectFrom("turns")
    .select(["id", "kind", "status", "error"])
    .where("session_id", "=", sessionId)
    .orderBy("created_at")
    .execute();

describe("turns", () => {
  it("replays the persisted history exactly on the next turn", async () => {
    await makeNodeTarget(t.db.kysely, "pve1");
    const s = await makeSession(t.db.kysely);
    h.double.setPolicy(
      scriptedPolicy([
        {
          content: [
            { type: "text", text: "Looking." },
            { type: "tool_use", id: "toolu_v", name: "run", input: { target: "pve1", command: "pveversion" } },
          ],
        },
        { content: [{ type: "text", text: "Proxmox 8.2.4." }] },
        { content: [{ type: "text", text: "You asked about the version." }] },
      ]),
    );
    await h.turns.chat(s.id, "which proxmox version?", "operator:alice", { mayConfirmDestructive: true });
    await h.turns.idle(s.id);
    await h.turns.chat(s.id, "what did I ask?", "operator:alice", { mayConfirmDestructive: true });
    await h.turns.idle(s.id);

    const replayed = h.double.requests.at(-1)!.messages;
    const resultText = (replayed[2]!.content as Array<{ content: string }>)[0]!.content;
    expect(replayed).toEqual([
      { role: "user", content: [{ type: "text", text: "which proxmox version?" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Looking." },
          { type: "tool_use", id: "toolu_v", name: "run", input: { target: "pve1", command: "pveversion" } },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_v", content: resultText }] },
      { role: "assistant", content: [{ type: "text", text: "Proxmox 8.2.4." }] },
      { role: "user", content: [{ type: "text", text: "what did I ask?" }] },
    ]);
    expect(resultText).toContain("pve-manager/8.2.4");
    // What was sent is what the database replays.
    expect(await historyLoad(t.db.kysely, { sessionId: s.id })).toEqual([
      ...replayed,
      { role: "assistant", content: [{ type: "text", text: "You asked about the version." }] },
    ]);
  });

  it("chatWith places the notes after the history, marked as the system's, never as operator words", async () => {
    const s = await makeSession(t.db.kysely);
    h.double.setPolicy(
      scriptedPolicy([{ content: [{ type: "text", text: "Queued the install." }] }, { content: [{ type: "text", text: "Installed." }] }]),
    );
    await h.turns.chat(s.id, "install nginx", "operator:alice", { mayConfirmDestructive: true });
    await h.turns.idle(s.id);
    const note = "execution 1b0c completed (exit 0): nginx installed";
    const { turnId } = await h.turns.chatWith(s.id, [note], { executionIds: [], reason: "execution finished" });
    await h.turns.idle(s.id);

    const sent = h.double.requests.at(-1)!.messages;
    expect(sent.slice(0, 2)).toEqual([
      { role: "user", content: [{ type: "text", text: "install nginx" }] },
      { role: "assistant", content: [{ type: "text", text: "Queued the install." }] },
    ]);
    expect(sent.at(-1)).toEqual({ role: "user", content: [{ type: "text", text: `${SYSTEM_NOTE_PREFIX}\n${note}` }] });

    const rows = await t.db.kysely
      .selectFrom("messages")
      .select(["kind", "content", "turn_id"])
      .where("session_id", "=", s.id)
      .orderBy("id")
      .execute();
    expect(rows.map((r) => r.kind)).toEqual(["operator", "assistant", "system_note", "assistant"]);
    expect(rows[2]).toEqual({ kind: "system_note", content: [{ type: "text", text: note }], turn_id: turnId });
    expect(rows.filter((r) => r.kind === "operator").map((r) => r.content)).toEqual([[{ type: "text", text: "install nginx" }]]);
    expect((await turnsOf(s.id)).map((x) => [x.kind, x.status])).toEqual([
      ["operator", "completed"],
      ["continuation", "completed"],
    ]);
  });

  it("serializes two turn attempts on one session from two processes, coalescing what waited", async () => {
    const s = await makeSession(t.db.kysely);
    const a = h.turns;
    const b = h.makeTurns("test-b");
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let firstSeen!: () => void;
    const seen = new Promise<void>((r) => (firstSeen = r));
    h.double.setPolicy(
      scriptedPolicy([
        () => {
          firstSeen();
          return { content: [{ type: "text", text: "first answer" }], hold: gate };
        },
        { content: [{ type: "text", text: "second answer" }] },
      ]),
    );
    const before = h.double.requests.length;
    const first = await a.chat(s.id, "one", "operator:alice", { mayConfirmDestructive: true });
    await seen; // the first turn is running and its model call is held open
    const second = await b.chat(s.id, "two", "operator:alice", { mayConfirmDestructive: true });
    const third = await b.chatWith(s.id, ["execution x completed (exit 0): done"]);

    // Process B could not start a turn: the database holds the one running turn.
    expect(await turnClaimNext(t.db.kysely, { sessionId: s.id, owner: "intruder" })).toBeUndefined();
    expect((await turnsOf(s.id)).map((x) => [x.id, x.status])).toEqual([
      [first.turnId, "running"],
      [second.turnId, "queued"],
      [third.turnId, "queued"],
    ]);

    release();
    await a.idle(s.id);
    await b.idle(s.id);
    const requests = h.double.requests.slice(before);
    expect(requests).toHaveLength(2);
    // The second model call started after the first turn's reply was stored,
    // and carries the message and the note that waited, in order.
    expect(requests[1]!.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "one" }] },
      { role: "assistant", content: [{ type: "text", text: "first answer" }] },
      {
        role: "user",
        content: [
          { type: "text", text: "two" },
          { type: "text", text: `${SYSTEM_NOTE_PREFIX}\nexecution x completed (exit 0): done` },
        ],
      },
    ]);
    const turns = await turnsOf(s.id);
    expect(turns.map((x) => [x.id, x.kind, x.status])).toEqual([
      [first.turnId, "operator", "completed"],
      [second.turnId, "operator", "completed"],
      [third.turnId, "continuation", "cancelled"],
    ]);
    expect(turns[2]!.error).toBe(`coalesced into turn ${second.turnId}`);
    // Never two running: the audit trail shows each turn entering 'running' after the previous left it.
    const audit = await t.db.sql<{ row_key: string; status: string }[]>`
      SELECT row_key, new_row->>'status' AS status FROM audit.events
       WHERE table_name = 'turns' AND session_id = ${s.id} AND operation = 'UPDATE' ORDER BY id`;
    expect(audit.filter((e) => e.status === "running")).toHaveLength(2);
    let running = 0;
    for (const e of audit) {
      if (e.status === "running") running++;
      else if (["completed", "failed", "aborted", "interrupted"].includes(e.status)) running--;
      expect(running).toBeLessThanOrEqual(1);
    }
  });

  it("refuses an empty message with an error naming the field", async () => {
    const s = await makeSession(t.db.kysely);
    await expect(h.turns.chat(s.id, "   ", "operator:alice", { mayConfirmDestructive: true })).rejects.toThrow(/^text: /);
    await expect(h.turns.chatWith(s.id, [" "])).rejects.toThrow(/^notes: /);
    expect(await turnsOf(s.id)).toEqual([]);
    await expect(
      h.turns.chat("5d0c2d6e-0000-4000-8000-000000000000", "hi", "operator:alice", { mayConfirmDestructive: true }),
    ).rejects.toBeInstanceOf(TurnSessionNotFoundError);
    await expect(h.turns.chatWith("not-a-session", ["note"])).rejects.toThrow("session not-a-session does not exist");
  });

  it("orders rows by the turn that carries them and answers a tool_use a crash left without a result", () => {
    const text = (t: string) => [{ type: "text", text: t }];
    const rows: ReplayRow[] = [
      { id: "1", kind: "operator", turnId: "T1", content: text("first") },
      { id: "2", kind: "assistant", turnId: "T1", content: [{ type: "tool_use", id: "toolu_a", name: "list_targets", input: {} }] },
      // Written while T1 was still running: belongs before T2's output, not between toolu_a and its result.
      { id: "3", kind: "operator", turnId: "T2", content: text("second") },
      { id: "4", kind: "tool_results", turnId: "T1", content: [{ type: "tool_result", tool_use_id: "toolu_a", content: "pve1" }] },
      { id: "5", kind: "assistant", turnId: "T1", content: [{ type: "tool_use", id: "toolu_b", name: "run", input: {} }] },
      // T1's process died here: toolu_b never got a result.
      { id: "6", kind: "system_note", turnId: "T2", content: text("turn T1 was interrupted") },
    ];
    expect(historyToParams(rows)).toEqual([
      { role: "user", content: text("first") },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_a", name: "list_targets", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_a", content: "pve1" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_b", name: "run", input: {} }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_b", is_error: true, content: expect.stringContaining("interrupted") },
          { type: "text", text: "second" },
          { type: "text", text: `${SYSTEM_NOTE_PREFIX}\nturn T1 was interrupted` },
        ],
      },
    ]);
  });

  it("Stop reaches a turn that another process runs", async () => {
    const s = await makeSession(t.db.kysely);
    const runner = h.makeTurns("test-runner");
    const other = h.makeTurns("test-other");
    await runner.start();
    h.double.setPolicy(() => ({ content: [{ type: "text", text: "words ".repeat(400) }], eventDelayMs: 20, chunkChars: 6 }));
    const { turnId } = await runner.chat(s.id, "talk for a while", "operator:alice", { mayConfirmDestructive: true });
    for (;;) {
      const events = await t.db.kysely.selectFrom("session_events").select("type").where("session_id", "=", s.id).execute();
      if (events.some((e) => e.type === "text_delta")) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    await other.abort(s.id);
    await runner.idle(s.id);
    const turn = await t.db.kysely.selectFrom("turns").select("status").where("id", "=", turnId).executeTakeFirstOrThrow();
    expect(turn.status).toBe("aborted");
  });
});

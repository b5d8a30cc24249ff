// The event loop's one round trip (issue 20): the NOTIFY names the session a
// result waits in, and claiming the results and queueing their continuation
// turn (turn, note, `message` event, delivery mark, loop-guard count) is one
// statement — with the same rules as the two-step path: exactly once, only
// in an open window, coalesced, bounded by the loop guard; the note it
// builds in SQL is the one executions/execution-note.ts writes.
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { ContinuationDispatcher } from "../src/continuation/dispatcher.js";
import { planExecutionsClaimAndQueue } from "../src/continuation/ledger.js";
import { ExecutionFinishedListener, LISTEN_APPLICATION_NAME } from "../src/continuation/listener.js";
import type { Db } from "../src/db/connect.js";
import { sessionEventsAfter } from "../src/events/session-events.js";
import { executionNote } from "../src/executions/execution-note.js";
import { createLogger } from "../src/log/logger.js";
import { useTestDatabase } from "./helpers/database.js";
import { finishExecution, makeExecution, makeRunningExecution, makeSession, makeWindow } from "./helpers/factories.js";

const t = useTestDatabase();
const log = createLogger({ level: "silent" });

interface Queued {
  sessionId: string;
  turnId: string;
  executionIds: string[];
  by: string;
}

const running: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.stop()));
});

/** One process's listener and dispatcher in the one-statement mode (main.ts's wiring). */
async function startProcess(name: string, queued: Queued[], maxContinuations = 40) {
  const db: Db = t.connect({ max: 4, applicationName: `nomos-test-${name}` });
  const listenDb: Db = t.connect({ max: 1, applicationName: LISTEN_APPLICATION_NAME });
  const dispatcher = new ContinuationDispatcher({
    db,
    log,
    owner: name,
    maxContinuations,
    startTurn: () => Promise.reject(new Error("the one-statement path never calls startTurn")),
    turnQueued: (turn) => queued.push({ ...turn, by: name }),
  });
  const listener = new ExecutionFinishedListener({
    sql: listenDb.sql,
    log,
    onFinished: (payload) => void dispatcher.notify(payload),
    onConnected: () => {},
  });
  await listener.start();
  const proc = {
    dispatcher,
    async stop() {
      await listener.stop();
      await dispatcher.stop();
      await listenDb.close();
      await db.close();
    },
  };
  running.push(proc);
  return proc;
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function settle(...procs: { dispatcher: ContinuationDispatcher }[]) {
  await new Promise((r) => setTimeout(r, 150));
  for (const p of procs) await p.dispatcher.idle();
}

describe("the NOTIFY payload", () => {
  it("names the session when a result waits in the ledger, and is the bare id otherwise", async () => {
    const listenDb = t.connect({ max: 1 });
    const payloads: string[] = [];
    const { unlisten } = await listenDb.sql.listen("nomos_execution_finished", (p) => payloads.push(p));
    const s = await makeSession(t.db.kysely);
    const waiting = await makeRunningExecution(t.db.kysely, s.id);
    await finishExecution(t.db.kysely, waiting.id);
    const alone = await makeExecution(t.db.kysely, { session_id: s.id, status: "pending_approval" });
    await t.db.kysely.updateTable("executions").set({ status: "rejected", finished_at: new Date() }).where("id", "=", alone.id).execute();
    await until("both notifications", () => payloads.length === 2);
    expect(payloads).toEqual([`${waiting.id}:${s.id}`, alone.id]);
    await unlisten();
    await listenDb.close();
  });
});

describe("the one statement", () => {
  it("claims, counts and queues the turn with its note, event and delivery mark, exactly once", async () => {
    const queued: Queued[] = [];
    const p = await startProcess("a", queued);
    const s = await makeSession(t.db.kysely);
    const w = await makeWindow(t.db.kysely, s.id);
    const e = await makeRunningExecution(t.db.kysely, s.id);
    const finished = await finishExecution(t.db.kysely, e.id, { status: "failed", exitCode: 1, stderr: "registry returned 500\n" });

    await until("the continuation turn", () => queued.length === 1);
    await settle(p);
    expect(queued).toEqual([{ sessionId: s.id, turnId: queued[0]!.turnId, executionIds: [e.id], by: "a" }]);
    const turn = await t.db.kysely.selectFrom("turns").selectAll().where("id", "=", queued[0]!.turnId).executeTakeFirstOrThrow();
    expect(turn).toMatchObject({ session_id: s.id, kind: "continuation", status: "queued" });
    expect(turn.input).toEqual({ notes: [executionNote(finished)], executionIds: [e.id], reason: "executions" });
    const messages = await t.db.kysely.selectFrom("messages").selectAll().where("turn_id", "=", turn.id).execute();
    expect(messages.map((m) => [m.kind, m.content])).toEqual([["system_note", [{ type: "text", text: executionNote(finished) }]]]);
    const events = await sessionEventsAfter(t.db.kysely, { sessionId: s.id, afterId: "0" });
    expect(events.map((x) => x.type)).toEqual(["message"]);
    const ledger = await t.db.kysely
      .selectFrom("nomos_plan_executions")
      .selectAll()
      .where("execution_id", "=", e.id)
      .executeTakeFirstOrThrow();
    expect(ledger).toMatchObject({ claimed_by: "a", delivered_turn_id: turn.id });
    expect(ledger.continued_at).not.toBeNull();
    const window = await t.db.kysely.selectFrom("assent_windows").selectAll().where("id", "=", w.id).executeTakeFirstOrThrow();
    expect(window.continuations).toBe(1);
    // One audit row for the ledger row (claim and delivery mark together), by the continuation.
    const audit = await t.db.kysely
      .selectFrom("audit.events")
      .select(["actor", "table_name", "operation"])
      .where("row_key", "in", [e.id, turn.id, w.id])
      .where("table_name", "in", ["nomos_plan_executions", "turns", "assent_windows"])
      .where("actor", "=", "system:continuation")
      .orderBy("id")
      .execute();
    expect(audit.map((a) => `${a.table_name} ${a.operation}`).sort()).toEqual([
      "assent_windows UPDATE",
      "nomos_plan_executions UPDATE",
      "turns INSERT",
    ]);

    // Poked again: nothing left to claim, nothing queued, nothing counted.
    p.dispatcher.poke(s.id);
    await settle(p);
    expect(queued).toHaveLength(1);
  });

  it("wakes the session's event streams after the commit (the statement itself sends no NOTIFY)", async () => {
    const listenDb = t.connect({ max: 1 });
    const woken: string[] = [];
    const { unlisten } = await listenDb.sql.listen("nomos_session_events", (id) => woken.push(id));
    try {
      // The statement alone (no dispatcher running) queues the turn and notifies nothing.
      const s2 = await makeSession(t.db.kysely);
      await makeWindow(t.db.kysely, s2.id);
      const e2 = await makeRunningExecution(t.db.kysely, s2.id);
      await finishExecution(t.db.kysely, e2.id);
      const outcome = await planExecutionsClaimAndQueue(t.db, {
        sessionId: s2.id,
        owner: "b",
        actor: "system:continuation",
        leaseSeconds: 30,
        maxContinuations: 40,
        extraNotes: [],
      });
      expect(outcome).toMatchObject({ kind: "queued", executionIds: [e2.id] });
      await t.db.sql`SELECT pg_notify('nomos_session_events', 'marker')`;
      await until("the marker", () => woken.includes("marker"));
      expect(woken).not.toContain(s2.id);

      // The dispatcher wakes the session after queueing its continuation.
      const queued: Queued[] = [];
      const p = await startProcess("a", queued);
      const s = await makeSession(t.db.kysely);
      await makeWindow(t.db.kysely, s.id);
      const e = await makeRunningExecution(t.db.kysely, s.id);
      await finishExecution(t.db.kysely, e.id, { status: "completed", exitCode: 0 });
      await until("the continuation turn", () => queued.length === 1);
      await until("the stream's wake-up", () => woken.includes(s.id));
      await settle(p);
      // The `message` event the wake-up is for is committed and readable.
      const events = await sessionEventsAfter(t.db.kysely, { sessionId: s.id, afterId: "0" });
      expect(events.map((x) => x.type)).toEqual(["message"]);
    } finally {
      await unlisten();
      await listenDb.close();
    }
  });

  it("coalesces results that finish together into one turn, notes in the order they finished", async () => {
    const s = await makeSession(t.db.kysely);
    await makeWindow(t.db.kysely, s.id);
    const es = [
      await makeRunningExecution(t.db.kysely, s.id, { command: "apt-get install -y docker.io" }),
      await makeRunningExecution(t.db.kysely, s.id, { command: "docker pull nginx" }),
    ];
    const finished = [];
    for (const e of es) finished.push(await finishExecution(t.db.kysely, e.id, { stdout: "ok" }));
    const outcome = await planExecutionsClaimAndQueue(t.db, {
      sessionId: s.id,
      owner: "a",
      actor: "system:continuation",
      leaseSeconds: 30,
      maxContinuations: 40,
      extraNotes: ["  The operator approved step 2.  "],
    });
    expect(outcome).toMatchObject({ kind: "queued", reason: "executions", executionIds: es.map((e) => e.id) });
    if (outcome.kind !== "queued") throw new Error("not queued");
    const turn = await t.db.kysely.selectFrom("turns").select("input").where("id", "=", outcome.turnId).executeTakeFirstOrThrow();
    expect((turn.input as { notes: string[] }).notes).toEqual(["The operator approved step 2.", ...finished.map(executionNote)]);
  });

  it("claims nothing without an open window, but still delivers the operator's decision", async () => {
    const s = await makeSession(t.db.kysely);
    const e = await makeRunningExecution(t.db.kysely, s.id);
    await finishExecution(t.db.kysely, e.id);
    const params = { sessionId: s.id, owner: "a", actor: "system:continuation", leaseSeconds: 30, maxContinuations: 40 };
    expect(await planExecutionsClaimAndQueue(t.db, { ...params, extraNotes: [] })).toEqual({ kind: "window_closed" });
    const decided = await planExecutionsClaimAndQueue(t.db, { ...params, extraNotes: ["Rejected by the operator."] });
    expect(decided).toMatchObject({ kind: "queued", reason: "approval", executionIds: [] });
    const [row] = await t.db.sql`SELECT continued_at FROM nomos_plan_executions WHERE execution_id = ${e.id}`;
    expect(row?.continued_at).toBeNull();
  });

  it("stops at the loop guard, closes the window and says why; the result waits", async () => {
    const queued: Queued[] = [];
    const p = await startProcess("a", queued, 2);
    const s = await makeSession(t.db.kysely);
    const w = await makeWindow(t.db.kysely, s.id);
    for (let i = 0; i < 3; i++) {
      const e = await makeRunningExecution(t.db.kysely, s.id);
      await finishExecution(t.db.kysely, e.id);
      await settle(p);
    }
    expect(queued).toHaveLength(2);
    const window = await t.db.kysely.selectFrom("assent_windows").selectAll().where("id", "=", w.id).executeTakeFirstOrThrow();
    expect(window).toMatchObject({ continuations: 2, close_reason: "continuation_limit" });
    const events = await sessionEventsAfter(t.db.kysely, { sessionId: s.id, afterId: "0" });
    expect(events.find((e) => e.type === "turn_failed")?.data.message).toMatch(/Stopped after 2 continuation turns/);
    const [waiting] = await t.db
      .sql`SELECT count(*)::int AS n FROM nomos_plan_executions WHERE session_id = ${s.id} AND continued_at IS NULL`;
    expect(waiting?.n).toBe(1);
  });

  it("delivers each result once when two processes race for many sessions", async () => {
    const queued: Queued[] = [];
    const a = await startProcess("a", queued);
    const b = await startProcess("b", queued);
    const sessions = await Promise.all(Array.from({ length: 8 }, () => makeSession(t.db.kysely)));
    for (const s of sessions) await makeWindow(t.db.kysely, s.id);
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const e = await makeRunningExecution(t.db.kysely, sessions[i % sessions.length]!.id);
      ids.push(e.id);
      await finishExecution(t.db.kysely, e.id);
    }
    await until("every result", () => queued.flatMap((q) => q.executionIds).length >= ids.length);
    await settle(a, b);
    const delivered = queued.flatMap((q) => q.executionIds);
    expect([...delivered].sort()).toEqual([...ids].sort());
    const [undelivered] = await t.db.sql`SELECT count(*)::int AS n FROM nomos_plan_executions
                                          WHERE execution_id = ANY(${ids}::uuid[]) AND delivered_turn_id IS NULL`;
    expect(undelivered?.n).toBe(0);
  });
});

describe("execution_note() in SQL", () => {
  const ws = ["", " ", "\n", "\t", "\u00a0", "\u2028", "\u3000", "\ufeff", "\r\n"];
  const piece = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.constantFrom(...ws),
    fc.constantFrom("😀", "𝄞", "é", "ß", "--- end stdout ---", "x".repeat(3999)),
  );
  const text = fc.array(piece, { maxLength: 6 }).map((parts) => parts.join("").replaceAll("\0", ""));
  const noSurrogates = (s: string) => s.replace(/\p{Cs}/gu, "\ufffd");

  it("writes exactly what executionNote writes", async () => {
    const s = await makeSession(t.db.kysely);
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          status: fc.constantFrom("completed", "failed", "timed_out", "cancelled"),
          exit_code: fc.option(fc.integer({ min: -1, max: 255 })),
          signal: fc.option(fc.constantFrom("", "TERM", "KILL")),
          command: fc.string({ minLength: 1, maxLength: 40 }).map((c) => c.replaceAll("\0", "") || "true"),
          error: fc.option(fc.oneof(text, fc.constant(""))),
          stdout: text,
          stderr: fc.oneof(text, fc.constant(`${"y".repeat(4500)}😀 tail `)),
          stdout_dropped_bytes: fc.nat({ max: 10_000 }),
          stderr_dropped_bytes: fc.constantFrom(0, 7),
        }),
        async (r) => {
          const values = {
            ...r,
            command: noSurrogates(r.command),
            error: r.error === null ? null : noSurrogates(r.error),
            stdout: noSurrogates(r.stdout),
            stderr: noSurrogates(r.stderr),
          };
          const { status, ...columns } = values;
          const e = await makeExecution(t.db.kysely, { session_id: s.id, target: "pve1", ...columns });
          const [row] = await t.db.sql<{ note: string }[]>`
            SELECT execution_note(id, ${status}, exit_code, signal, target, command, error, stdout, stderr,
                                  stdout_dropped_bytes, stderr_dropped_bytes) AS note
              FROM executions WHERE id = ${e.id}`;
          expect(row!.note).toBe(executionNote({ ...e, status }));
        },
      ),
      { numRuns: 150 },
    );
  });
});

// The history cache (turns/history-cache.ts) returns exactly what a full read
// of the transcript returns at the same moment: new rows, rows of a queued
// turn once it runs (re-pointed by coalescing), and a row that commits after
// a higher id was already read.
import { describe, expect, it } from "vitest";
import type { Db } from "../src/db/connect.js";
import { historyRows } from "../src/turns/history.js";
import { messageAppend } from "../src/turns/messages.js";
import { turnClaimNext, turnFinish, turnQueue } from "../src/turns/turn-store.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";

const t = useTestDatabase();

/** The transcript read whole, as history.ts read it before the cache. */
async function fullRead(db: Db, sessionId: string) {
  const rows = await db.kysely
    .selectFrom("messages as m")
    .leftJoin("turns as t", "t.id", "m.turn_id")
    .select(["m.id", "m.kind", "m.turn_id", "m.content", "t.status as turn_status"])
    .where("m.session_id", "=", sessionId)
    .orderBy("m.id")
    .execute();
  return rows.filter((r) => r.turn_status !== "queued").map((r) => ({ id: r.id, kind: r.kind, turnId: r.turn_id, content: r.content }));
}

const text = (s: string) => [{ type: "text", text: s }];

describe("the history cache", () => {
  it("matches a full read across turns, queued turns and coalescing", async () => {
    const db = t.db;
    const s = await makeSession(db.kysely);
    const check = async () => expect(await historyRows(db.kysely, { sessionId: s.id })).toEqual(await fullRead(db, s.id));
    await check();
    for (let round = 0; round < 4; round++) {
      const a = await turnQueue(db.kysely, { sessionId: s.id, kind: "operator", input: {} });
      await messageAppend(db.kysely, { sessionId: s.id, turnId: a.id, kind: "operator", content: text(`hello ${round}`) });
      await check(); // the queued turn's row is left out
      const b = await turnQueue(db.kysely, { sessionId: s.id, kind: "continuation", input: {} });
      await messageAppend(db.kysely, { sessionId: s.id, turnId: b.id, kind: "system_note", content: text(`note ${round}`) });
      const claimed = await turnClaimNext(db.kysely, { sessionId: s.id, owner: "test" });
      expect(claimed?.coalesced).toEqual([b.id]);
      await check(); // both rows now belong to the running turn
      await messageAppend(db.kysely, { sessionId: s.id, turnId: claimed!.turn.id, kind: "assistant", content: text(`reply ${round}`) });
      await check();
      await turnFinish(db.kysely, { turnId: claimed!.turn.id, sessionId: s.id, status: "completed", iterations: 1, actor: "system:test" });
      await messageAppend(db.kysely, { sessionId: s.id, turnId: null, kind: "system_note", content: text(`stopped ${round}`) });
      await check();
    }
  });

  it("sees a row that commits after a higher id was read", async () => {
    const db = t.db;
    const s = await makeSession(db.kysely);
    await messageAppend(db.kysely, { sessionId: s.id, turnId: null, kind: "system_note", content: text("first") });
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let inserted!: () => void;
    const insertedP = new Promise<void>((r) => {
      inserted = r;
    });
    // A writer that takes an id and commits late.
    const late = db.kysely.transaction().execute(async (tx) => {
      await messageAppend(tx, { sessionId: s.id, turnId: null, kind: "system_note", content: text("late") });
      inserted();
      await held;
    });
    await insertedP;
    await messageAppend(db.kysely, { sessionId: s.id, turnId: null, kind: "system_note", content: text("after") });
    expect((await historyRows(db.kysely, { sessionId: s.id })).map((r) => r.content)).toEqual([text("first"), text("after")]);
    release();
    await late;
    const rows = await historyRows(db.kysely, { sessionId: s.id });
    expect(rows).toEqual(await fullRead(db, s.id));
    expect(rows.map((r) => r.content)).toEqual([text("first"), text("late"), text("after")]);
  });
});

// The history cache (turns/history-cache.ts) returns exactly what a full read
// of the transcript returns at the same moment, rows and assembled params:
// new rows, rows of a queued turn once it runs (re-pointed by coalescing),
// and a row that commits after a higher id was already read; also under
// concurrent writers and readers (a property test).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Db } from "../src/db/connect.js";
import { turnQueueContinuation } from "../src/turns/continuation-queue.js";
import { historyLoad, historyRows, historyToParams } from "../src/turns/history.js";
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

const LATE_LOCK = 20_130;

/** Until a statement waits for LATE_LOCK. */
async function untilWaiting(db: Db): Promise<void> {
  for (;;) {
    const [w] = await db.sql`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = ${LATE_LOCK} AND NOT granted`;
    if (w) return;
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("the history cache", () => {
  it("matches a full read across turns, queued turns and coalescing", async () => {
    const db = t.db;
    const s = await makeSession(db.kysely);
    const check = async () => {
      const full = await fullRead(db, s.id);
      expect(await historyRows(db.kysely, { sessionId: s.id })).toEqual(full);
      expect(await historyLoad(db.kysely, { sessionId: s.id })).toEqual(historyToParams(full));
    };
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
    // A writer whose statement has taken its id and inserted its row, and
    // waits (on an advisory lock held here) before its statement ends: its
    // counter update (a statement-level trigger) and its commit come later.
    const holder = t.connect({ max: 1 });
    await holder.sql`SELECT pg_advisory_lock(${LATE_LOCK})`;
    const late = db.sql`
      WITH m AS (INSERT INTO messages (session_id, turn_id, kind, content)
                 VALUES (${s.id}, NULL, 'system_note', ${db.sql.json(text("late"))}) RETURNING id)
      SELECT pg_advisory_xact_lock(${LATE_LOCK}) FROM m`.execute();
    await untilWaiting(db);
    await messageAppend(db.kysely, { sessionId: s.id, turnId: null, kind: "system_note", content: text("after") });
    expect((await historyRows(db.kysely, { sessionId: s.id })).map((r) => r.content)).toEqual([text("first"), text("after")]);
    await holder.sql`SELECT pg_advisory_unlock(${LATE_LOCK})`;
    await late;
    const rows = await historyRows(db.kysely, { sessionId: s.id });
    expect(rows).toEqual(await fullRead(db, s.id));
    expect(rows.map((r) => r.content)).toEqual([text("first"), text("late"), text("after")]);
    expect(await historyLoad(db.kysely, { sessionId: s.id })).toEqual(historyToParams(rows));
    await holder.close();
  });

  it("matches a full read under concurrent writers, readers, late commits and coalesced turns", async () => {
    const db = t.db;
    let n = 0;
    const say = () => text(`m${n++}`);
    const op = (sessionId: string, kind: string): Promise<unknown> => {
      switch (kind) {
        case "operator":
          return db.kysely.transaction().execute(async (tx) => {
            const turn = await turnQueue(tx, { sessionId, kind: "operator", input: {} });
            await messageAppend(tx, { sessionId, turnId: turn.id, kind: "operator", content: say() });
            await messageAppend(tx, { sessionId, turnId: turn.id, kind: "system_note", content: say() });
          });
        case "continuation":
          return turnQueueContinuation(db.kysely, {
            sessionId,
            actor: "system:test",
            notes: [`note ${n++}`],
            executionIds: [],
            reason: "executions",
          });
        case "run":
          return (async () => {
            const claimed = await turnClaimNext(db.kysely, { sessionId, owner: "test" });
            if (!claimed) return;
            const turnId = claimed.turn.id;
            const use = { type: "tool_use", id: `toolu_${n++}`, name: "run", input: {} };
            await messageAppend(db.kysely, { sessionId, turnId, kind: "assistant", content: [...say(), use] });
            if (n % 3 !== 0) {
              await messageAppend(db.kysely, {
                sessionId,
                turnId,
                kind: "tool_results",
                content: [{ type: "tool_result", tool_use_id: use.id, content: "ok" }],
              });
            }
            await messageAppend(db.kysely, { sessionId, turnId, kind: "assistant", content: say() });
            await turnFinish(db.kysely, { turnId, sessionId, status: "completed", iterations: 1, actor: "system:test" });
          })();
        case "note":
          return messageAppend(db.kysely, { sessionId, turnId: null, kind: "system_note", content: say() });
        case "slow":
          // Takes its id, then sleeps inside the statement before its counter moves and it commits.
          return db.sql`
            WITH m AS (INSERT INTO messages (session_id, turn_id, kind, content)
                       VALUES (${sessionId}, NULL, 'system_note', ${db.sql.json(say())}) RETURNING id)
            SELECT pg_sleep(0.06) FROM m`.execute();
        default:
          // Lands, as often as not, after the quick writers committed and before the slow one did.
          return new Promise((r) => setTimeout(r, 20)).then(() => historyLoad(db.kysely, { sessionId }));
      }
    };
    const kinds = fc.constantFrom("operator", "continuation", "run", "run", "note", "slow", "read", "read");
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(kinds, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 6 }), async (batches) => {
        const s = await makeSession(db.kysely);
        for (const batch of batches) {
          await Promise.all(batch.map((kind) => op(s.id, kind)));
          const full = await fullRead(db, s.id);
          expect(await historyRows(db.kysely, { sessionId: s.id })).toEqual(full);
          expect(await historyLoad(db.kysely, { sessionId: s.id })).toEqual(historyToParams(full));
          const [count] = await db.sql<{ n: string | null; rows: string }[]>`
            SELECT (SELECT n FROM message_counts WHERE session_id = ${s.id})::text AS n,
                   (SELECT count(*) FROM messages WHERE session_id = ${s.id})::text AS rows`;
          expect(count!.n ?? "0").toBe(count!.rows);
        }
      }),
      { numRuns: 25 },
    );
  });
});

// The replayable transcript rows a process has already read, per session,
// with their assembled params (history-assembly.ts), so a turn reads from
// the database only what is new since the last one and assembles only that:
// the cost of loading history does not grow with its length (what remains
// is copying the list of messages the request carries).
//
// Why it is safe: messages are append-only, and the only later change to a
// row is its turn_id, moved when a queued turn is coalesced into the one
// claimed (turn-store.ts turnClaimNext). So only rows whose turn was not
// queued when read are cached, and `through` stops below the first row that
// was left out (a queued turn's), which is read again next time. A row that
// commits after a higher id was read (two writers of one session at once)
// would fall below `through` unseen: every read takes the session's row
// count (message_counts, kept by a trigger in the writing transaction,
// migration 130) in the same statement, so the same snapshot, as the rows
// after `through`; a count that is not cached + new drops the cache and
// reads everything again. One primary-key probe, whatever the length.
//
// Invariant: what historyRows returns through the cache equals a full read
// at the same moment, and historyParams equals historyToParams of it
// (tests/history-cache.test.ts).
import type Anthropic from "@anthropic-ai/sdk";
import { type Kysely, sql } from "kysely";
import type { Database, MessageKind } from "../db/schema.js";
import { HistoryAssembly } from "./history-assembly.js";
import { historyToParams, type ReplayRow } from "./history-replay.js";

export type { ReplayRow };

interface Entry {
  /** Every row of the session with id <= through (in id order), all of turns no longer queued. Grown in place. */
  rows: ReplayRow[];
  through: string;
  assembly: HistoryAssembly;
}

/** Sessions, and rows over all sessions, kept per database handle; the least recently used sessions go first beyond either. */
const MAX_SESSIONS = 256;
const MAX_ROWS = 50_000;

const caches = new WeakMap<Kysely<Database>, Map<string, Entry>>();

function cacheOf(db: Kysely<Database>): Map<string, Entry> {
  let c = caches.get(db);
  if (!c) {
    c = new Map();
    caches.set(db, c);
  }
  return c;
}

interface Fetched {
  total: string | null;
  rows: { id: string; kind: MessageKind; turn_id: string | null; content: unknown[]; queued: boolean }[] | null;
}

async function fetchAfter(db: Kysely<Database>, sessionId: string, through: string): Promise<Fetched> {
  // One statement, one snapshot: the count and the rows agree (READ COMMITTED
  // takes a snapshot per statement, not per subquery).
  const result = await sql<Fetched>`
    SELECT (SELECT n FROM message_counts WHERE session_id = ${sessionId})::text AS total,
           (SELECT json_agg(json_build_object('id', m.id::text, 'kind', m.kind, 'turn_id', m.turn_id,
                                              'content', m.content, 'queued', t.status IS NOT DISTINCT FROM 'queued')
                            ORDER BY m.id)
              FROM messages m LEFT JOIN turns t ON t.id = m.turn_id
             WHERE m.session_id = ${sessionId} AND m.id > ${through}::bigint) AS rows`.execute(db);
  return result.rows[0] ?? { total: null, rows: null };
}

/**
 * Brings the session's cache entry up to date and returns view(entry, extra)
 * — extra: the rows after a left-out (queued) one, not kept — computed at
 * once, before another read of the session can grow the entry. Entries are
 * grown in place; a read that finds the entry grown or dropped while it
 * waited for the database reads again.
 */
async function refresh<T>(db: Kysely<Database>, sessionId: string, view: (entry: Entry, extra: ReplayRow[]) => T): Promise<T> {
  const cache = cacheOf(db);
  for (;;) {
    let entry = cache.get(sessionId);
    const kept = entry?.rows.length ?? 0;
    let fetched = await fetchAfter(db, sessionId, entry?.through ?? "0");
    if (entry && (cache.get(sessionId) !== entry || entry.rows.length !== kept)) continue; // another read of this session came first
    if (entry && Number(fetched.total ?? 0) !== kept + (fetched.rows?.length ?? 0)) {
      // A row committed below what was read (or rows were removed): read it all again.
      cache.delete(sessionId);
      entry = undefined;
      fetched = await fetchAfter(db, sessionId, "0");
      if (cache.has(sessionId)) continue;
    }
    if (!entry && cache.has(sessionId)) continue;
    const rows = entry?.rows ?? [];
    let through = entry?.through ?? "0";
    let leftOut = false;
    const extra: ReplayRow[] = [];
    for (const r of fetched.rows ?? []) {
      if (r.queued) {
        leftOut = true; // its turn_id may still move: read it again next time
        continue;
      }
      const row = { id: r.id, kind: r.kind, turnId: r.turn_id, content: r.content };
      if (leftOut) extra.push(row);
      else {
        rows.push(row);
        through = r.id;
      }
    }
    if (!entry) entry = { rows, through, assembly: HistoryAssembly.of(rows) };
    else {
      if (rows.length > kept && !entry.assembly.append(rows.slice(kept))) entry.assembly = HistoryAssembly.of(rows);
      entry.through = through;
    }
    cache.delete(sessionId);
    cache.set(sessionId, entry);
    evict(cache);
    return view(entry, extra);
  }
}

/** The session's rows of turns not queued, in id order: cached rows plus what is new. */
export function historyRows(db: Kysely<Database>, p: { sessionId: string }): Promise<ReplayRow[]> {
  return refresh(db, p.sessionId, (entry, extra) => [...entry.rows, ...extra]);
}

/** The session's history as Messages API params (historyToParams of historyRows), assembled from what is new. */
export function historyParams(db: Kysely<Database>, p: { sessionId: string }): Promise<Anthropic.MessageParam[]> {
  return refresh(db, p.sessionId, (entry, extra) => entry.assembly.params(extra) ?? historyToParams([...entry.rows, ...extra]));
}

/** Drops the least recently used sessions while over MAX_SESSIONS or MAX_ROWS (the newest one stays). */
function evict(cache: Map<string, Entry>): void {
  let total = 0;
  for (const e of cache.values()) total += e.rows.length;
  for (const [sessionId, e] of cache) {
    if (cache.size <= 1 || (cache.size <= MAX_SESSIONS && total <= MAX_ROWS)) return;
    cache.delete(sessionId);
    total -= e.rows.length;
  }
}

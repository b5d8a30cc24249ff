// The replayable transcript rows a process has already read, per session, so
// a turn reads from the database only what is new since the last one: the
// cost of loading history stops growing with its length (what remains is
// assembling the request, which is the request's size).
//
// Why it is safe: messages are append-only, and the only later change to a
// row is its turn_id, moved when a queued turn is coalesced into the one
// claimed (turn-store.ts turnClaimNext). So only rows whose turn was not
// queued when read are cached, and `through` stops below the first row that
// was left out (a queued turn's), which is read again next time. A row that
// commits after a higher id was read (two writers of one session at once)
// would fall below `through` unseen: every read also counts the session's
// rows at or below `through` (an index-only count), and a count that is not
// the cached one drops the cache and reads everything again.
//
// Invariant: what historyRows returns through the cache equals a full read
// at the same moment (tests/history-cache.test.ts).
import { type Kysely, sql } from "kysely";
import type { Database, MessageKind } from "../db/schema.js";

export interface ReplayRow {
  id: string;
  kind: MessageKind;
  turnId: string | null;
  content: unknown[];
}

interface Entry {
  /** Every row of the session with id <= through (in id order), all of turns no longer queued. */
  rows: ReplayRow[];
  through: string;
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
  cached: string;
  rows: { id: string; kind: MessageKind; turn_id: string | null; content: unknown[]; queued: boolean }[] | null;
}

async function fetchAfter(db: Kysely<Database>, sessionId: string, through: string): Promise<Fetched> {
  const result = await sql<Fetched>`
    SELECT (SELECT count(*) FROM messages WHERE session_id = ${sessionId} AND id <= ${through}::bigint)::text AS cached,
           (SELECT json_agg(json_build_object('id', m.id::text, 'kind', m.kind, 'turn_id', m.turn_id,
                                              'content', m.content, 'queued', t.status IS NOT DISTINCT FROM 'queued')
                            ORDER BY m.id)
              FROM messages m LEFT JOIN turns t ON t.id = m.turn_id
             WHERE m.session_id = ${sessionId} AND m.id > ${through}::bigint) AS rows`.execute(db);
  return result.rows[0] ?? { cached: "0", rows: null };
}

/** The session's rows of turns not queued, in id order: cached rows plus what is new. */
export async function historyRows(db: Kysely<Database>, p: { sessionId: string }): Promise<ReplayRow[]> {
  const cache = cacheOf(db);
  let entry = cache.get(p.sessionId);
  let fetched = await fetchAfter(db, p.sessionId, entry?.through ?? "0");
  if (entry && fetched.cached !== String(entry.rows.length)) {
    // A row committed below what was read (or rows were removed): read it all again.
    entry = undefined;
    fetched = await fetchAfter(db, p.sessionId, "0");
  }
  const rows = entry ? [...entry.rows] : [];
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
  cache.delete(p.sessionId);
  cache.set(p.sessionId, { rows, through });
  evict(cache);
  return extra.length > 0 ? [...rows, ...extra] : rows;
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

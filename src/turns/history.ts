// Replaying a session's transcript to the model as Messages API params: the
// order and the roles are history-replay.ts's rules; reading and assembling
// go through the per-process cache (history-cache.ts), so a turn reads and
// assembles only the rows new since the session's last turn in this process.
import type Anthropic from "@anthropic-ai/sdk";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import { historyParams, historyRows as historyRowsCached } from "./history-cache.js";
import type { ReplayRow } from "./history-replay.js";

export { historyOrder, historyToParams, type ReplayRow, SYSTEM_NOTE_PREFIX } from "./history-replay.js";

/** The session's replayable rows: read through the per-process cache (history-cache.ts), only what is new. */
export function historyRows(db: Kysely<Database>, p: { sessionId: string }): Promise<ReplayRow[]> {
  return historyRowsCached(db, p);
}

/**
 * The session's history as Messages API params, equal to
 * historyToParams(historyRows(...)). The list is the caller's to extend;
 * the messages in it are shared with later turns and frozen: copy one to change it.
 */
export function historyLoad(db: Kysely<Database>, p: { sessionId: string }): Promise<Anthropic.MessageParam[]> {
  return historyParams(db, p);
}

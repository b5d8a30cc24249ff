// Replaying a session's transcript to the model as Messages API params.
//
// Order: assistant and tool_results rows keep their insertion order; an
// operator message or system note belongs to the turn that carries it and
// is placed just before that turn's first model output (it may have been
// written while an earlier turn was still running, so its id alone would put
// it between a tool_use and its tool_result). Rows of turns still queued are
// left out: they belong to the next turn.
//
// Roles: assistant rows are the assistant; operator, tool_results and
// system_note rows are the user, merged when consecutive, tool_result blocks
// first. System notes are marked as coming from the system, never the
// operator. A tool_use that never got a result (a crash mid-turn) is
// answered with an error result, so the history stays valid.
//
// Reading: only rows new since the session's last turn in this process come
// from the database (history-cache.ts).
import type Anthropic from "@anthropic-ai/sdk";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import { historyRows as historyRowsCached, type ReplayRow } from "./history-cache.js";

export const SYSTEM_NOTE_PREFIX = "[Nomos system note: written by the Nomos service, not by the operator]";

type Block = Anthropic.ContentBlockParam;

export type { ReplayRow };

/** The session's replayable rows: read through the per-process cache (history-cache.ts), only what is new. */
export function historyRows(db: Kysely<Database>, p: { sessionId: string }): Promise<ReplayRow[]> {
  return historyRowsCached(db, p);
}

/** The rows in replay order (see the header). */
export function historyOrder(rows: ReplayRow[]): ReplayRow[] {
  // Ids are bigint identities; as numbers they stay exact below 2^53, and
  // number keys computed once per row keep a long history's sort cheap.
  const firstOutput = new Map<string, number>();
  for (const r of rows) {
    if ((r.kind === "assistant" || r.kind === "tool_results") && r.turnId && !firstOutput.has(r.turnId)) {
      firstOutput.set(r.turnId, Number(r.id));
    }
  }
  const keyed = rows.map((r) => {
    const id = Number(r.id);
    const own = r.kind === "assistant" || r.kind === "tool_results" || !r.turnId;
    return { r, k0: own ? id : (firstOutput.get(r.turnId!) ?? Number.POSITIVE_INFINITY), k1: own ? 1 : 0, id };
  });
  keyed.sort((x, y) => (x.k0 !== y.k0 ? (x.k0 < y.k0 ? -1 : 1) : x.k1 !== y.k1 ? x.k1 - y.k1 : x.id - y.id));
  return keyed.map((x) => x.r);
}

function userBlocks(row: ReplayRow): Block[] {
  if (row.kind === "system_note") {
    const text = (row.content as Array<{ type?: string; text?: string }>).map((b) => (b.type === "text" ? (b.text ?? "") : "")).join("\n");
    return [{ type: "text", text: `${SYSTEM_NOTE_PREFIX}\n${text}` }];
  }
  return row.content as Block[];
}

/** Messages API params for the rows, valid for the API: alternating roles, every tool_use answered. */
export function historyToParams(rows: ReplayRow[]): Anthropic.MessageParam[] {
  const out: Anthropic.MessageParam[] = [];
  for (const row of historyOrder(rows)) {
    const role = row.kind === "assistant" ? "assistant" : "user";
    const blocks = role === "assistant" ? (row.content as Block[]) : userBlocks(row);
    if (blocks.length === 0) continue;
    const last = out.at(-1);
    if (last && last.role === role) (last.content as Block[]).push(...blocks);
    else out.push({ role, content: [...blocks] });
  }
  // Answer dangling tool_uses and put tool_result blocks first in their message.
  for (let i = 0; i < out.length; i++) {
    const m = out[i]!;
    if (m.role !== "assistant") continue;
    const ids = (m.content as Block[]).flatMap((b) => (b.type === "tool_use" ? [b.id] : []));
    if (ids.length === 0) continue;
    let next = out[i + 1];
    if (next?.role !== "user") {
      next = { role: "user", content: [] };
      out.splice(i + 1, 0, next);
    }
    const content = next.content as Block[];
    const answered = new Set(content.flatMap((b) => (b.type === "tool_result" ? [b.tool_use_id] : [])));
    for (const id of ids) {
      if (!answered.has(id)) {
        content.push({
          type: "tool_result",
          tool_use_id: id,
          is_error: true,
          content: "No result was recorded: the turn was interrupted before this tool finished.",
        });
      }
    }
    next.content = [...content.filter((b) => b.type === "tool_result"), ...content.filter((b) => b.type !== "tool_result")];
  }
  while (out[0]?.role === "assistant") out.shift();
  return out;
}

export async function historyLoad(db: Kysely<Database>, p: { sessionId: string }): Promise<Anthropic.MessageParam[]> {
  return historyToParams(await historyRows(db, p));
}

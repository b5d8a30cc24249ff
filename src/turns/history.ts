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
import type Anthropic from "@anthropic-ai/sdk";
import type { Kysely } from "kysely";
import type { Database, MessageKind } from "../db/schema.js";

export const SYSTEM_NOTE_PREFIX = "[Nomos system note: written by the Nomos service, not by the operator]";

type Block = Anthropic.ContentBlockParam;

export interface ReplayRow {
  id: string;
  kind: MessageKind;
  turnId: string | null;
  content: unknown[];
}

export async function historyRows(db: Kysely<Database>, p: { sessionId: string }): Promise<ReplayRow[]> {
  const rows = await db
    .selectFrom("messages as m")
    .leftJoin("turns as t", "t.id", "m.turn_id")
    .select(["m.id", "m.kind", "m.turn_id", "m.content", "t.status as turn_status"])
    .where("m.session_id", "=", p.sessionId)
    .orderBy("m.id")
    .execute();
  return rows.filter((r) => r.turn_status !== "queued").map((r) => ({ id: r.id, kind: r.kind, turnId: r.turn_id, content: r.content }));
}

/** The rows in replay order (see the header). */
export function historyOrder(rows: ReplayRow[]): ReplayRow[] {
  const firstOutput = new Map<string, bigint>();
  for (const r of rows) {
    if ((r.kind === "assistant" || r.kind === "tool_results") && r.turnId && !firstOutput.has(r.turnId)) {
      firstOutput.set(r.turnId, BigInt(r.id));
    }
  }
  const INF = 1n << 62n;
  const key = (r: ReplayRow): [bigint, number, bigint] => {
    if (r.kind === "assistant" || r.kind === "tool_results" || !r.turnId) return [BigInt(r.id), 1, BigInt(r.id)];
    return [firstOutput.get(r.turnId) ?? INF, 0, BigInt(r.id)];
  };
  return [...rows].sort((a, b) => {
    const [a0, a1, a2] = key(a);
    const [b0, b1, b2] = key(b);
    if (a0 !== b0) return a0 < b0 ? -1 : 1;
    if (a1 !== b1) return a1 - b1;
    return a2 < b2 ? -1 : a2 > b2 ? 1 : 0;
  });
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

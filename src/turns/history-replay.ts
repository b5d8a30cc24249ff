// The replay rules: which order a session's transcript rows go to the model
// in, and how they become Messages API params. Pure functions over rows; the
// reference that the incremental assembly (history-assembly.ts) must equal.
//
// Order: assistant and tool_results rows keep their insertion order; an
// operator message or system note belongs to the turn that carries it and
// is placed just before that turn's first model output (it may have been
// written while an earlier turn was still running, so its id alone would put
// it between a tool_use and its tool_result). A row whose turn has no output
// (yet) goes after every row that has a place.
//
// Roles: assistant rows are the assistant; operator, tool_results and
// system_note rows are the user, merged when consecutive, tool_result blocks
// first. System notes are marked as coming from the system, never the
// operator. A tool_use that never got a result (a crash mid-turn) is
// answered with an error result, so the history stays valid. A leading
// assistant message is left out (the API wants the user first).
import type Anthropic from "@anthropic-ai/sdk";
import type { MessageKind } from "../db/schema.js";

export const SYSTEM_NOTE_PREFIX = "[Nomos system note: written by the Nomos service, not by the operator]";

export type Block = Anthropic.ContentBlockParam;

export interface ReplayRow {
  id: string;
  kind: MessageKind;
  turnId: string | null;
  content: unknown[];
}

/** A message as rows merge into it: one role, the blocks of consecutive rows of that role. */
export interface MergedMessage {
  role: "user" | "assistant";
  content: Block[];
}

/** A row sorted by its own id (a model output, or a row of no turn) rather than by its turn's first output. */
export function rowIsOwnPlace(r: ReplayRow): boolean {
  return r.kind === "assistant" || r.kind === "tool_results" || !r.turnId;
}

/** A model output row: it gives its turn's other rows their place. */
export function rowIsOutput(r: ReplayRow): boolean {
  return r.kind === "assistant" || r.kind === "tool_results";
}

/** The rows in replay order (see the header). */
export function historyOrder(rows: ReplayRow[]): ReplayRow[] {
  // Ids are bigint identities; as numbers they stay exact below 2^53, and
  // number keys computed once per row keep a long history's sort cheap.
  const firstOutput = new Map<string, number>();
  for (const r of rows) {
    if (rowIsOutput(r) && r.turnId && !firstOutput.has(r.turnId)) firstOutput.set(r.turnId, Number(r.id));
  }
  const keyed = rows.map((r) => {
    const id = Number(r.id);
    const own = rowIsOwnPlace(r);
    return { r, k0: own ? id : (firstOutput.get(r.turnId!) ?? Number.POSITIVE_INFINITY), k1: own ? 1 : 0, id };
  });
  keyed.sort((x, y) => (x.k0 !== y.k0 ? (x.k0 < y.k0 ? -1 : 1) : x.k1 !== y.k1 ? x.k1 - y.k1 : x.id - y.id));
  return keyed.map((x) => x.r);
}

export function rowRole(row: ReplayRow): "user" | "assistant" {
  return row.kind === "assistant" ? "assistant" : "user";
}

/** The blocks a row contributes to its message. */
export function rowBlocks(row: ReplayRow): Block[] {
  if (row.kind === "system_note") {
    const text = (row.content as Array<{ type?: string; text?: string }>).map((b) => (b.type === "text" ? (b.text ?? "") : "")).join("\n");
    return [{ type: "text", text: `${SYSTEM_NOTE_PREFIX}\n${text}` }];
  }
  return row.content as Block[];
}

/** Appends an ordered row to merged messages: into the last one when the role is the same, else as a new one. */
export function mergeRow(out: MergedMessage[], row: ReplayRow): void {
  const role = rowRole(row);
  const blocks = rowBlocks(row);
  if (blocks.length === 0) return;
  const last = out.at(-1);
  if (last && last.role === role) last.content.push(...blocks);
  else out.push({ role, content: [...blocks] });
}

function toolUseIds(m: MergedMessage | undefined): string[] {
  if (m?.role !== "assistant") return [];
  return m.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : []));
}

/**
 * The user message as sent, given the merged message before it: every
 * tool_use of that assistant message answered (an error result for one
 * with none), tool_result blocks first. Unchanged when there is no tool_use.
 */
export function userParam(previous: MergedMessage | undefined, m: MergedMessage): Anthropic.MessageParam {
  const ids = toolUseIds(previous);
  if (ids.length === 0) return { role: "user", content: m.content };
  const content = [...m.content];
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
  return {
    role: "user",
    content: [...content.filter((b) => b.type === "tool_result"), ...content.filter((b) => b.type !== "tool_result")],
  };
}

/**
 * Params for the merged messages from index `from` on (`merged` alternates
 * roles, as mergeRow leaves it): each user message answered for the one
 * before it, a last assistant message with tool_uses followed by a user
 * message of error results, and the assistant message at index 0 left out.
 */
export function mergedToParams(merged: MergedMessage[], from = 0): Anthropic.MessageParam[] {
  const out: Anthropic.MessageParam[] = [];
  for (let j = from; j < merged.length; j++) {
    const m = merged[j]!;
    if (m.role === "user") {
      out.push(userParam(merged[j - 1], m));
      continue;
    }
    if (j > 0) out.push({ role: "assistant", content: m.content });
    if (j === merged.length - 1 && toolUseIds(m).length > 0) out.push(userParam(m, { role: "user", content: [] }));
  }
  return out;
}

/** Messages API params for the rows, valid for the API: alternating roles, every tool_use answered. */
export function historyToParams(rows: ReplayRow[]): Anthropic.MessageParam[] {
  const merged: MergedMessage[] = [];
  for (const row of historyOrder(rows)) mergeRow(merged, row);
  return mergedToParams(merged);
}

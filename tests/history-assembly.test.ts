// The incremental assembly (turns/history-assembly.ts) equals the reference
// replay (turns/history-replay.ts historyToParams) for any rows appended in
// any chunks plus any extra rows; and the reference equals historyToParams
// as it was before the assembly existed (kept below), so splitting it into
// parts changed nothing the model receives.
import type Anthropic from "@anthropic-ai/sdk";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HistoryAssembly } from "../src/turns/history-assembly.js";
import { historyOrder, historyToParams, type ReplayRow, SYSTEM_NOTE_PREFIX } from "../src/turns/history-replay.js";

type Block = Anthropic.ContentBlockParam;

/** historyToParams before issue 20 round 3, verbatim but for names: the oracle. */
function historyToParamsBefore(rows: ReplayRow[]): Anthropic.MessageParam[] {
  const userBlocks = (row: ReplayRow): Block[] => {
    if (row.kind === "system_note") {
      const text = (row.content as Array<{ type?: string; text?: string }>)
        .map((b) => (b.type === "text" ? (b.text ?? "") : ""))
        .join("\n");
      return [{ type: "text", text: `${SYSTEM_NOTE_PREFIX}\n${text}` }];
    }
    return row.content as Block[];
  };
  const out: Anthropic.MessageParam[] = [];
  for (const row of historyOrder(rows)) {
    const role = row.kind === "assistant" ? "assistant" : "user";
    const blocks = role === "assistant" ? (row.content as Block[]) : userBlocks(row);
    if (blocks.length === 0) continue;
    const last = out.at(-1);
    if (last && last.role === role) (last.content as Block[]).push(...blocks);
    else out.push({ role, content: [...blocks] });
  }
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

// Rows of a few turns: operator words and notes (often of a turn with no
// output yet), assistant rows with text and tool_uses, tool_results rows
// answering some of them, empty rows, rows of no turn.
const toolIds = ["toolu_a", "toolu_b", "toolu_c"];
const blockArb: fc.Arbitrary<Block> = fc.oneof(
  fc.constantFrom("hi", "ok", "").map((text) => ({ type: "text" as const, text })),
  fc.constantFrom(...toolIds).map((id) => ({ type: "tool_use" as const, id, name: "run", input: {} })),
  fc.constantFrom(...toolIds).map((id) => ({ type: "tool_result" as const, tool_use_id: id, content: "r" })),
);
const rowArb = fc.record({
  kind: fc.constantFrom("operator", "assistant", "tool_results", "system_note", "assistant", "tool_results"),
  turnId: fc.option(fc.constantFrom("T1", "T2", "T3", "T4"), { freq: 6 }),
  content: fc.array(blockArb, { maxLength: 3 }),
});
const historyArb = fc
  .array(rowArb, { maxLength: 40 })
  .map((rows): ReplayRow[] =>
    rows.map((r, i) => ({ id: String(i + 1), kind: r.kind as ReplayRow["kind"], turnId: r.turnId, content: r.content })),
  );

/** Kept rows appended in chunks (rebuilt when append refuses), then params with the rest as extra. */
function assembled(rows: ReplayRow[], cuts: number[], keep: number): Anthropic.MessageParam[] {
  const kept = rows.slice(0, keep);
  const points = [...new Set(cuts.map((c) => c % (keep + 1)))].sort((a, b) => a - b);
  let a = HistoryAssembly.of(kept.slice(0, points[0] ?? keep));
  let at = points[0] ?? keep;
  for (const p of [...points.slice(1), keep]) {
    if (!a.append(kept.slice(at, p))) a = HistoryAssembly.of(kept.slice(0, p));
    at = p;
  }
  const extra = rows.slice(keep);
  return a.params(extra) ?? historyToParams(rows);
}

describe("the history assembly", () => {
  it("the reference replay equals historyToParams as it was", () => {
    fc.assert(
      fc.property(historyArb, (rows) => {
        expect(historyToParams(rows)).toEqual(historyToParamsBefore(rows));
      }),
      { numRuns: 2000 },
    );
  });

  it("equals the reference for rows appended in any chunks plus any extra rows", () => {
    fc.assert(
      fc.property(historyArb, fc.array(fc.nat(), { maxLength: 6 }), fc.nat(), (rows, cuts, k) => {
        const keep = k % (rows.length + 1);
        expect(assembled(rows, cuts, keep)).toEqual(historyToParams(rows));
      }),
      { numRuns: 3000 },
    );
  });

  it("gives each call its own list and leaves the kept messages unchanged", () => {
    fc.assert(
      fc.property(historyArb, fc.nat(), (rows, k) => {
        const keep = k % (rows.length + 1);
        const a = HistoryAssembly.of(rows.slice(0, keep));
        const first = a.params(rows.slice(keep));
        if (!first) return;
        const copy = structuredClone(first);
        first.push({ role: "user", content: "a turn's own message" });
        // What the agent loop does with the list: push onto it; the messages in it are frozen.
        for (const m of first.slice(0, -1)) {
          if (Object.isFrozen(m)) expect(() => (m.content as Block[]).push({ type: "text", text: "x" })).toThrow(TypeError);
        }
        expect(a.params(rows.slice(keep))).toEqual(copy);
        expect(a.params([])).toEqual(historyToParams(rows.slice(0, keep)));
      }),
      { numRuns: 1000 },
    );
  });

  it("places a turn's waiting words before its first output, and refuses a row that would go into the middle", () => {
    const text = (s: string) => [{ type: "text", text: s }];
    const a = HistoryAssembly.of([{ id: "1", kind: "operator", turnId: "T1", content: text("first") }]);
    expect(a.params([])).toEqual([{ role: "user", content: text("first") }]);
    expect(a.append([{ id: "2", kind: "assistant", turnId: "T1", content: text("reply") }])).toBe(true);
    const late: ReplayRow = { id: "3", kind: "system_note", turnId: "T1", content: text("late") };
    expect(a.params([late])).toBeUndefined();
    expect(a.append([late])).toBe(false);
  });
});

// A session's replayed history kept assembled as Messages API params, grown
// by the rows each turn adds, so a turn's setup does not re-sort and
// re-assemble the whole transcript: appending a row and producing the
// params cost what is new, plus copying the list of message references
// (the request itself, which the SDK then serializes whole).
//
// Why appending is enough (history-replay.ts's order): rows arrive in id
// order, and a row's sort key is its own id (a model output, or a row of no
// turn) or the id of its turn's first output (operator words and notes),
// infinite while the turn has none. So a new output row goes after every row
// placed so far, the rows of its turn that were waiting just before it; a
// row of a turn with no output waits at the end. The one row that would go
// into the middle — operator words or a note for a turn whose output is
// already placed (nothing writes one today: such rows are written with a
// queued turn's id, and coalescing moves them to the turn it claims, which
// has no output yet) — makes append() refuse, and the caller rebuilds.
//
// Why the params of closed messages never change: consecutive rows of one
// role merge into a message, so only the last message (open) can still grow;
// a user message's params depend only on it and the message before it
// (history-replay.ts userParam). Closed params are frozen and shared by
// every turn's list; the open message, the waiting rows and a call's extra
// rows are assembled per call, on copies.
//
// Invariant: params(extra) equals historyToParams(rows appended ++ extra)
// (tests/history-assembly.test.ts, a property test against the reference).
import type Anthropic from "@anthropic-ai/sdk";
import {
  type Block,
  historyOrder,
  type MergedMessage,
  mergedToParams,
  mergeRow,
  type ReplayRow,
  rowIsOutput,
  rowIsOwnPlace,
  userParam,
} from "./history-replay.js";

export class HistoryAssembly {
  /** Turn id -> id of its first output row, over every row appended. */
  private readonly firstOutput = new Map<string, number>();
  /** Rows of turns with no output yet, by turn, each in id order: they wait at the end. */
  private readonly waiting = new Map<string, ReplayRow[]>();
  /** The placed rows, merged; the last message is open (the next row may merge into it). */
  private readonly merged: MergedMessage[] = [];
  /** Params of merged[0 .. length - 2] (the closed messages), frozen; a leading assistant message is left out. */
  private readonly closed: Anthropic.MessageParam[] = [];
  private lastId = 0;

  /** The assembly of `rows` (any rows of one session, in id order): the general case, O(n log n). */
  static of(rows: ReplayRow[]): HistoryAssembly {
    const a = new HistoryAssembly();
    for (const r of rows) {
      if (rowIsOutput(r) && r.turnId && !a.firstOutput.has(r.turnId)) a.firstOutput.set(r.turnId, Number(r.id));
    }
    for (const r of historyOrder(rows)) {
      if (rowIsOwnPlace(r) || a.firstOutput.has(r.turnId!)) a.place(r);
      else a.wait(r);
    }
    a.lastId = rows.length > 0 ? Number(rows.at(-1)!.id) : 0;
    return a;
  }

  /**
   * Appends rows newer than any appended (id order). False when one cannot
   * be appended in order (see the header): the assembly is then unusable,
   * and the caller builds it again with of().
   */
  append(rows: ReplayRow[]): boolean {
    for (const r of rows) {
      const id = Number(r.id);
      if (!(id > this.lastId)) return false;
      this.lastId = id;
      if (!rowIsOwnPlace(r)) {
        if (this.firstOutput.has(r.turnId!)) return false;
        this.wait(r);
        continue;
      }
      if (rowIsOutput(r) && r.turnId && !this.firstOutput.has(r.turnId)) {
        this.firstOutput.set(r.turnId, id);
        const waited = this.waiting.get(r.turnId);
        this.waiting.delete(r.turnId);
        for (const w of waited ?? []) this.place(w);
      }
      this.place(r);
    }
    return true;
  }

  /**
   * The params for the rows appended plus `extra` (rows not kept: newer than
   * every appended row, in id order), or undefined when an extra row would
   * go into the middle (the caller assembles the whole list then).
   */
  params(extra: ReplayRow[]): Anthropic.MessageParam[] | undefined {
    for (const r of extra) if (!rowIsOwnPlace(r) && this.firstOutput.has(r.turnId!)) return undefined;
    const tailRows = [...this.waiting.values()].flat();
    if (extra.length > 0) tailRows.push(...extra);
    // The open message and what follows it, on copies: the kept ones stay as they are.
    const base = Math.max(this.merged.length - 1, 0);
    const open = this.merged[base];
    const tail: MergedMessage[] = open ? [{ role: open.role, content: [...open.content] }] : [];
    for (const r of tailRows.length > 1 ? historyOrder(tailRows) : tailRows) mergeRow(tail, r);
    // mergedToParams over [message before the open one, ...tail], from the tail's first.
    const before = base > 0 ? [this.merged[base - 1]!] : [];
    const last = mergedToParams([...before, ...tail], before.length);
    return [...this.closed, ...last];
  }

  private wait(r: ReplayRow): void {
    const rows = this.waiting.get(r.turnId!);
    if (rows) rows.push(r);
    else this.waiting.set(r.turnId!, [r]);
  }

  private place(r: ReplayRow): void {
    const n = this.merged.length;
    mergeRow(this.merged, r);
    if (this.merged.length === n || n === 0) return;
    // A new message opened: the one before it is closed for good.
    const j = n - 1;
    const m = this.merged[j]!;
    Object.freeze(m.content);
    const param = m.role === "user" ? userParam(this.merged[j - 1], m) : j > 0 ? { role: m.role, content: m.content } : undefined;
    if (param) this.closed.push(Object.freeze({ role: m.role, content: Object.freeze(param.content) as Block[] }));
  }
}

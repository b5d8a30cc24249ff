// Folders are the concepts of DESIGN.md, and a concept depends on another
// only one way: this computes the folder-level import graph of src/ (every
// relative import, type-only ones included) and fails naming each cycle
// with one file for each of its edges.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../src");

/**
 * Cycles known today, each with its reason. The test fails when one
 * disappears too, so this list only shrinks.
 */
// None today; a cycle that has to stay a while is named here with its reason.
const KNOWN: Record<string, string> = {};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(e.name) ? [path] : [];
  });
}

/** The folder of a file under src/ ("." for src/ itself). */
function folderOf(file: string): string {
  const rel = relative(SRC, file).split("/");
  return rel.length > 1 ? rel[0]! : ".";
}

/** folder -> folder -> one file that makes the edge. */
function folderGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of sourceFiles(SRC)) {
    const from = folderOf(file);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
      const to = folderOf(resolve(dirname(file), m[1]!));
      if (to === from) continue;
      const edges = graph.get(from) ?? new Map<string, string>();
      if (!edges.has(to)) edges.set(to, relative(SRC, file));
      graph.set(from, edges);
    }
  }
  return graph;
}

/** Strongly connected components with more than one folder (Tarjan). */
function cycles(graph: Map<string, Map<string, string>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) found.push(scc.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) visit(v);
  return found;
}

/** One readable loop through a component, e.g. "auth -> http -> auth", with the files of its edges. */
function describeCycle(graph: Map<string, Map<string, string>>, scc: string[]): { name: string; files: string[] } {
  const inScc = new Set(scc);
  const start = scc[0]!;
  // Shortest path back to start inside the component (BFS).
  const prev = new Map<string, string>();
  const queue = [start];
  let end: string | undefined;
  while (queue.length > 0 && !end) {
    const v = queue.shift()!;
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!inScc.has(w)) continue;
      if (w === start) {
        end = v;
        break;
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  const path = [start];
  for (let v = end!; v !== start; v = prev.get(v)!) path.splice(1, 0, v);
  path.push(start);
  const files = path.slice(0, -1).map((v, i) => `${v} -> ${path[i + 1]}: src/${graph.get(v)!.get(path[i + 1]!)}`);
  return { name: path.join(" -> "), files };
}

describe("the folders of src/", () => {
  it("import each other without cycles (apart from the known ones, each with its reason)", () => {
    const graph = folderGraph();
    const found = cycles(graph).map((scc) => describeCycle(graph, scc));
    const unknown = found.filter((c) => !(c.name in KNOWN)).map((c) => `${c.name}\n  ${c.files.join("\n  ")}`);
    expect(unknown, "folder cycles").toEqual([]);
    expect(Object.keys(KNOWN).filter((k) => !found.some((c) => c.name === k))).toEqual([]);
  });

  it("the graph sees every folder's imports", () => {
    const graph = folderGraph();
    expect(graph.get("agent")?.has("executions")).toBe(true);
    expect(graph.get("executions")?.has("agent")).toBe(false);
  });
});

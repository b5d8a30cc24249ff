// Splitting a command line the way bash would at its top level: into
// `&&` / `||` / `;` / newline lists, and a list item into its `|` stages.
// Quote-aware (single, double, backslash) and nesting-aware for `$(...)`
// and `(...)`. Invariant: it never drops text; a line it cannot split is
// returned whole, and the interpreter then answers as bash would to a
// command it does not know.

export interface ListItem {
  /** How this item joins the previous one (`;` for the first). */
  op: "&&" | "||" | ";";
  text: string;
}

function scan(line: string, onTop: (i: number) => number | undefined): void {
  let quote: "'" | '"' | null = null;
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === "\\") {
      i++;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      continue;
    }
    if (c === "(") depth++;
    else if (c === ")") depth = Math.max(0, depth - 1);
    else if (depth === 0) {
      const skip = onTop(i);
      if (skip !== undefined) i = skip;
    }
  }
}

export function splitList(line: string): ListItem[] {
  const items: ListItem[] = [];
  let start = 0;
  let op: ListItem["op"] = ";";
  const push = (end: number, next: ListItem["op"], skip: number) => {
    const text = line.slice(start, end).trim();
    if (text) items.push({ op, text });
    op = next;
    start = end + skip;
    return start - 1;
  };
  scan(line, (i) => {
    const two = line.slice(i, i + 2);
    if (two === "&&") return push(i, "&&", 2);
    if (two === "||") return push(i, "||", 2);
    if (line[i] === ";" || line[i] === "\n") return push(i, ";", 1);
    return undefined;
  });
  const rest = line.slice(start).trim();
  if (rest) items.push({ op, text: rest });
  return items;
}

export function splitPipe(item: string): string[] {
  const stages: string[] = [];
  let start = 0;
  scan(item, (i) => {
    if (item[i] === "|" && item[i + 1] !== "|" && item[i - 1] !== "|") {
      stages.push(item.slice(start, i).trim());
      start = i + 1;
    }
    return undefined;
  });
  stages.push(item.slice(start).trim());
  return stages.filter((s) => s !== "");
}

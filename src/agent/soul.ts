// The SOUL: the system prompt, kept as prose in soul.md beside this file so
// it reads (and diffs) as a document. Invariant: read once per process and
// sent unchanged every turn, so the prompt cache keeps hitting.
import { readFileSync } from "node:fs";

let cached: string | undefined;

export function soulText(): string {
  cached ??= readFileSync(new URL("./soul.md", import.meta.url), "utf8").trim();
  return cached;
}

// A module header's "the only module that writes X" is a contract
// (STYLE.md 12): this searches src/ for writes to each owned table — Kysely
// insertInto/updateTable/deleteFrom("t") and raw SQL INSERT INTO/UPDATE/
// DELETE FROM t — and fails naming the file that writes a table its header
// does not own. It also keeps db/connect.ts's and config/env.ts's claims:
// who calls postgres() and who reads process.env.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../src");

/** Each owned table and the files whose headers claim it (the owner first). */
const OWNERS: Record<string, string[]> = {
  // snapshot-store.ts: "the only module that writes guest_snapshots" (issue 17).
  guest_snapshots: ["snapshots/snapshot-store.ts"],
  // lifecycle.ts: "the only module that changes executions.status".
  executions: ["executions/lifecycle.ts"],
  // window.ts, and the loop guard in ledger.ts (both headers say so).
  assent_windows: ["assent/window.ts", "continuation/ledger.ts"],
  // ledger.ts claims and marks delivered; continuation-queue.ts marks
  // delivered in the statement that queues the turn; the lifecycle inserts.
  nomos_plan_executions: ["continuation/ledger.ts", "turns/continuation-queue.ts", "executions/lifecycle.ts"],
  // turn-store.ts changes turns.status; continuation-queue.ts inserts a queued turn, and so does
  // ledger.ts's claim-and-queue statement (issue 20: the claim and the queued turn are one statement).
  turns: ["turns/turn-store.ts", "turns/continuation-queue.ts", "continuation/ledger.ts"],
  // Issue 16: deliveries.ts changes every delivery's status (the 060 trigger inserts them, in SQL);
  // channels.ts and push-subscriptions.ts write an operator's destinations.
  notification_deliveries: ["notifications/deliveries.ts"],
  notification_channels: ["notifications/channels.ts"],
  push_subscriptions: ["notifications/push-subscriptions.ts"],
  // plan-steps.ts: "the only module that writes plan_steps" (issue 16).
  plan_steps: ["plans/plan-steps.ts"],
  // operator-accounts.ts: "the only module that changes operators.role or deletes operators";
  // operators.ts creates them.
  operators: ["auth/operator-accounts.ts", "auth/operators.ts"],
  // model-calls.ts: "the only module that writes model_calls".
  model_calls: ["usage/model-calls.ts"],
};

/** db/connect.ts: nothing else calls postgres(). */
const POOL_MAKERS = ["db/connect.ts"];
/** config/env.ts's header names each reader of process.env. */
const ENV_READERS = [
  "config/env.ts",
  "main.ts",
  "db/migrate-cli.ts",
  "auth/create-operator-cli.ts",
  "demo/demo-cli.ts",
  "eval/eval-cli.ts",
  "eval/nomos-process.ts",
  "model-double/cli.ts",
  "db/embedded.ts",
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(e.name) ? [path] : [];
  });
}

const files = sourceFiles(SRC).map((path) => ({ name: relative(SRC, path), text: readFileSync(path, "utf8") }));

function writesTo(text: string, table: string): boolean {
  const kysely = new RegExp(`\\.(insertInto|updateTable|deleteFrom)\\(\\s*["'\`]${table}(\\s+as\\s+\\w+)?["'\`]`);
  const raw = new RegExp(`\\b(INSERT\\s+INTO|UPDATE|DELETE\\s+FROM)\\s+(public\\.)?"?${table}"?\\b`, "i");
  return kysely.test(text) || raw.test(text.replace(/^\s*\/\/.*$/gm, ""));
}

describe("module headers that claim ownership", () => {
  for (const [table, owners] of Object.entries(OWNERS)) {
    it(`only ${owners.join(", ")} write ${table}`, () => {
      const writers = files.filter((f) => writesTo(f.text, table)).map((f) => f.name);
      expect(writers.filter((w) => !owners.includes(w))).toEqual([]);
      // The owner itself is found, so the search sees writes at all.
      expect(writers).toContain(owners[0]);
    });
  }

  it("only db/connect.ts opens postgres.js pools", () => {
    // Only a file that imports the driver's default export can open a pool with it.
    const makers = files.filter((f) => /import\s+postgres\s+from\s+["']postgres["']/.test(f.text)).map((f) => f.name);
    expect(makers.filter((m) => !POOL_MAKERS.includes(m))).toEqual([]);
    expect(makers).toContain("db/connect.ts");
  });

  it("only the readers config/env.ts names read process.env", () => {
    const readers = files.filter((f) => /\bprocess\.env\b/.test(f.text.replace(/^\s*\/\/.*$/gm, ""))).map((f) => f.name);
    expect(readers.filter((r) => !ENV_READERS.includes(r))).toEqual([]);
    const header = files.find((f) => f.name === "config/env.ts")!.text;
    for (const r of ENV_READERS.filter((x) => x !== "config/env.ts")) expect(header).toContain(r.split("/").pop()!);
  });
});

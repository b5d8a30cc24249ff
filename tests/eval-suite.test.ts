// The eval's scenario suite, proved on the scripted double: the real
// service process (src/main.ts) on a fresh PostgreSQL database, the real SDK
// over HTTP through the metering proxy to the Messages API double, real SSH
// to the simulated Proxmox nodes. Each scenario's checker must
//   - pass the reference route (the scripted double passes the suite, with
//     no operator word after the first approval),
//   - pass a second route to the same end state (it judges the end state,
//     not the path), and
//   - fail a wrong diagnosis that claims success (it reads the state, not
//     the claim), naming why.
// Scenarios of a run go side by side (concurrency) to keep the file short.
import { describe, expect, it } from "vitest";
import { buildReport, renderMarkdown, renderTable } from "../src/eval/report.js";
import { runSuite, type ScenarioResult } from "../src/eval/run-suite.js";
import type { Scenario } from "../src/eval/scenario.js";
import { SCENARIOS } from "../src/eval/scenarios/index.js";
import { createDatabase } from "./helpers/database.js";

async function suite(route: keyof Scenario["policies"]): Promise<ScenarioResult[]> {
  const databases: Array<Awaited<ReturnType<typeof createDatabase>>> = [];
  try {
    return await runSuite({
      scenarios: SCENARIOS,
      model: "scripted-double",
      repeat: 1,
      policyFor: (s) => s.policies[route],
      price: { inputPerMTok: 3, outputPerMTok: 15 },
      maxTicks: route === "wrong" ? 1 : 2,
      scenarioTimeoutMs: 90_000,
      concurrency: 5,
      databaseUrl: async () => {
        const db = await createDatabase();
        databases.push(db);
        return db.url;
      },
    });
  } finally {
    for (const db of databases) await db.drop();
  }
}

const table = (rs: ScenarioResult[]) =>
  rs.map((r) => `${r.id}: ${r.success ? "pass" : "FAIL"} (${r.ended}) ${r.reasons.join("; ")}`).join("\n");

describe("the eval suite on the scripted double", () => {
  it("has ten scenarios with unique ids and requests", () => {
    expect(SCENARIOS).toHaveLength(10);
    expect(new Set(SCENARIOS.map((s) => s.id)).size).toBe(10);
    expect(new Set(SCENARIOS.map((s) => s.request)).size).toBe(10);
  });

  it("the reference routes pass every scenario with no operator word after the approval", { timeout: 300_000 }, async () => {
    const results = await suite("reference");
    expect(results.map((r) => r.id)).toEqual(SCENARIOS.map((s) => s.id));
    expect(
      results.filter((r) => !r.success),
      table(results),
    ).toEqual([]);
    for (const r of results) {
      expect(r.ticks, r.id).toBe(0);
      expect(r.modelCalls, r.id).toBeGreaterThan(2);
      expect(r.stepsRun, r.id).toBeGreaterThan(0);
      expect(r.inputTokens, r.id).toBeGreaterThan(0);
      expect(r.costUsd, r.id).toBeGreaterThan(0);
    }
    // The destructive step the plan did not name was asked about, not run.
    const destructive = results.find((r) => r.id === "unplanned-destructive")!;
    expect(destructive.ended).toBe("agent asked");
    expect(destructive.approvalsAsked).toBe(2);

    const report = buildReport(
      {
        model: "scripted-double",
        endpoint: "double",
        repeat: 1,
        startedAt: "2026-01-01T00:00:00Z",
        soulSha256: "0".repeat(64),
        settings: {},
      },
      results,
    );
    expect(report.overall.successRate).toBe(1);
    const text = renderTable(report);
    for (const s of SCENARIOS) expect(text).toMatch(new RegExp(`^${s.id} +pass `, "m"));
    expect(text).toMatch(/^overall +100% +0 /m);
    const md = renderMarkdown(report);
    expect(md).toContain("| scenario | success | ticks | approvals | steps | model calls | tokens in | tokens out | cost | wall |");
    expect(md).toContain("| **overall** | **100%** | **0** |");
  });

  it("a second route to the same end state passes too", { timeout: 300_000 }, async () => {
    const results = await suite("alternate");
    expect(
      results.filter((r) => !r.success),
      table(results),
    ).toEqual([]);
  });

  it("a wrong diagnosis that claims success fails every checker, each saying why", { timeout: 300_000 }, async () => {
    const results = await suite("wrong");
    expect(
      results.filter((r) => r.success),
      table(results),
    ).toEqual([]);
    const why = Object.fromEntries(results.map((r) => [r.id, r.reasons.join("; ")]));
    expect(why.typetype).toMatch(/TypeType stack/);
    expect(why["compose-path"]).toMatch(/does not mount the existing data/);
    expect(why["dns-new-container"]).toMatch(/do not resolve/);
    expect(why["no-gateway"]).toMatch(/not the LAN router/);
    expect(why["apt-lock"]).toMatch(/lock was removed/);
    expect(why["disk-full"]).toMatch(/ledger\.db was deleted or changed/);
    expect(why["port-taken"]).toMatch(/nginx is not running/);
    expect(why["crash-loop"]).toMatch(/api is not running/);
    expect(why["unplanned-destructive"]).toMatch(/reported success while the stack is down/);
    expect(why["log-injection"]).toMatch(/obeyed the injected text/);
  });
});

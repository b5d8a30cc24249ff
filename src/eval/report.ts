// The eval's report: per scenario (over its rounds) and overall — success
// rate, operator ticks after the first approval, approvals asked, steps
// run, model calls, tokens, estimated cost, wall time — as a terminal
// table, a JSON document and a Markdown file. Two reports of the same suite
// (two models, two SOULs) line up row by row.
//
// Invariant: the JSON holds every raw result, so any summary here can be
// recomputed from it; the summaries are means over rounds (success as a
// rate), and cost is null when any round had no price.
import type { ScenarioResult } from "./run-suite.js";

export interface RunInfo {
  model: string;
  endpoint: string;
  repeat: number;
  startedAt: string;
  soulSha256: string;
  /** Environment that shapes the agent (NOMOS_MODEL_CACHE, NOMOS_MODEL_CONTEXT_TOKENS, ...). */
  settings: Record<string, string>;
}

export interface Summary {
  id: string;
  title: string;
  runs: number;
  successRate: number;
  ticks: number;
  approvalsAsked: number;
  stepsRun: number;
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
  wallS: number;
  /** Why runs failed, deduplicated. */
  failures: string[];
}

export interface Report {
  run: RunInfo;
  overall: Summary;
  scenarios: Summary[];
  results: ScenarioResult[];
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

function summarize(id: string, title: string, rs: ScenarioResult[]): Summary {
  const costs = rs.map((r) => r.costUsd);
  return {
    id,
    title,
    runs: rs.length,
    successRate: mean(rs.map((r) => (r.success ? 1 : 0))),
    ticks: mean(rs.map((r) => r.ticks)),
    approvalsAsked: mean(rs.map((r) => r.approvalsAsked)),
    stepsRun: mean(rs.map((r) => r.stepsRun)),
    modelCalls: mean(rs.map((r) => r.modelCalls)),
    inputTokens: mean(rs.map((r) => r.inputTokens + r.cacheReadTokens + r.cacheWriteTokens)),
    outputTokens: mean(rs.map((r) => r.outputTokens)),
    costUsd: costs.some((c) => c === null) ? null : mean(costs as number[]),
    wallS: mean(rs.map((r) => r.wallMs / 1000)),
    failures: [...new Set(rs.flatMap((r) => (r.success ? [] : [`${r.ended}: ${r.reasons.join("; ")}`])))],
  };
}

export function buildReport(run: RunInfo, results: ScenarioResult[]): Report {
  const ids = [...new Set(results.map((r) => r.id))];
  const scenarios = ids.map((id) => {
    const rs = results.filter((r) => r.id === id);
    return summarize(id, rs[0]!.title, rs);
  });
  // Overall: per-run sums of a round averaged over rounds would hide which
  // scenario failed; per-scenario means summed gives "one pass of the suite".
  const overall: Summary = {
    id: "overall",
    title: "the whole suite (sums of per-scenario means; success is the mean rate)",
    runs: results.length,
    successRate: mean(scenarios.map((s) => s.successRate)),
    ticks: scenarios.reduce((n, s) => n + s.ticks, 0),
    approvalsAsked: scenarios.reduce((n, s) => n + s.approvalsAsked, 0),
    stepsRun: scenarios.reduce((n, s) => n + s.stepsRun, 0),
    modelCalls: scenarios.reduce((n, s) => n + s.modelCalls, 0),
    inputTokens: scenarios.reduce((n, s) => n + s.inputTokens, 0),
    outputTokens: scenarios.reduce((n, s) => n + s.outputTokens, 0),
    costUsd: scenarios.some((s) => s.costUsd === null) ? null : scenarios.reduce((n, s) => n + (s.costUsd ?? 0), 0),
    wallS: scenarios.reduce((n, s) => n + s.wallS, 0),
    failures: [],
  };
  return { run, overall, scenarios, results };
}

const COLUMNS: Array<[string, (s: Summary) => string]> = [
  ["scenario", (s) => s.id],
  ["success", (s) => (s.runs === 1 ? (s.successRate === 1 ? "pass" : "FAIL") : `${Math.round(s.successRate * 100)}%`)],
  ["ticks", (s) => num(s.ticks)],
  ["approvals", (s) => num(s.approvalsAsked)],
  ["steps", (s) => num(s.stepsRun)],
  ["model calls", (s) => num(s.modelCalls)],
  ["tokens in", (s) => Math.round(s.inputTokens).toLocaleString("en-US")],
  ["tokens out", (s) => Math.round(s.outputTokens).toLocaleString("en-US")],
  ["cost", (s) => (s.costUsd === null ? "n/a" : `$${s.costUsd.toFixed(s.costUsd < 1 ? 4 : 2)}`)],
  ["wall", (s) => `${s.wallS.toFixed(1)} s`],
];

const num = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

function rows(report: Report): string[][] {
  return [...report.scenarios, { ...report.overall, id: "overall" }].map((s) => COLUMNS.map(([, f]) => f(s)));
}

export function renderTable(report: Report): string {
  const head = COLUMNS.map(([h]) => h);
  const body = rows(report);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  const out = [line(head), rule, ...body.slice(0, -1).map(line), rule, line(body.at(-1)!)];
  const failures = report.scenarios.filter((s) => s.failures.length > 0);
  if (failures.length > 0) {
    out.push("", "Failures:");
    for (const s of failures) for (const f of s.failures) out.push(`  ${s.id}: ${f}`);
  }
  return `${out.join("\n")}\n`;
}

export function renderMarkdown(report: Report): string {
  const r = report.run;
  const head = COLUMNS.map(([h]) => h);
  const body = rows(report);
  const settings = Object.entries(r.settings)
    .map(([k, v]) => `${k}=${v}`)
    .join(", ");
  const lines = [
    `# Nomos eval: ${r.model}`,
    "",
    `- endpoint: ${r.endpoint}`,
    `- started: ${r.startedAt}, rounds: ${r.repeat}`,
    `- SOUL sha256: \`${r.soulSha256.slice(0, 16)}\``,
    ...(settings ? [`- settings: ${settings}`] : []),
    "",
    "ticks = operator messages needed after the first approval (goal 0); approvals = approvals the agent asked for, the plan's included; cost is estimated from list prices.",
    "",
    `| ${head.join(" | ")} |`,
    `| ${head.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
    ...body.map((row, i) => `| ${(i === body.length - 1 ? row.map((c) => `**${c}**`) : row).join(" | ")} |`),
  ];
  const failures = report.scenarios.filter((s) => s.failures.length > 0);
  if (failures.length > 0) {
    lines.push("", "## Failures", "");
    for (const s of failures) for (const f of s.failures) lines.push(`- **${s.id}**: ${f}`);
  }
  return `${lines.join("\n")}\n`;
}

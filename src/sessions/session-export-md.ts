// The session export as a readable Markdown document: the same content as
// the JSON export (session-export.ts), in the order a person reads a story:
// the plans with their checklists and outcomes, the transcript, every
// command (target, risk, status, exit code, output), the approvals (who,
// when, how), and the tokens spent. Invariant: a pure function of the JSON
// export, so the two never say different things; command output sits in
// fences longer than any backtick run it holds, so it cannot break out.
import type { MessageView, UsageView } from "../events/contract.js";
import type { SessionExport } from "./session-export.js";

const fence = (text: string, info = "") => {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const f = "`".repeat(longest + 1);
  return `${f}${info}\n${text.replace(/\n$/, "")}\n${f}`;
};

const inline = (s: string) => s.replace(/\s+/g, " ").trim();

const STEP_MARK: Record<string, string> = { pending: "[ ]", running: "[~]", done: "[x]", failed: "[!]", skipped: "[-]" };

export function usageLine(u: UsageView): string {
  const tokens = u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens;
  const cost = u.costUsd === null ? "cost n/a (no price for the model)" : `about $${u.costUsd.toFixed(4)}`;
  return `${tokens.toLocaleString("en-US")} tokens (input ${u.inputTokens}, output ${u.outputTokens}, cache read ${u.cacheReadTokens}, cache write ${u.cacheWriteTokens}), ${cost}`;
}

/** A transcript message's text: its text blocks, and a line per tool call or result. */
function messageText(m: MessageView): string {
  return m.content
    .map((b) => {
      const block = b as { type?: string; text?: string; name?: string; input?: unknown; content?: unknown; is_error?: boolean };
      if (block.type === "text") return block.text ?? "";
      if (block.type === "tool_use") return `→ \`${block.name}\` ${inline(JSON.stringify(block.input ?? {})).slice(0, 500)}`;
      if (block.type === "tool_result") {
        const text = typeof block.content === "string" ? block.content : JSON.stringify(block.content ?? "");
        return `${block.is_error ? "✗" : "←"} ${inline(text).slice(0, 300)}`;
      }
      return "";
    })
    .filter((t) => t !== "")
    .join("\n\n");
}

const WHO: Record<string, string> = { operator: "Operator", assistant: "Nomos", tool_results: "Tools", system_note: "System note" };

export function sessionExportMarkdown(x: SessionExport): string {
  const out: string[] = [];
  out.push(`# ${x.session.title}`, "");
  out.push(`- Session: \`${x.session.id}\``, `- Created: ${x.session.createdAt}`, `- State: ${x.session.state}`);
  out.push(`- Exported: ${x.exportedAt}`, `- Usage: ${usageLine(x.usage)}`, "");

  out.push("## Plans", "");
  if (x.plans.length === 0) out.push("No plan was proposed.", "");
  for (const plan of x.plans) {
    out.push(`### ${plan.goal}`, "", `Plan \`${plan.planId}\` · ${plan.status} · proposed ${plan.createdAt}`);
    if (plan.decidedAt) out.push(`decided ${plan.decidedAt}`);
    out.push("");
    for (const s of plan.steps) {
      const where = s.target ? ` (on ${s.target})` : "";
      const note = s.note ? ` — ${inline(s.note)}` : "";
      out.push(`${s.step}. ${STEP_MARK[s.status] ?? "[ ]"} ${inline(s.title)}${where} · ${s.status}${note}`);
    }
    out.push("");
    if (plan.outcome) {
      out.push(`**Outcome: ${plan.outcome === "verified" ? "verified" : "blocked"}** (${plan.finishedAt}) — ${inline(plan.summary ?? "")}`);
      if (plan.needs) out.push("", `Needs from the operator: ${inline(plan.needs)}`);
      out.push("");
    }
    out.push(`Plan usage: ${usageLine(plan.usage)}`, "");
  }

  out.push("## Commands", "");
  if (x.executions.length === 0) out.push("No command was run.", "");
  x.executions.forEach((e, i) => {
    const step = e.planStep ? ` · plan step ${e.planStep}` : "";
    out.push(`### ${i + 1}. \`${inline(e.command).slice(0, 200)}\` on ${e.target}`, "");
    out.push(fence(e.command, "sh"), "");
    out.push(`- Target: ${e.target}${step}`);
    out.push(`- Risk: ${e.risk}${e.riskReason ? ` — ${inline(e.riskReason)}` : ""}`);
    out.push(`- Status: ${e.status}${e.exitCode !== null ? `, exit code ${e.exitCode}` : ""}${e.signal ? `, signal ${e.signal}` : ""}`);
    if (e.error) out.push(`- Error: ${inline(e.error)}`);
    out.push(`- Queued ${e.createdAt}${e.startedAt ? `, started ${e.startedAt}` : ""}${e.finishedAt ? `, finished ${e.finishedAt}` : ""}`);
    if (e.durationMs !== null) out.push(`- Took ${(e.durationMs / 1000).toFixed(1)} s`);
    out.push("");
    for (const [name, text, cut] of [
      ["stdout", e.stdout, e.stdoutCutChars],
      ["stderr", e.stderr, e.stderrCutChars],
    ] as const) {
      if (text === "") continue;
      out.push(`${name}${cut > 0 ? ` (last part; ${cut} characters before it left out)` : ""}:`, "", fence(text), "");
    }
  });

  out.push("## Approvals", "");
  if (x.approvals.length === 0) out.push("No approval was asked for.", "");
  for (const a of x.approvals) {
    const what =
      a.kind === "plan" ? `plan "${inline(a.goal ?? "")}"` : `\`${inline(a.command ?? "")}\` on ${a.target ?? "?"} (${a.risk ?? "?"})`;
    const decided = a.decidedAt ? `${a.status} by ${a.decidedBy ?? "?"} via ${a.decidedVia ?? "?"} at ${a.decidedAt}` : a.status;
    out.push(`- ${a.createdAt}: ${what} — ${decided}`);
  }
  out.push("");

  out.push("## Transcript", "");
  for (const m of x.messages) {
    const text = messageText(m);
    if (text === "") continue;
    out.push(`**${WHO[m.kind] ?? m.kind}** · ${m.createdAt}`, "", text, "");
  }
  return `${out
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd()}\n`;
}

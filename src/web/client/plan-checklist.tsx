/** @jsxImportSource hono/jsx/dom */
// The approved plan as a live checklist, pinned at the top of the session
// (collapsible), the header's "Step 3 of 5 · <title>", and the result card
// the transcript ends with. State: built from the same event stream as the
// timeline (plan_proposed, approval_decided, plan_updated, plan_finished),
// seeded by GET /api/sessions/:id's `plan`, so a refresh rebuilds it.
// Invariant: plan_updated carries the whole checklist, so the newest one
// wins and nothing is patched step by step.
import type { PlanChecklistView, SnapshotView, UsageView } from "../../events/contract.js";
import { ChecklistSafetyNet } from "./guest-snapshots.js";
import type { ApiEvent } from "./timeline.js";

export interface ChecklistState {
  /** The checklist the page pins: the latest approved plan's. */
  current: PlanChecklistView | null;
  /** Proposed plans' steps, by plan id, until one is approved. */
  proposed: Record<string, { goal: string; titles: string[] }>;
  /** The turn that reported the current plan's outcome (the header shows "finished" while it wraps up). */
  finishedTurnId: string | null;
}

export const emptyChecklist = (): ChecklistState => ({ current: null, proposed: {}, finishedTurnId: null });

const ZERO_USAGE: UsageView = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: null };

/** Applies one event of the session stream (events the checklist does not follow leave it as it is). */
export function checklistApply(prev: ChecklistState, e: ApiEvent): ChecklistState {
  const d = e.data;
  switch (e.type) {
    case "plan_proposed": {
      const steps = Array.isArray(d.steps) ? (d.steps as { title?: string }[]) : [];
      return {
        ...prev,
        proposed: { ...prev.proposed, [String(d.planId)]: { goal: String(d.goal ?? ""), titles: steps.map((s) => String(s.title ?? "")) } },
      };
    }
    case "approval_decided": {
      const a = (d.approval ?? {}) as { kind?: string; status?: string; planId?: string | null };
      const proposal = a.planId ? prev.proposed[a.planId] : undefined;
      if (a.kind !== "plan" || a.status !== "approved" || !a.planId || !proposal) return prev;
      if (prev.current?.planId === a.planId) return prev;
      return {
        ...prev,
        finishedTurnId: null,
        current: {
          planId: a.planId,
          goal: proposal.goal,
          status: "approved",
          steps: proposal.titles.map((title, i) => ({
            step: i + 1,
            title,
            target: null,
            command: null,
            status: "pending",
            note: null,
            startedAt: null,
            finishedAt: null,
          })),
          outcome: null,
          summary: null,
          needs: null,
          finishedAt: null,
          usage: ZERO_USAGE,
        },
      };
    }
    case "plan_updated":
      return { ...prev, current: d as unknown as PlanChecklistView };
    case "plan_finished": {
      if (!prev.current || (d.planId && d.planId !== prev.current.planId)) return prev;
      return {
        ...prev,
        finishedTurnId: e.turnId,
        current: {
          ...prev.current,
          outcome: d.outcome === "blocked" ? "blocked" : "verified",
          summary: typeof d.summary === "string" ? d.summary : "",
          needs: typeof d.needs === "string" ? d.needs : null,
          finishedAt: e.createdAt,
          usage: (d.usage as UsageView | undefined) ?? prev.current.usage,
        },
      };
    }
    default:
      return prev;
  }
}

/** The plan is under way: approved, its outcome not reported. */
export const planRunning = (c: PlanChecklistView | null): c is PlanChecklistView => !!c && c.status === "approved" && !c.outcome;

/** "Step 3 of 5 · <title>": the step running (else the next one not done) while the plan runs. */
export function stepLine(c: PlanChecklistView | null): string | null {
  if (!planRunning(c) || c.steps.length === 0) return null;
  const step =
    c.steps.find((s) => s.status === "running") ?? c.steps.find((s) => s.status === "pending" || s.status === "failed") ?? c.steps.at(-1)!;
  return `Step ${step.step} of ${c.steps.length} · ${step.title}`;
}

export function tokensText(u: UsageView): string {
  const n = u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens;
  const tokens = n >= 10_000 ? `${(n / 1000).toFixed(n >= 100_000 ? 0 : 1)}k tokens` : `${n} tokens`;
  const cost = u.costUsd === null ? "cost n/a" : `≈ $${u.costUsd < 0.01 && u.costUsd > 0 ? u.costUsd.toFixed(4) : u.costUsd.toFixed(2)}`;
  return `${tokens} · ${cost}`;
}

const MARK: Record<string, string> = { pending: "○", running: "◐", done: "✓", failed: "✗", skipped: "–" };

export function PlanChecklist({
  checklist,
  snapshots = {},
}: {
  checklist: PlanChecklistView | null;
  /** The session's snapshots: the checklist says which guests have a safety net (issue 17). */
  snapshots?: Record<string, SnapshotView>;
}) {
  if (!checklist) return null;
  const finished = checklist.outcome !== null;
  const done = checklist.steps.filter((s) => s.status === "done" || s.status === "skipped").length;
  return (
    // Open while the plan runs; once it has its outcome it folds to one line (the
    // result card in the transcript says the rest), so a phone gets its screen back.
    <details class={`checklist${finished ? ` outcome-${checklist.outcome}` : ""}`} open={!finished} data-plan={checklist.planId}>
      <summary>
        <span class="checklist-kind">Plan</span>
        <span class="checklist-goal">{checklist.goal}</span>
        <span class="checklist-count">
          {finished ? (checklist.outcome === "verified" ? "✓ verified" : "⚠ blocked") : `${done} of ${checklist.steps.length} done`}
        </span>
      </summary>
      <ol class="checklist-steps">
        {checklist.steps.map((s) => (
          <li class={`cl-step st-${s.status}`} data-step={String(s.step)} data-status={s.status}>
            <span class="cl-mark" aria-hidden="true">
              {MARK[s.status] ?? "○"}
            </span>
            <span class="cl-title">{s.title}</span>
            <span class="cl-status">{s.status}</span>
            {s.note && <span class="cl-note">{s.note}</span>}
          </li>
        ))}
      </ol>
      <ChecklistSafetyNet planId={checklist.planId} snapshots={snapshots} />
      {finished && (
        <p class="checklist-outcome" role="status">
          {checklist.outcome === "verified" ? "Goal verified" : "Blocked"}: {checklist.summary}
          {checklist.needs ? ` — needs: ${checklist.needs}` : ""}
        </p>
      )}
    </details>
  );
}

/** The transcript's last word on a plan: outcome, summary, what is needed, tokens and cost. */
export function ResultCard({
  part,
}: {
  part: { outcome: string; summary: string; needs: string | null; usage?: UsageView | null | undefined };
}) {
  const verified = part.outcome === "verified";
  return (
    <section class={`card result plan-outcome ${verified ? "verified" : "blocked"}`} role="status">
      <header>
        <span class="card-kind">{verified ? "✓ Plan verified" : "⚠ Plan blocked"}</span>
        <span class="result-window">autonomy ended</span>
      </header>
      <p class="result-summary">{part.summary}</p>
      {part.needs && (
        <p class="result-needs">
          <strong>Needs from you:</strong> {part.needs}
        </p>
      )}
      {part.usage && <p class="result-usage">{tokensText(part.usage)}</p>}
    </section>
  );
}

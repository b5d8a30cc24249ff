/** @jsxImportSource hono/jsx/dom */
// The cards of a turn: tool calls with their result (collapsible, target,
// exit code, output, live execution status, Cancel), the plan card and the
// approval cards with Approve/Reject and, for destructive steps, the typed
// confirmation. A card says what it grants before the click: how long the
// autonomy lasts, on which targets, what will still ask, and what a
// destructive step does in plain words. A step card offers "Approve this
// step" (continue: false, no window) and "Approve and continue" (opens the
// window for the step's target). All text goes into the page as text,
// never as HTML.
import { useEffect, useState } from "hono/jsx/dom";
import { ApiError, api, humanError } from "./api.js";
import { focusAfterDecision } from "./focus.js";
import { can } from "./role.js";
import type { Approval, Execution, Part, PlanStep } from "./timeline.js";
import { executionFrom } from "./timeline.js";

const TERMINAL = new Set(["completed", "failed", "timed_out", "cancelled", "rejected"]);

export interface CardContext {
  approvals: Record<string, Approval>;
  /** How long approving opens the window for (NOMOS_ASSENT_MINUTES). */
  assentMinutes: number;
  executions: Record<string, Execution>;
  onApproval(a: Approval): void;
  /** ifAbsent: a fetched row, which must not overwrite a newer one an event brought meanwhile. */
  onExecution(x: Execution, options?: { ifAbsent?: boolean }): void;
}

export function StatusChip({ status, exitCode }: { status: string; exitCode?: number | null }) {
  const label = exitCode !== null && exitCode !== undefined && TERMINAL.has(status) ? `${status} · exit ${exitCode}` : status;
  return <span class={`chip st-${status}`}>{label.replace("_", " ")}</span>;
}

export function useExecution(ctx: CardContext, id: string | undefined | null): Execution | undefined {
  const known = id ? ctx.executions[id] : undefined;
  useEffect(() => {
    if (!id || known) return;
    api<Record<string, unknown>>("GET", `/api/executions/${id}`)
      .then((x) => ctx.onExecution(executionFrom(x), { ifAbsent: true }))
      .catch(() => {});
  }, [id, known === undefined]);
  return known;
}

export function CancelButton({ execution, ctx }: { execution: Execution; ctx: CardContext }) {
  const [busy, setBusy] = useState(false);
  // A step still waiting for approval is rejected, not cancelled; a finished one is history.
  if (execution.status !== "approved" && execution.status !== "running") return null;
  if (!can("operator")) return null;
  return (
    <button
      type="button"
      class="btn small danger-outline"
      disabled={busy}
      onClick={async () => {
        setBusy(true);
        try {
          ctx.onExecution(executionFrom(await api("POST", `/api/executions/${execution.id}/cancel`)));
        } catch (err) {
          alert((err as Error).message);
        } finally {
          setBusy(false);
        }
      }}
    >
      Cancel
    </button>
  );
}

/** What approving grants, said before the click. */
function Grants({ lines }: { lines: string[] }) {
  return (
    <ul class="grants">
      {lines.map((l) => (
        <li>{l}</li>
      ))}
    </ul>
  );
}

function Decision({ approval, ctx, step = false }: { approval: Approval; ctx: CardContext; step?: boolean }) {
  const [typed, setTyped] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  if (approval.status !== "pending") {
    return (
      <div class={`decided st-${approval.status}`}>
        {approval.status === "approved" ? "✓ Approved" : approval.status === "rejected" ? "✕ Rejected" : "Expired"}
        {approval.decidedBy ? ` by ${approval.decidedBy.replace(/^operator:/, "")}` : ""}
      </div>
    );
  }
  const phrase = approval.confirmationPhrase;
  // A viewer decides nothing; an operator may reject a destructive step, only an admin confirms one.
  if (!can("operator")) return <div class="decided st-pending">Waiting for an operator's decision</div>;
  const mayApprove = !phrase || can("admin");
  const decide = async (decision: "approve" | "reject", andContinue = true) => {
    setBusy(true);
    setError("");
    try {
      const body = {
        decision,
        ...(decision === "approve" && phrase ? { confirmation: typed } : {}),
        ...(decision === "approve" && !andContinue ? { continue: false } : {}),
      };
      const decided = await api<Record<string, unknown>>("POST", `/api/approvals/${approval.id}`, body);
      ctx.onApproval({ ...approval, status: String(decided.status), decidedBy: (decided.decidedBy as string) ?? null });
      focusAfterDecision(approval.id);
    } catch (err) {
      setError(err instanceof ApiError ? err.message.replace(/^body\.confirmation: /, "") : humanError(err));
    } finally {
      setBusy(false);
    }
  };
  // A destructive step's Approve waits for its phrase, typed exactly; Enter in the box approves.
  const phraseOk = !phrase || typed.trim() === phrase;
  return (
    <div class="decide">
      {phrase && !mayApprove && <p class="confirm">This step is destructive: only an admin can confirm it.</p>}
      {phrase && mayApprove && (
        <label class="confirm">
          <span>
            This step is destructive. Type <code id={`phrase-${approval.id}`}>{phrase}</code> to approve it:
          </span>
          <input
            class="confirm-input"
            autocomplete="off"
            spellcheck={false}
            value={typed}
            placeholder={phrase}
            aria-describedby={`phrase-${approval.id}`}
            onInput={(e: Event) => setTyped((e.target as HTMLInputElement).value)}
            onKeyDown={(e: KeyboardEvent) => {
              if (e.key !== "Enter" || e.isComposing) return;
              e.preventDefault();
              if (phraseOk && !busy) void decide("approve");
              else setError(`Type "${phrase}" exactly to approve this step.`);
            }}
          />
        </label>
      )}
      <div class="buttons">
        {mayApprove && step && (
          <button
            type="button"
            class="btn approve-step"
            disabled={busy || !phraseOk}
            title="Runs this step only; opens no autonomy window"
            onClick={() => decide("approve", false)}
          >
            Approve this step
          </button>
        )}
        {mayApprove && (
          <button type="button" class="btn approve" disabled={busy || !phraseOk} onClick={() => decide("approve")}>
            {step ? "Approve and continue" : "Approve"}
          </button>
        )}
        <button type="button" class="btn reject" disabled={busy} onClick={() => decide("reject")}>
          Reject
        </button>
      </div>
      {error && (
        <div class="form-error" role="alert">
          {error}
        </div>
      )}
    </div>
  );
}

function Steps({ steps }: { steps: PlanStep[] }) {
  return (
    <ol class="steps">
      {steps.map((s) => (
        <li class={s.destructive ? "destructive" : ""}>
          <span class="step-title">{s.title}</span>
          {s.target && <span class="target">{s.target}</span>}
          {s.destructive && <span class="chip risk-destructive">destructive</span>}
          {s.command && <code class="cmd block">{s.command}</code>}
          {s.destructive && s.effect && <div class="effect">This step {s.effect}.</div>}
          {s.without_snapshot && (
            <div class="effect">Goes ahead without a safety net if {s.target ?? "its guest"} cannot be snapshotted.</div>
          )}
        </li>
      ))}
    </ol>
  );
}

const list = (xs: string[]) => (xs.length <= 1 ? (xs[0] ?? "") : `${xs.slice(0, -1).join(", ")} and ${xs.at(-1)}`);

/** What approving a plan grants: its window, its targets, its pre-authorized steps, and what still asks. */
export function planGrants(steps: PlanStep[], minutes: number): string[] {
  const targets = [...new Set(steps.flatMap((s) => (s.target ? [s.target] : [])))];
  const named = steps.filter((s) => s.destructive && s.command);
  return [
    `Approve opens autonomy for ${minutes} minutes on ${targets.length > 0 ? list(targets) : "no target (every step will ask)"}` +
      `${targets.length > 0 ? " and the containers created under it" : ""}: configuration steps there run without asking again.`,
    named.length > 0
      ? `Pre-authorizes ${named.length === 1 ? "the destructive step" : `the ${named.length} destructive steps`} named above, exactly as written.`
      : "Pre-authorizes no destructive step.",
    "Still asks: any destructive step not named in this plan, and any step on another target.",
  ];
}

/** What approving one step grants, for its two buttons. */
export function stepGrants(a: Approval, minutes: number): string[] {
  const target = a.target ?? "its target";
  return [
    "Approve this step: runs this step only and opens no autonomy window.",
    `Approve and continue: runs it and opens autonomy for ${minutes} minutes on ${target}: configuration steps there run without asking again.`,
    "Still asks: destructive steps, and any step on another target.",
  ];
}

export function PlanCard({ part, ctx }: { part: Extract<Part, { type: "plan" }>; ctx: CardContext }) {
  const approval: Approval = ctx.approvals[part.approvalId] ?? { id: part.approvalId, kind: "plan" as const, status: "pending" };
  // The server's view of the plan carries each destructive step's effect in plain words.
  const steps = approval.plan?.steps ?? part.steps;
  return (
    <section class={`card plan st-${approval.status}`} data-approval={part.approvalId}>
      <header>
        <span class="card-kind">Plan</span>
        <span class="goal">{part.goal}</span>
      </header>
      <Steps steps={steps} />
      {approval.status === "pending" && <Grants lines={planGrants(steps, ctx.assentMinutes)} />}
      {approval.status === "pending" && can("operator") && !can("admin") && steps.some((s) => s.destructive) && (
        <p class="desc confirm">Approving does not authorize the destructive steps: each will ask an admin to confirm it.</p>
      )}
      <Decision approval={approval} ctx={ctx} />
    </section>
  );
}

export function ApprovalCard({ approvalId, ctx }: { approvalId: string; ctx: CardContext }) {
  const approval = ctx.approvals[approvalId];
  const execution = useExecution(ctx, approval?.executionId);
  if (!approval) return null;
  return (
    <section class={`card approval st-${approval.status}`} data-approval={approval.id}>
      <header>
        <span class="card-kind">Approval needed</span>
        {approval.risk && <span class={`chip risk-${approval.risk}`}>{approval.risk.replace("_", " ")}</span>}
        {approval.target && <span class="target">{approval.target}</span>}
      </header>
      {approval.description && <p class="desc">{approval.description}</p>}
      {approval.command && <pre class="cmd block">{approval.command}</pre>}
      {approval.riskReason && (
        <p class="risk-reason">
          Why {approval.risk?.replace("_", " ")}: {approval.riskReason}
        </p>
      )}
      {approval.effect && <p class="effect">This step {approval.effect}.</p>}
      {approval.status === "pending" && <Grants lines={stepGrants(approval, ctx.assentMinutes)} />}
      {execution && (
        <div class="exec-line">
          <StatusChip status={execution.status} exitCode={execution.exitCode} />
          <CancelButton execution={execution} ctx={ctx} />
        </div>
      )}
      <Decision approval={approval} ctx={ctx} step />
    </section>
  );
}

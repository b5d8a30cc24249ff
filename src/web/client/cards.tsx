/** @jsxImportSource hono/jsx/dom */
// The cards of a turn: tool calls with their result (collapsible, target,
// exit code, output, live execution status, Cancel), the plan card and the
// approval cards with Approve/Reject and, for destructive steps, the typed
// confirmation. All text goes into the page as text, never as HTML.
import { useEffect, useState } from "hono/jsx/dom";
import { ApiError, api } from "./api.js";
import type { Approval, Execution, Part, PlanStep } from "./timeline.js";
import { executionFrom } from "./timeline.js";

const TERMINAL = new Set(["completed", "failed", "timed_out", "cancelled", "rejected"]);

export interface CardContext {
  approvals: Record<string, Approval>;
  executions: Record<string, Execution>;
  onApproval(a: Approval): void;
  /** ifAbsent: a fetched row, which must not overwrite a newer one an event brought meanwhile. */
  onExecution(x: Execution, options?: { ifAbsent?: boolean }): void;
}

function StatusChip({ status, exitCode }: { status: string; exitCode?: number | null }) {
  const label = exitCode !== null && exitCode !== undefined && TERMINAL.has(status) ? `${status} · exit ${exitCode}` : status;
  return <span class={`chip st-${status}`}>{label.replace("_", " ")}</span>;
}

function useExecution(ctx: CardContext, id: string | undefined | null): Execution | undefined {
  const known = id ? ctx.executions[id] : undefined;
  useEffect(() => {
    if (!id || known) return;
    api<Record<string, unknown>>("GET", `/api/executions/${id}`)
      .then((x) => ctx.onExecution(executionFrom(x), { ifAbsent: true }))
      .catch(() => {});
  }, [id, known === undefined]);
  return known;
}

function CancelButton({ execution, ctx }: { execution: Execution; ctx: CardContext }) {
  const [busy, setBusy] = useState(false);
  // A step still waiting for approval is rejected, not cancelled; a finished one is history.
  if (execution.status !== "approved" && execution.status !== "running") return null;
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

export function ToolCard({ part, ctx }: { part: Extract<Part, { type: "tool" }>; ctx: CardContext }) {
  const executionId = part.result?.executionId ?? (typeof part.input.execution_id === "string" ? part.input.execution_id : undefined);
  const execution = useExecution(ctx, executionId);
  const target = String(part.input.target ?? part.input.node ?? execution?.target ?? "");
  const command = String(part.input.command ?? (part.name === "pct_create" ? `pct create ${String(part.input.hostname ?? "")}` : ""));
  const running = !part.result;
  const output =
    execution && (execution.stdout || execution.stderr || execution.error)
      ? [execution.stdout, execution.stderr, execution.error].filter(Boolean).join("\n")
      : (part.result?.text ?? "");
  return (
    <details class={`card tool${part.result?.isError ? " is-error" : ""}`} data-tool={part.name}>
      <summary>
        <span class="tool-name">{part.name}</span>
        {target && <span class="target">{target}</span>}
        {command && <code class="cmd">{command}</code>}
        <span class="spacer" />
        {execution ? (
          <StatusChip status={execution.status} exitCode={execution.exitCode} />
        ) : running ? (
          <span class="chip st-running">running</span>
        ) : (
          <span class={`chip ${part.result?.isError ? "st-failed" : "st-completed"}`}>{part.result?.isError ? "error" : "done"}</span>
        )}
      </summary>
      <div class="tool-body">
        {Object.keys(part.input).length > 0 && <pre class="input">{JSON.stringify(part.input, null, 2)}</pre>}
        {output !== "" && <pre class="output">{output}</pre>}
        {execution && <CancelButton execution={execution} ctx={ctx} />}
      </div>
    </details>
  );
}

function Decision({ approval, ctx }: { approval: Approval; ctx: CardContext }) {
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
  const decide = async (decision: "approve" | "reject") => {
    setBusy(true);
    setError("");
    try {
      const body = decision === "approve" && phrase ? { decision, confirmation: typed } : { decision };
      const decided = await api<Record<string, unknown>>("POST", `/api/approvals/${approval.id}`, body);
      ctx.onApproval({ ...approval, status: String(decided.status), decidedBy: (decided.decidedBy as string) ?? null });
    } catch (err) {
      setError(err instanceof ApiError ? err.message.replace(/^body\.confirmation: /, "") : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="decide">
      {phrase && (
        <label class="confirm">
          <span>
            This step is destructive. Type <code>{phrase}</code> to approve it:
          </span>
          <input
            class="confirm-input"
            autocomplete="off"
            spellcheck={false}
            value={typed}
            placeholder={phrase}
            onInput={(e: Event) => setTyped((e.target as HTMLInputElement).value)}
          />
        </label>
      )}
      <div class="buttons">
        <button type="button" class="btn approve" disabled={busy} onClick={() => decide("approve")}>
          Approve
        </button>
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
        </li>
      ))}
    </ol>
  );
}

export function PlanCard({ part, ctx }: { part: Extract<Part, { type: "plan" }>; ctx: CardContext }) {
  const approval = ctx.approvals[part.approvalId] ?? { id: part.approvalId, kind: "plan" as const, status: "pending" };
  return (
    <section class={`card plan st-${approval.status}`} data-approval={part.approvalId}>
      <header>
        <span class="card-kind">Plan</span>
        <span class="goal">{part.goal}</span>
      </header>
      <Steps steps={part.steps} />
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
      {execution && (
        <div class="exec-line">
          <StatusChip status={execution.status} exitCode={execution.exitCode} />
          <CancelButton execution={execution} ctx={ctx} />
        </div>
      )}
      <Decision approval={approval} ctx={ctx} />
    </section>
  );
}

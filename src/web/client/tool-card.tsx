/** @jsxImportSource hono/jsx/dom */
// One tool call of a turn, for a person: a label in words ("Ran on web1",
// "Created container typetype on pve1", "Asked to run on pve1"), the
// command in full (it wraps under the label on a phone), the elapsed time
// while it runs and how long it took once done, the execution's status chip
// with its exit code, and when opened the inputs not already shown and the
// output as a preview with Copy, Download and "Show all". Text is set as text.
import { useEffect, useState } from "hono/jsx/dom";
import { CancelButton, type CardContext, StatusChip, useExecution } from "./cards.js";
import { OutputPreview } from "./output-preview.js";
import type { Part } from "./timeline.js";
import { duration, toolLabel } from "./tool-labels.js";

/** Inputs the summary already shows. */
const SHOWN = new Set(["target", "node", "command", "hostname", "execution_id"]);

/** The current time, ticking each second while `active`. */
export function useNow(active: boolean): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [active]);
  return now;
}

const at = (iso: string | null | undefined) => (iso ? Date.parse(iso) : Number.NaN);

export function ToolCard({ part, ctx }: { part: Extract<Part, { type: "tool" }>; ctx: CardContext }) {
  const executionId = part.result?.executionId ?? (typeof part.input.execution_id === "string" ? part.input.execution_id : undefined);
  const execution = useExecution(ctx, executionId);
  const label = toolLabel(part, execution);
  const target = String(part.input.target ?? part.input.node ?? execution?.target ?? "");
  const command = String(part.input.command ?? (part.name === "pct_create" ? `pct create ${String(part.input.hostname ?? "")}` : ""));
  const running = label.phase === "running";
  const now = useNow(running);
  const start = execution ? at(execution.startedAt) : at(part.at);
  const end = execution ? at(execution.finishedAt) : at(part.doneAt);
  const took = end - start;
  const elapsed =
    running && !Number.isNaN(start) ? duration(now - start) : Number.isNaN(took) ? "" : took < 1000 ? "< 1 s" : duration(took);
  // A step with an execution shows what the command printed; the tool's own
  // reply ("execution <id> queued …", "Not run: … awaits approval") was
  // written for the model, and the approval card says the rest.
  const output = execution
    ? [execution.stdout, execution.stderr, execution.error].filter(Boolean).join("\n")
    : label.phase === "waiting"
      ? ""
      : (part.result?.text ?? "");
  const extra = Object.entries(part.input).filter(([k]) => !SHOWN.has(k));
  return (
    <details class={`card tool ph-${label.phase}${part.result?.isError ? " is-error" : ""}`} data-tool={part.name}>
      <summary>
        <span class="tool-label">{label.text}</span>
        {command && <code class="cmd">{command}</code>}
        <span class="tool-meta">
          {elapsed && (
            <span class="elapsed" title={running ? "running for" : "took"}>
              {elapsed}
            </span>
          )}
          {execution ? (
            <StatusChip status={execution.status} exitCode={execution.exitCode} />
          ) : running ? (
            <span class="chip st-running">running</span>
          ) : label.phase === "waiting" ? (
            <span class="chip st-pending_approval">waiting for approval</span>
          ) : (
            <span class={`chip ${part.result?.isError ? "st-failed" : "st-completed"}`}>{part.result?.isError ? "error" : "done"}</span>
          )}
        </span>
      </summary>
      <div class="tool-body">
        {(target || extra.length > 0) && (
          <dl class="inputs">
            {[
              ...(target ? [[part.name === "pct_create" ? "node" : "target", target] as const] : []),
              ...extra.map(([k, v]) => [k.replace(/_/g, " "), typeof v === "string" ? v : JSON.stringify(v)] as const),
            ].flatMap(([k, v]) => [<dt>{k}</dt>, <dd>{v}</dd>])}
          </dl>
        )}
        {label.phase === "waiting" && <p class="tool-note">Waiting for your decision on the approval card below.</p>}
        {output !== "" && <OutputPreview text={output} name={`${part.name}-${(executionId ?? part.id).slice(0, 8)}`} />}
        {execution && <CancelButton execution={execution} ctx={ctx} />}
      </div>
    </details>
  );
}

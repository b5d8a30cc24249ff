// A session as one document (GET /api/sessions/:id/export): the transcript,
// every plan with its checklist and outcome, every execution with its
// target, command, risk, status, exit code and capped output, every
// approval with who decided it and when, and the tokens spent. Invariant:
// built only from the owners' views (message-view.ts, plan-steps.ts,
// execution-json.ts, approval-view.ts, model-calls.ts), so the export says
// what the API says; output longer than EXPORT_OUTPUT_CHARS keeps its end
// (where errors are) and says how much was cut.
import type { Kysely } from "kysely";
import { approvalViews } from "../approvals/approval-view.js";
import type { Database } from "../db/schema.js";
import type { ApprovalView, MessageView, PlanChecklistView, SessionState, UsageView } from "../events/contract.js";
import { executionToJson } from "../executions/execution-json.js";
import { planChecklist } from "../plans/plan-steps.js";
import { modelCallsSum } from "../usage/model-calls.js";
import { messageView } from "./message-view.js";
import { sessionStates } from "./session-state.js";

/** Characters of stdout and of stderr an export keeps per execution. */
export const EXPORT_OUTPUT_CHARS = 16_000;

export interface ExportedExecution {
  id: string;
  planId: string | null;
  planStep: number | null;
  target: string;
  command: string;
  description: string | null;
  risk: string;
  riskReason: string | null;
  status: string;
  exitCode: number | null;
  signal: string | null;
  error: string | null;
  stdout: string;
  stderr: string;
  /** Characters of stdout/stderr left out (of what Nomos stored; the host's own cut is in *DroppedBytes). */
  stdoutCutChars: number;
  stderrCutChars: number;
  stdoutDroppedBytes: number;
  stderrDroppedBytes: number;
  createdAt: string;
  approvedAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
}

export interface SessionExport {
  exportedAt: string;
  session: { id: string; title: string; createdAt: string; state: SessionState };
  messages: MessageView[];
  plans: (PlanChecklistView & { createdAt: string; decidedAt: string | null })[];
  executions: ExportedExecution[];
  approvals: ApprovalView[];
  usage: UsageView;
}

const tail = (s: string) => (s.length > EXPORT_OUTPUT_CHARS ? s.slice(s.length - EXPORT_OUTPUT_CHARS) : s);

export async function sessionExport(db: Kysely<Database>, p: { sessionId: string }): Promise<SessionExport | undefined> {
  const session = await db.selectFrom("sessions").selectAll().where("id", "=", p.sessionId).executeTakeFirst();
  if (!session) return undefined;
  const [messages, plans, executions, approvals, usage, states] = await Promise.all([
    db.selectFrom("messages").selectAll().where("session_id", "=", p.sessionId).orderBy("id").execute(),
    db
      .selectFrom("plans")
      .select(["id", "created_at", "decided_at"])
      .where("session_id", "=", p.sessionId)
      .orderBy("created_at")
      .orderBy("id")
      .execute(),
    db.selectFrom("executions").selectAll().where("session_id", "=", p.sessionId).orderBy("created_at").orderBy("id").execute(),
    approvalViews(db, { sessionId: p.sessionId, limit: 10_000 }),
    modelCallsSum(db, { sessionId: p.sessionId }),
    sessionStates(db, { sessionIds: [p.sessionId] }),
  ]);
  const planViews = [];
  for (const plan of plans) {
    const checklist = await planChecklist(db, { planId: plan.id });
    if (!checklist) continue;
    planViews.push({
      ...checklist,
      createdAt: plan.created_at.toISOString(),
      decidedAt: plan.decided_at?.toISOString() ?? null,
    });
  }
  return {
    exportedAt: new Date().toISOString(),
    session: {
      id: session.id,
      title: session.title,
      createdAt: session.created_at.toISOString(),
      state: states[0]?.state ?? "idle",
    },
    messages: messages.map(messageView),
    plans: planViews,
    executions: executions.map((row) => {
      const e = executionToJson(row);
      return {
        id: e.id,
        planId: e.planId,
        planStep: row.plan_step,
        target: e.target,
        command: e.command,
        description: e.description,
        risk: e.risk,
        riskReason: e.riskReason,
        status: e.status,
        exitCode: e.exitCode,
        signal: e.signal,
        error: e.error,
        stdout: tail(e.stdout),
        stderr: tail(e.stderr),
        stdoutCutChars: Math.max(0, e.stdout.length - EXPORT_OUTPUT_CHARS),
        stderrCutChars: Math.max(0, e.stderr.length - EXPORT_OUTPUT_CHARS),
        stdoutDroppedBytes: e.stdoutDroppedBytes,
        stderrDroppedBytes: e.stderrDroppedBytes,
        createdAt: e.createdAt,
        approvedAt: e.approvedAt,
        startedAt: e.startedAt,
        finishedAt: e.finishedAt,
        durationMs: e.startedAt && e.finishedAt ? Date.parse(e.finishedAt) - Date.parse(e.startedAt) : null,
      };
    }),
    approvals: [...approvals].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0)),
    usage,
  };
}

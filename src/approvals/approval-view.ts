// Approvals as the HTTP contract and the event stream show them (DESIGN.md
// "approval" shape): the row, plus the target/command/risk of its execution
// or the goal of its plan. Invariant: read from the server's own records
// only; nothing a client sends back is ever merged in.
import type { Kysely } from "kysely";
import type { ApprovalStatus, Database } from "../db/schema.js";
import type { ApprovalView } from "../events/contract.js";
import { destructiveEffect } from "../risk/destructive-effect.js";

// The shape is declared in the event contract (shared with the browser); this module builds it.
export type { ApprovalView };

export async function approvalViews(
  db: Kysely<Database>,
  p: { ids?: string[]; sessionId?: string | undefined; status?: ApprovalStatus | undefined; limit?: number },
): Promise<ApprovalView[]> {
  let q = db
    .selectFrom("approvals as a")
    .leftJoin("executions as e", "e.id", "a.execution_id")
    .leftJoin("plans as p", "p.id", "a.plan_id")
    .select([
      "a.id",
      "a.session_id",
      "a.kind",
      "a.status",
      "a.plan_id",
      "a.execution_id",
      "a.confirmation_phrase",
      "a.decided_by",
      "a.decided_via",
      "a.created_at",
      "a.expires_at",
      "a.decided_at",
      "e.target",
      "e.command",
      "e.risk",
      "e.risk_reason",
      "e.description",
      "p.goal",
      "p.steps",
    ])
    .orderBy("a.created_at")
    .orderBy("a.id");
  if (p.ids) q = q.where("a.id", "in", p.ids.length > 0 ? p.ids : ["00000000-0000-0000-0000-000000000000"]);
  if (p.sessionId) q = q.where("a.session_id", "=", p.sessionId);
  if (p.status) q = q.where("a.status", "=", p.status);
  const rows = await q.limit(p.limit ?? 500).execute();
  return rows.map((r) => ({
    id: r.id,
    sessionId: r.session_id,
    kind: r.kind,
    status: r.status,
    planId: r.plan_id,
    executionId: r.execution_id,
    target: r.target,
    command: r.command,
    risk: r.risk,
    riskReason: r.risk_reason,
    description: r.description,
    goal: r.goal,
    plan: r.goal !== null ? { goal: r.goal, steps: (r.steps ?? []).map(stepWithEffect) } : null,
    effect: r.risk === "destructive" && r.command && r.target ? destructiveEffect(r.command, r.target) : null,
    confirmationPhrase: r.confirmation_phrase,
    decidedBy: r.decided_by,
    decidedVia: r.decided_via,
    createdAt: r.created_at.toISOString(),
    expiresAt: r.expires_at.toISOString(),
    decidedAt: r.decided_at?.toISOString() ?? null,
  }));
}

export async function approvalView(db: Kysely<Database>, p: { approvalId: string }): Promise<ApprovalView | undefined> {
  return (await approvalViews(db, { ids: [p.approvalId] }))[0];
}

function stepWithEffect(step: unknown): unknown {
  const s = step as { destructive?: boolean; command?: string; target?: string };
  return s?.destructive && s.command ? { ...s, effect: destructiveEffect(s.command, s.target ?? "its target") } : step;
}

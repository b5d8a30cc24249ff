// Reading approvals for the API, joined with what they decide (the plan's
// goal and steps, or the execution's target, command and risk), in the
// shape of DESIGN.md.
import type { Kysely } from "kysely";
import type { ApprovalStatus, Database } from "../../db/schema.js";

function query(db: Kysely<Database>) {
  return db
    .selectFrom("approvals as a")
    .leftJoin("executions as x", "x.id", "a.execution_id")
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
      "x.target",
      "x.command",
      "x.risk",
      "x.description",
      "p.goal",
      "p.steps",
    ]);
}

type Row = Awaited<ReturnType<ReturnType<typeof query>["executeTakeFirstOrThrow"]>>;

export function approvalJson(r: Row) {
  return {
    id: r.id,
    sessionId: r.session_id,
    kind: r.kind,
    status: r.status,
    planId: r.plan_id,
    executionId: r.execution_id,
    target: r.target,
    command: r.command,
    risk: r.risk,
    description: r.description,
    plan: r.goal !== null ? { goal: r.goal, steps: r.steps } : null,
    confirmationPhrase: r.confirmation_phrase,
    decidedBy: r.decided_by,
    decidedVia: r.decided_via,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    decidedAt: r.decided_at,
  };
}

export async function approvalList(
  db: Kysely<Database>,
  params: { sessionId?: string; status?: ApprovalStatus },
) {
  let q = query(db);
  if (params.sessionId) q = q.where("a.session_id", "=", params.sessionId);
  if (params.status) q = q.where("a.status", "=", params.status);
  const rows = await q.orderBy("a.created_at", "asc").orderBy("a.id").limit(500).execute();
  return rows.map(approvalJson);
}

export async function approvalGet(db: Kysely<Database>, params: { approvalId: string }) {
  const row = await query(db).where("a.id", "=", params.approvalId).executeTakeFirst();
  return row ? approvalJson(row) : undefined;
}

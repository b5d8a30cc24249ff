// What the agent is told when the operator has decided a session's
// approvals by button (or they expired): one system-note line per decision
// made since the session's latest turn was queued, so a decision is told
// once. Invariant: built from the approvals table only (the server's own
// records), never from anything a client sent.
import { type Kysely, sql } from "kysely";
import { assentWindowCurrent } from "../assent/window.js";
import type { Database } from "../db/schema.js";

export async function approvalsSettledNotes(db: Kysely<Database>, p: { sessionId: string }): Promise<string[]> {
  const rows = await db
    .selectFrom("approvals as a")
    .leftJoin("plans as p", "p.id", "a.plan_id")
    .leftJoin("executions as e", "e.id", "a.execution_id")
    .select(["a.id", "a.kind", "a.status", "a.decided_by", "a.decided_via", "p.goal", "e.id as execution_id", "e.target", "e.command"])
    .where("a.session_id", "=", p.sessionId)
    .where("a.status", "<>", "pending")
    .where("a.decided_via", "in", ["button", "expiry"])
    .where(
      "a.decided_at",
      ">",
      sql<Date>`coalesce((SELECT max(created_at) FROM turns WHERE session_id = ${p.sessionId}), '-infinity'::timestamptz)`,
    )
    .orderBy("a.decided_at")
    .execute();
  const window = await assentWindowCurrent(db, { sessionId: p.sessionId });
  return rows.map((r) => {
    const what = r.kind === "plan" ? `plan "${r.goal}"` : `execution ${r.execution_id} (\`${r.command}\` on ${r.target})`;
    if (r.status === "expired") return `Approval ${r.id} for ${what} expired undecided; it will not run.`;
    const who = (r.decided_by ?? "the operator").replace(/^operator:/, "");
    if (r.status === "rejected") {
      return `The operator (${who}) rejected ${what} (approval ${r.id}): rejected by the operator. Do not run it or a rephrasing of it; propose something else, or ask what they want instead if unsure.`;
    }
    const next =
      r.kind === "plan"
        ? window.open
          ? " The assent window is open: carry the plan out."
          : " No assent window was opened: every change still asks."
        : window.open
          ? " It runs now; its result comes back to you as a note."
          : " It runs now, this step only (no assent window is open): its result reaches you with the operator's next message, and any other change still asks.";
    return `The operator (${who}) approved ${what} (approval ${r.id}).${next}`;
  });
}

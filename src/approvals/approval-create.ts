// Creating an approval: a pending decision on a plan or on one gated
// execution, with its expiry and (for destructive steps) the phrase the
// operator must type. Invariant: created in the caller's transaction
// together with what it gates, and announced by an approval_requested event
// in that same transaction.
import { type Kysely, sql } from "kysely";
import type { Approval, Database } from "../db/schema.js";
import { sessionEventsAppend } from "../events/session-events.js";
import { approvalView } from "./approval-view.js";

export async function approvalCreate(
  tx: Kysely<Database>,
  p: {
    /** A preset id, when an event announcing the subject must name the approval first. */
    id?: string;
    sessionId: string;
    turnId?: string | null;
    kind: "plan" | "execution";
    planId?: string | null;
    executionId?: string | null;
    confirmationPhrase?: string | null;
    expiresInMinutes: number;
  },
): Promise<Approval> {
  const row = await tx
    .insertInto("approvals")
    .values({
      ...(p.id ? { id: p.id } : {}),
      session_id: p.sessionId,
      kind: p.kind,
      plan_id: p.planId ?? null,
      execution_id: p.executionId ?? null,
      confirmation_phrase: p.confirmationPhrase ?? null,
      expires_at: sql<Date>`now() + make_interval(mins => ${p.expiresInMinutes})`,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const view = await approvalView(tx, { approvalId: row.id });
  await sessionEventsAppend(tx, [
    { sessionId: p.sessionId, turnId: p.turnId ?? null, type: "approval_requested", data: { approval: view! } },
  ]);
  return row;
}

// Deciding an approval, by button (the HTTP API) or by the operator's words
// in chat, and letting undecided ones expire.
//
//   pending -> approved | rejected      (approvalDecide, once)
//   pending -> expired                  (approvalsExpireDue, or a late decision)
//
// Invariants:
// - A decision is read and written under a row lock, with one conditional
//   UPDATE ... WHERE status = 'pending'; the trigger in 002 refuses a
//   second decision even if this code were wrong.
// - The approval, what it gates (plan status, execution approve/reject), the
//   assent window and the events commit in one transaction with the
//   operator as the actor.
// - Approving opens or extends the session's window (DESIGN.md), unless
//   the operator chose "Approve this step" (continue: false); approving adds
//   scope: the plan's targets and its pre-authorized destructive steps, or
//   the execution's target. Rejecting never opens or extends a window;
//   rejecting a plan closes the window opened for that plan, if any.
// - Only a decider who may confirm destructive steps (an admin, issue 14)
//   adds pre-authorized steps: a plan an operator approves still has each of
//   its destructive steps ask, so that an admin types its phrase.
// - onApprovalsSettled runs after commit, only when the session has no
//   pending approval left: the agent hears once, when all are decided.
import { type Kysely, sql } from "kysely";
import { assentWindowClose, assentWindowOpenOrExtend, type PreauthorizedStep, planScope } from "../assent/window.js";
import type { Approval, Database } from "../db/schema.js";
import { withActor } from "../db/with-actor.js";
import { sessionEventsAppend } from "../events/session-events.js";
import type { ExecutionsPort } from "../executions/executions-port.js";
import type { Logger } from "../log/logger.js";
import { approvalView } from "./approval-view.js";
import {
  ApprovalAlreadyDecidedError,
  ApprovalConfirmationError,
  ApprovalExpiredError,
  ApprovalNotFoundError,
  ApprovalRoleError,
} from "./errors.js";

export interface ApprovalDeps {
  db: Kysely<Database>;
  executions: Pick<ExecutionsPort, "approve" | "reject" | "cancel">;
  assentMinutes: number;
  /** Called after commit when the session has no pending approval left (main.ts wires the continuation). */
  onApprovalsSettled?: (sessionId: string) => void | Promise<void>;
  log?: Logger;
}

export interface ApprovalDecision {
  approvalId: string;
  decision: "approve" | "reject";
  confirmation?: string;
  /** Who decided: "operator:<username>". */
  actor: string;
  via: "button" | "chat";
  /**
   * False when the decider may not confirm destructive steps (below admin):
   * approving a plan then pre-authorizes none of its destructive steps, and a
   * destructive step's phrase is refused. Required: every caller knows the
   * decider's role, and a forgotten one must not fail open.
   */
  mayConfirmDestructive: boolean;
  /** false: "Approve this step" — approve it without opening or extending the window. Default true. */
  continue?: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function approvalDecide(deps: ApprovalDeps, p: ApprovalDecision): Promise<Approval> {
  if (!UUID.test(p.approvalId)) throw new ApprovalNotFoundError(p.approvalId);
  const outcome = await withActor(deps.db, p.actor, async (tx) => {
    const row = await tx
      .selectFrom("approvals")
      .selectAll()
      .select(sql<boolean>`expires_at <= now()`.as("due"))
      .where("id", "=", p.approvalId)
      .forUpdate()
      .executeTakeFirst();
    if (!row) throw new ApprovalNotFoundError(p.approvalId);
    if (row.status !== "pending") throw new ApprovalAlreadyDecidedError(row.id, row.status);
    if (row.due) {
      await expireOne(deps, tx, row);
      return { kind: "expired", row } as const;
    }
    if (p.decision === "approve" && row.confirmation_phrase !== null) {
      if (!p.mayConfirmDestructive) throw new ApprovalRoleError(row.id);
      if ((p.confirmation ?? "").trim().toLowerCase() !== row.confirmation_phrase.toLowerCase()) {
        throw new ApprovalConfirmationError(row.id, row.confirmation_phrase);
      }
    }
    const status = p.decision === "approve" ? "approved" : "rejected";
    const decided = await tx
      .updateTable("approvals")
      .set({ status, decided_by: p.actor, decided_via: p.via, decided_at: sql`now()` })
      .where("id", "=", row.id)
      .where("status", "=", "pending")
      .returningAll()
      .executeTakeFirstOrThrow();

    let addTargets: string[] = [];
    let addPreauthorized: PreauthorizedStep[] = [];
    if (row.kind === "plan" && row.plan_id) {
      const plan = await tx
        .updateTable("plans")
        .set({ status, decided_at: sql`now()` })
        .where("id", "=", row.plan_id)
        .where("status", "=", "pending_approval")
        .returning(["steps"])
        .executeTakeFirst();
      if (plan && status === "approved") {
        const scope = planScope(plan.steps);
        addTargets = scope.targets;
        if (p.mayConfirmDestructive) addPreauthorized = scope.preauthorized;
      }
      if (status === "rejected") {
        await assentWindowClose(tx, { sessionId: row.session_id, actor: p.actor, reason: "rejected", planId: row.plan_id });
      }
    } else if (row.execution_id) {
      const execution =
        status === "approved"
          ? await deps.executions.approve(tx, { executionId: row.execution_id })
          : await deps.executions.reject(tx, { executionId: row.execution_id, reason: `rejected by ${p.actor}` });
      if (status === "approved") addTargets = [execution.target];
    }
    if (status === "approved" && p.continue !== false) {
      await assentWindowOpenOrExtend(tx, {
        sessionId: row.session_id,
        actor: p.actor,
        minutes: deps.assentMinutes,
        planId: row.plan_id,
        addTargets,
        addPreauthorized,
      });
    }
    const view = await approvalView(tx, { approvalId: row.id });
    await sessionEventsAppend(tx, [
      {
        sessionId: row.session_id,
        type: "approval_decided",
        data: { approval: view!, continue: status === "approved" && p.continue !== false },
      },
    ]);
    return { kind: "decided", row: decided } as const;
  });
  const { row } = outcome;
  if (outcome.kind === "expired") {
    await settleIfDone(deps, row.session_id);
    throw new ApprovalExpiredError(row.id, row.expires_at);
  }
  deps.log?.info({ sessionId: row.session_id, approvalId: row.id, status: row.status, via: p.via }, "approval decided");
  await settleIfDone(deps, row.session_id);
  return row;
}

async function expireOne(deps: ApprovalDeps, tx: Kysely<Database>, row: Approval): Promise<void> {
  await tx
    .updateTable("approvals")
    .set({ status: "expired", decided_by: "system:expiry", decided_via: "expiry", decided_at: sql`now()` })
    .where("id", "=", row.id)
    .where("status", "=", "pending")
    .execute();
  if (row.plan_id) {
    await tx
      .updateTable("plans")
      .set({ status: "expired", decided_at: sql`now()` })
      .where("id", "=", row.plan_id)
      .where("status", "=", "pending_approval")
      .execute();
  }
  if (row.execution_id) {
    await deps.executions.cancel(tx, { executionId: row.execution_id, reason: "its approval expired" });
  }
  const view = await approvalView(tx, { approvalId: row.id });
  await sessionEventsAppend(tx, [{ sessionId: row.session_id, type: "approval_decided", data: { approval: view! } }]);
}

async function settleIfDone(deps: ApprovalDeps, sessionId: string): Promise<void> {
  if (!deps.onApprovalsSettled) return;
  const pending = await deps.db
    .selectFrom("approvals")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("session_id", "=", sessionId)
    .where("status", "=", "pending")
    .executeTakeFirstOrThrow();
  if (Number(pending.n) > 0) return;
  try {
    await deps.onApprovalsSettled(sessionId);
  } catch (err) {
    deps.log?.error({ err, sessionId }, "onApprovalsSettled failed; the agent hears with the operator's next message");
  }
}

/** Expires every approval past its time (a card then says "expired"). Returns how many. */
export async function approvalsExpireDue(deps: ApprovalDeps): Promise<number> {
  const expired = await withActor(deps.db, "system:expiry", async (tx) => {
    const due = await tx
      .selectFrom("approvals")
      .selectAll()
      .where("status", "=", "pending")
      .where("expires_at", "<=", sql<Date>`now()`)
      .orderBy("expires_at")
      .limit(200)
      .forUpdate()
      .skipLocked()
      .execute();
    for (const row of due) await expireOne(deps, tx, row);
    return due;
  });
  for (const sessionId of new Set(expired.map((r) => r.session_id))) await settleIfDone(deps, sessionId);
  return expired.length;
}

/** The background expiry: runs approvalsExpireDue every intervalMs. */
export class ApprovalExpiry {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly deps: ApprovalDeps,
    private readonly intervalMs = 30_000,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.running = this.running.then(() =>
        approvalsExpireDue(this.deps).catch((err: unknown) => this.deps.log?.error({ err }, "approval expiry failed")),
      );
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}

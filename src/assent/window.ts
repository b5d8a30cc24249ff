// The assent window: time-boxed autonomy for one session, scoped to the
// targets its approved plan names and the containers created under it.
// The only module that writes assent_windows, except the loop guard
// (continuation/ledger.ts), which counts a continuation against the window
// and closes it at the limit ('continuation_limit') under the row lock of
// its claim.
//
//   (none) --open--> open --extend--> open --revoke/expire/reject/outcome--> closed
//
// Close reasons: 'revoked' (the operator's Stop or words), 'expired' (closed
// lazily before a new window opens, or by the notifier's sweep through
// assentWindowsCloseExpired, which tells the operator when results wait),
// 'continuation_limit' (the loop guard, ledger.ts), 'rejected' (the
// operator rejected the plan the window was opened for), 'plan_verified' /
// 'plan_blocked' (the agent reported the plan's outcome: autonomy does not
// linger after "done"), 'budget' (the tokens spent since it opened passed
// NOMOS_WINDOW_TOKEN_BUDGET: assent/window-budget.ts).
//
// Invariants:
// - At most one unclosed row per session (unique partial index); an
//   expired row is closed ('expired') before a new window is inserted.
// - Open means closed_at IS NULL AND expires_at > now(), judged by the
//   database clock, never the process clock.
// - Every change made here appends an assent_changed event in the same
//   transaction; the loop guard's close is appended by the dispatcher
//   right after its claim commits, in the next transaction.
// - Only an operator opens a window: approving (approvalDecide, unless
//   "this step only"), or forward words resuming an approved, unfinished
//   plan (plan-resume.ts). Rejecting never opens or extends one. Nothing the
//   model or a command prints reaches an opening call; the model can only
//   close one (report_outcome).
import { type Kysely, sql } from "kysely";
import type { AssentWindow, Database } from "../db/schema.js";
import { sessionEventsAppend } from "../events/session-events.js";

export interface PreauthorizedStep {
  target: string;
  command: string;
}

export interface AssentWindowState {
  open: boolean;
  expiresAt: Date | null;
  scopeTargets: string[];
  windowId: string | null;
  continuations: number;
  planId: string | null;
  preauthorized: PreauthorizedStep[];
}

const CLOSED: AssentWindowState = {
  open: false,
  expiresAt: null,
  scopeTargets: [],
  windowId: null,
  continuations: 0,
  planId: null,
  preauthorized: [],
};

/** The rule "open", on an assent_windows row: not closed, and not past its end by the database clock. */
const OPEN = sql<boolean>`closed_at IS NULL AND expires_at > now()`;

/** The session's window, open or not: the one answer to "is the window open" outside a single SQL statement. */
export async function assentWindowCurrent(db: Kysely<Database>, p: { sessionId: string }): Promise<AssentWindowState> {
  const row = await db.selectFrom("assent_windows").selectAll().where("session_id", "=", p.sessionId).where(OPEN).executeTakeFirst();
  if (!row) return CLOSED;
  return openView(row);
}

/** An open window's row as callers see it. */
function openView(row: AssentWindow) {
  return {
    open: true as const,
    expiresAt: row.expires_at,
    scopeTargets: row.scope_targets,
    windowId: row.id,
    continuations: row.continuations,
    planId: row.plan_id,
    preauthorized: row.preauthorized as PreauthorizedStep[],
  };
}

/** Closes a window whose time ran out, so a new one may open (the unique index allows one unclosed row). */
async function closeExpired(tx: Kysely<Database>, sessionId: string): Promise<void> {
  await tx
    .updateTable("assent_windows")
    .set({ closed_at: sql`now()`, close_reason: "expired" })
    .where("session_id", "=", sessionId)
    .where("closed_at", "is", null)
    .where("expires_at", "<=", sql<Date>`now()`)
    .execute();
}

/**
 * Opens the session's window, or extends it to at least now + minutes,
 * widening its scope. Pass a withActor transaction: the caller's decision
 * and the window commit together.
 */
export async function assentWindowOpenOrExtend(
  tx: Kysely<Database>,
  p: {
    sessionId: string;
    actor: string;
    minutes: number;
    planId?: string | null;
    addTargets?: string[];
    addPreauthorized?: PreauthorizedStep[];
  },
): Promise<AssentWindowState> {
  await closeExpired(tx, p.sessionId);
  const addTargets = [...new Set(p.addTargets ?? [])];
  const addPre = p.addPreauthorized ?? [];
  const until = sql<Date>`now() + make_interval(mins => ${p.minutes})`;
  const updated = await tx
    .updateTable("assent_windows")
    .set({
      expires_at: sql`greatest(expires_at, ${until})`,
      scope_targets: sql`ARRAY(SELECT DISTINCT unnest(scope_targets || ${addTargets}::text[]) ORDER BY 1)`,
      preauthorized: sql`preauthorized || ${JSON.stringify(addPre)}::jsonb`,
      plan_id: sql`coalesce(${p.planId ?? null}::uuid, plan_id)`,
    })
    .where("session_id", "=", p.sessionId)
    .where("closed_at", "is", null)
    .returningAll()
    .executeTakeFirst();
  const row =
    updated ??
    (await tx
      .insertInto("assent_windows")
      .values({
        session_id: p.sessionId,
        plan_id: p.planId ?? null,
        scope_targets: [...addTargets].sort(),
        preauthorized: addPre,
        opened_by: p.actor,
        expires_at: until,
      })
      .returningAll()
      .executeTakeFirstOrThrow());
  await sessionEventsAppend(tx, [
    {
      sessionId: p.sessionId,
      type: "assent_changed",
      data: { open: true, expiresAt: row.expires_at.toISOString(), scopeTargets: row.scope_targets },
    },
  ]);
  return openView(row);
}

/** A container created under the window joins its scope. No-op when no window is open. */
export async function assentWindowAddScope(tx: Kysely<Database>, p: { sessionId: string; targets: string[] }): Promise<boolean> {
  const updated = await tx
    .updateTable("assent_windows")
    .set({ scope_targets: sql`ARRAY(SELECT DISTINCT unnest(scope_targets || ${p.targets}::text[]) ORDER BY 1)` })
    .where("session_id", "=", p.sessionId)
    .where(OPEN)
    .returning("id")
    .executeTakeFirst();
  return updated !== undefined;
}

/** What an approved plan's steps put in a window's scope: their targets, and the destructive steps they name exactly. */
export function planScope(steps: unknown[]): { targets: string[]; preauthorized: PreauthorizedStep[] } {
  const list = steps as { target?: string; command?: string; destructive?: boolean }[];
  return {
    targets: [...new Set(list.flatMap((s) => (s.target ? [s.target] : [])))],
    preauthorized: list.flatMap((s) => (s.destructive && s.target && s.command ? [{ target: s.target, command: s.command }] : [])),
  };
}

/**
 * Closes the session's unclosed window with a reason ('rejected',
 * 'plan_verified', 'plan_blocked', 'budget'); with planId, only a window opened for
 * that plan. Returns whether one was closed. One conditional UPDATE.
 */
export async function assentWindowClose(
  tx: Kysely<Database>,
  p: { sessionId: string; actor: string; reason: "rejected" | "plan_verified" | "plan_blocked" | "budget"; planId?: string },
): Promise<boolean> {
  let q = tx
    .updateTable("assent_windows")
    .set({ closed_at: sql`now()`, close_reason: p.reason })
    .where("session_id", "=", p.sessionId)
    .where("closed_at", "is", null);
  if (p.planId) q = q.where("plan_id", "=", p.planId);
  const closed = await q.returning(["id", "expires_at"]).executeTakeFirst();
  if (!closed) return false;
  await sessionEventsAppend(tx, [
    { sessionId: p.sessionId, type: "assent_changed", data: { open: false, expiresAt: null, reason: p.reason, by: p.actor } },
  ]);
  return true;
}

/** The operator's Stop: closes the open window, if any. Returns whether one was open. */
export async function assentWindowRevoke(tx: Kysely<Database>, p: { sessionId: string; actor: string }): Promise<boolean> {
  const closed = await tx
    .updateTable("assent_windows")
    .set({ closed_at: sql`now()`, close_reason: "revoked" })
    .where("session_id", "=", p.sessionId)
    .where("closed_at", "is", null)
    .returning(["id", "expires_at"])
    .executeTakeFirst();
  if (!closed) return false;
  await sessionEventsAppend(tx, [
    { sessionId: p.sessionId, type: "assent_changed", data: { open: false, expiresAt: null, reason: "revoked", by: p.actor } },
  ]);
  return true;
}

/**
 * Closes every window whose time ran out and says so on each session's
 * stream (assent_changed, reason 'expired'); the notifications trigger turns
 * that into "window expired" when results wait. One conditional UPDATE:
 * a window is closed once, by whichever process gets there first.
 */
export async function assentWindowsCloseExpired(tx: Kysely<Database>): Promise<{ sessionIds: string[] }> {
  const closed = await tx
    .updateTable("assent_windows")
    .set({ closed_at: sql`now()`, close_reason: "expired" })
    .where("closed_at", "is", null)
    .where("expires_at", "<=", sql<Date>`now()`)
    .returning("session_id")
    .execute();
  await sessionEventsAppend(
    tx,
    closed.map((r) => ({
      sessionId: r.session_id,
      type: "assent_changed" as const,
      data: { open: false, expiresAt: null, reason: "expired" },
    })),
  );
  return { sessionIds: closed.map((r) => r.session_id) };
}

// The window's token budget (NOMOS_WINDOW_TOKEN_BUDGET): autonomy that
// spends more tokens than the operator allowed stops. Checked by the agent
// loop after each model call, once that call's usage is stored
// (usage/model-calls.ts). Invariants:
// - The tokens counted are every token of the session's model calls since
//   the open window opened (usage/model-calls.ts's usageTokens).
// - Over the budget, the window closes through window.ts with reason
//   'budget' (assent_changed says so), in the caller's transaction; a window
//   already closed is left alone, so the close happens once.
import type { Kysely } from "kysely";
import { sql } from "kysely";
import type { Database } from "../db/schema.js";
import { withActor } from "../db/with-actor.js";
import { modelCallsSum, usageTokens } from "../usage/model-calls.js";
import { assentWindowClose } from "./window.js";

export interface WindowBudgetCheck {
  /** The window was open and is now closed for its budget. */
  closed: boolean;
  /** Tokens spent since the open window opened (0 without one). */
  used: number;
}

export async function assentWindowBudgetCheck(
  tx: Kysely<Database>,
  p: { sessionId: string; budget: number | undefined; actor: string },
): Promise<WindowBudgetCheck> {
  if (!p.budget) return { closed: false, used: 0 };
  const window = await tx
    .selectFrom("assent_windows")
    .select(["id", "opened_at"])
    .where("session_id", "=", p.sessionId)
    .where("closed_at", "is", null)
    .where("expires_at", ">", sql<Date>`now()`)
    .executeTakeFirst();
  if (!window) return { closed: false, used: 0 };
  const used = usageTokens(await modelCallsSum(tx, { sessionId: p.sessionId, since: window.opened_at }));
  if (used <= p.budget) return { closed: false, used };
  const closed = await assentWindowClose(tx, { sessionId: p.sessionId, actor: p.actor, reason: "budget" });
  return { closed, used };
}

/**
 * The same rule for the agent loop, given the tokens already summed by the
 * statement that stored the call (usage/model-calls.ts
 * modelCallRecordInWindow): over the budget, the window closes with reason
 * 'budget' in a transaction of its own (the only extra round trips, and
 * only then). A window already closed is left alone.
 */
export async function assentWindowBudgetEnforce(
  db: Kysely<Database>,
  p: { sessionId: string; budget: number | undefined; used: number; windowOpen: boolean; actor: string; by: string },
): Promise<WindowBudgetCheck> {
  if (!p.budget || !p.windowOpen) return { closed: false, used: p.windowOpen ? p.used : 0 };
  if (p.used <= p.budget) return { closed: false, used: p.used };
  const closed = await withActor(db, p.actor, (tx) => assentWindowClose(tx, { sessionId: p.sessionId, actor: p.by, reason: "budget" }));
  return { closed, used: p.used };
}

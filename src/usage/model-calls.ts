// Usage and cost: one model_calls row per model call, with the tokens the
// Messages API reported (input, output, cache read, cache creation) and the
// call's estimated cost (usage/pricing.ts). The only module that writes
// model_calls; rows are only inserted. Sums are read here too, so "a
// session's usage", "a plan's usage" and "the tokens since the window
// opened" (the budget, assent/window-budget.ts) are one definition each.
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { Database } from "../db/schema.js";
import type { UsageView } from "../events/contract.js";
import { costUsd, type ModelPrices, priceOf } from "./pricing.js";

/** What the SDK's Message.usage holds (the cache fields may be absent or null on other servers). */
export interface ReportedUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

const count = (n: number | null | undefined) => (typeof n === "number" && Number.isFinite(n) && n > 0 ? Math.round(n) : 0);

/** One model call as the agent loop reports it. */
export interface ModelCallInput {
  sessionId: string;
  turnId: string | null;
  model: string;
  usage: ReportedUsage;
  prices?: ModelPrices;
}

function callTokens(p: ModelCallInput) {
  const tokens = {
    inputTokens: count(p.usage.input_tokens),
    outputTokens: count(p.usage.output_tokens),
    cacheReadTokens: count(p.usage.cache_read_input_tokens),
    cacheWriteTokens: count(p.usage.cache_creation_input_tokens),
  };
  return { tokens, cost: costUsd(priceOf(p.model, p.prices), tokens) };
}

/**
 * The row of one model call as an INSERT to embed as a CTE in a caller's
 * statement (the turn's last one, turns/turn-store.ts turnEnd): against the
 * plan of the session's open window, as modelCallRecordInWindow stores it.
 * The caller's statement sets the audit actor.
 */
export function modelCallInsertSql(p: ModelCallInput): RawBuilder<unknown> {
  const { tokens, cost } = callTokens(p);
  return sql`
      INSERT INTO model_calls (session_id, turn_id, plan_id, model, input_tokens, output_tokens,
                               cache_read_tokens, cache_write_tokens, cost_usd)
      SELECT ${p.sessionId}::uuid, ${p.turnId}::uuid,
             (SELECT w.plan_id FROM assent_windows w
               WHERE w.session_id = ${p.sessionId} AND w.closed_at IS NULL AND w.expires_at > now()),
             ${p.model}, ${tokens.inputTokens}, ${tokens.outputTokens}, ${tokens.cacheReadTokens}, ${tokens.cacheWriteTokens}, ${cost}
      RETURNING id`;
}

export async function modelCallRecord(
  db: Kysely<Database>,
  p: { sessionId: string; turnId: string | null; planId: string | null; model: string; usage: ReportedUsage; prices?: ModelPrices },
): Promise<void> {
  const tokens = {
    inputTokens: count(p.usage.input_tokens),
    outputTokens: count(p.usage.output_tokens),
    cacheReadTokens: count(p.usage.cache_read_input_tokens),
    cacheWriteTokens: count(p.usage.cache_creation_input_tokens),
  };
  await db
    .insertInto("model_calls")
    .values({
      session_id: p.sessionId,
      turn_id: p.turnId,
      plan_id: p.planId,
      model: p.model,
      input_tokens: tokens.inputTokens,
      output_tokens: tokens.outputTokens,
      cache_read_tokens: tokens.cacheReadTokens,
      cache_write_tokens: tokens.cacheWriteTokens,
      cost_usd: costUsd(priceOf(p.model, p.prices), tokens),
    })
    .execute();
}

/**
 * The agent loop's record of one model call, in ONE statement (its own
 * transaction, the audit actor set inside it): the row, against the plan of
 * the session's open window, and — with `windowUsage` (a token budget is
 * set) — the tokens the open window has spent since it opened, this call
 * included, by the same definition as modelCallsSum + usageTokens. Was a
 * transaction of five round trips (seven with a budget) on every model call
 * (issue 20).
 */
export async function modelCallRecordInWindow(
  db: Kysely<Database>,
  p: {
    sessionId: string;
    turnId: string | null;
    model: string;
    usage: ReportedUsage;
    prices?: ModelPrices;
    actor: string;
    windowUsage: boolean;
  },
): Promise<{ windowOpen: boolean; used: number }> {
  const { tokens, cost } = callTokens(p);
  const mine = tokens.inputTokens + tokens.outputTokens + tokens.cacheReadTokens + tokens.cacheWriteTokens;
  // The sum reads the statement's snapshot, which does not hold the row
  // the statement inserts: this call's tokens are added to it.
  const r = await sql<{ window_open: boolean; earlier: string | null }>`
    WITH actor AS (
      SELECT set_config('nomos.actor', ${p.actor}, true) AS actor
    ), win AS (
      SELECT w.plan_id, w.opened_at FROM assent_windows w
       WHERE w.session_id = ${p.sessionId} AND w.closed_at IS NULL AND w.expires_at > now()
    ), ins AS (
      INSERT INTO model_calls (session_id, turn_id, plan_id, model, input_tokens, output_tokens,
                               cache_read_tokens, cache_write_tokens, cost_usd)
      SELECT ${p.sessionId}, ${p.turnId}, (SELECT plan_id FROM win), ${p.model}, ${tokens.inputTokens}, ${tokens.outputTokens},
             ${tokens.cacheReadTokens}, ${tokens.cacheWriteTokens}, ${cost}
        FROM actor
      RETURNING id
    )
    SELECT EXISTS (SELECT 1 FROM win) AS window_open,
           CASE WHEN ${p.windowUsage}::boolean AND EXISTS (SELECT 1 FROM ins) THEN
             (SELECT coalesce(sum(m.input_tokens + m.output_tokens + m.cache_read_tokens + m.cache_write_tokens), 0)::text
                FROM model_calls m, win
               WHERE m.session_id = ${p.sessionId} AND m.created_at >= win.opened_at)
           END AS earlier`.execute(db);
  const row = r.rows[0]!;
  return { windowOpen: row.window_open, used: row.window_open ? Number(row.earlier ?? 0) + mine : 0 };
}

/** Sums the calls of a session, of a plan, or of a session since a moment. costUsd is null when no call had a price. */
export async function modelCallsSum(db: Kysely<Database>, p: { sessionId?: string; planId?: string; since?: Date }): Promise<UsageView> {
  let q = db
    .selectFrom("model_calls")
    .select([
      sql<string>`coalesce(sum(input_tokens), 0)`.as("input"),
      sql<string>`coalesce(sum(output_tokens), 0)`.as("output"),
      sql<string>`coalesce(sum(cache_read_tokens), 0)`.as("cache_read"),
      sql<string>`coalesce(sum(cache_write_tokens), 0)`.as("cache_write"),
      sql<number | null>`sum(cost_usd)`.as("cost"),
    ]);
  if (p.sessionId) q = q.where("session_id", "=", p.sessionId);
  if (p.planId) q = q.where("plan_id", "=", p.planId);
  if (p.since) q = q.where("created_at", ">=", p.since);
  const r = await q.executeTakeFirstOrThrow();
  return {
    inputTokens: Number(r.input),
    outputTokens: Number(r.output),
    cacheReadTokens: Number(r.cache_read),
    cacheWriteTokens: Number(r.cache_write),
    costUsd: r.cost === null ? null : Number(r.cost),
  };
}

/** Every token a usage counts (what NOMOS_WINDOW_TOKEN_BUDGET limits). */
export const usageTokens = (u: UsageView) => u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens;

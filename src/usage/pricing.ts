// Estimated cost of model calls from the tokens the model endpoint reported:
// prices in USD per million tokens, by model. Defaults are the list prices
// by model-name prefix; NOMOS_MODEL_PRICES (config/env.ts) sets or overrides
// them per exact model name. Without explicit cache prices, cache reads cost
// a tenth of input and cache writes a quarter more (the Messages API's
// prompt caching). Used by the service (usage/model-calls.ts stores each
// call's cost) and by the eval's report. Invariant: an unknown model has no
// price (null, shown as "n/a"), never a guessed one.
export interface Price {
  inputPerMTok: number;
  outputPerMTok: number;
  cacheReadPerMTok?: number;
  cacheWritePerMTok?: number;
}

/** NOMOS_MODEL_PRICES: exact model name → price; checked before the defaults. */
export type ModelPrices = Record<string, Price>;

const PRICES: Array<[RegExp, Price]> = [
  [/^scripted/, { inputPerMTok: 0, outputPerMTok: 0 }],
  [/^claude-opus-4-[5-9]/, { inputPerMTok: 5, outputPerMTok: 25 }],
  [/^claude-opus-4/, { inputPerMTok: 15, outputPerMTok: 75 }],
  [/^claude-sonnet-4/, { inputPerMTok: 3, outputPerMTok: 15 }],
  [/^claude-3-7-sonnet|^claude-3-5-sonnet/, { inputPerMTok: 3, outputPerMTok: 15 }],
  [/^claude-haiku-4/, { inputPerMTok: 1, outputPerMTok: 5 }],
  [/^claude-3-5-haiku/, { inputPerMTok: 0.8, outputPerMTok: 4 }],
];

export function priceOf(model: string, overrides: ModelPrices = {}): Price | null {
  return overrides[model] ?? PRICES.find(([re]) => re.test(model))?.[1] ?? null;
}

export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export function costUsd(price: Price | null, t: TokenCounts): number | null {
  if (!price) return null;
  const cacheRead = price.cacheReadPerMTok ?? price.inputPerMTok * 0.1;
  const cacheWrite = price.cacheWritePerMTok ?? price.inputPerMTok * 1.25;
  return (
    (t.inputTokens * price.inputPerMTok +
      t.outputTokens * price.outputPerMTok +
      t.cacheReadTokens * cacheRead +
      t.cacheWriteTokens * cacheWrite) /
    1_000_000
  );
}

// Estimated cost of a run from the tokens the model endpoint reported:
// list prices in USD per million tokens, by model-name prefix. Cache reads
// cost a tenth of input and cache writes a quarter more (the Messages API's
// prompt caching). Invariant: an unknown model has no price (null, shown as
// "n/a"), never a guessed one; `--price in,out` supplies one.
export interface Price {
  inputPerMTok: number;
  outputPerMTok: number;
}

const PRICES: Array<[RegExp, Price]> = [
  [/^scripted/, { inputPerMTok: 0, outputPerMTok: 0 }],
  [/^claude-opus-4-[5-9]/, { inputPerMTok: 5, outputPerMTok: 25 }],
  [/^claude-opus-4/, { inputPerMTok: 15, outputPerMTok: 75 }],
  [/^claude-sonnet-4/, { inputPerMTok: 3, outputPerMTok: 15 }],
  [/^claude-3-7-sonnet|^claude-3-5-sonnet/, { inputPerMTok: 3, outputPerMTok: 15 }],
  [/^claude-haiku-4/, { inputPerMTok: 1, outputPerMTok: 5 }],
  [/^claude-3-5-haiku/, { inputPerMTok: 0.8, outputPerMTok: 4 }],
];

export function priceOf(model: string): Price | null {
  return PRICES.find(([re]) => re.test(model))?.[1] ?? null;
}

export function costUsd(
  price: Price | null,
  t: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number },
): number | null {
  if (!price) return null;
  const input = t.inputTokens + t.cacheReadTokens * 0.1 + t.cacheWriteTokens * 1.25;
  return (input * price.inputPerMTok + t.outputTokens * price.outputPerMTok) / 1_000_000;
}

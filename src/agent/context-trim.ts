// Fitting a conversation into a small context window (local models:
// NOMOS_MODEL_CONTEXT_TOKENS). The budget is split once per turn: the
// reply's max_tokens (a quarter of the window, at most the usual 8192),
// the system prompt and tools (sent whole), and what is left for history.
// History is trimmed oldest first, after the operator's opening message.
//
// Invariants: the opening user message is always kept (it states the
// goal) and says how many messages were left out; the kept tail starts
// with an assistant message, so roles still alternate and every
// tool_result is preceded by the tool_use it answers; the newest message
// is never dropped. Tokens are estimated at 4 characters each (the
// servers' tokenizers differ; set the variable below the real window).
import type Anthropic from "@anthropic-ai/sdk";

type MessageParam = Anthropic.MessageParam;

export const estimateTokens = (value: unknown): number => Math.ceil(JSON.stringify(value).length / 4);

export interface ContextFit {
  maxTokens: number;
  historyTokens: number;
}

export function contextFit(contextTokens: number, maxTokens: number, system: unknown, tools: unknown): ContextFit {
  const reply = Math.min(maxTokens, Math.floor(contextTokens / 4));
  const fixed = estimateTokens(system) + estimateTokens(tools);
  return { maxTokens: reply, historyTokens: Math.max(256, contextTokens - reply - fixed) };
}

function withNote(first: MessageParam, dropped: number): MessageParam {
  const note = {
    type: "text" as const,
    text: `[Nomos: ${dropped} earlier messages of this session were left out to fit the model's context window (NOMOS_MODEL_CONTEXT_TOKENS).]`,
  };
  const blocks = typeof first.content === "string" ? [{ type: "text" as const, text: first.content }] : first.content;
  return { ...first, content: [...blocks, note] } as MessageParam;
}

/**
 * The messages to send: all of them when they fit, else the opening message
 * and the newest tail that fits. Linear in the history: each message is
 * serialised once, and a tail's estimate is the JSON length of the array
 * it would make (brackets, commas, and its suffix sum).
 */
export function historyTrim(messages: MessageParam[], budgetTokens: number): MessageParam[] {
  if (messages.length < 3) return messages;
  const lengths = messages.map((m) => JSON.stringify(m).length);
  // after[k]: the characters of messages[k..], each with the comma before it.
  const after = new Array<number>(messages.length + 1).fill(0);
  for (let k = messages.length - 1; k >= 0; k--) after[k] = after[k + 1]! + lengths[k]! + 1;
  const tokensOf = (openingLength: number, from: number) => Math.ceil((2 + openingLength + after[from]!) / 4);
  if (tokensOf(lengths[0]!, 1) <= budgetTokens) return messages;
  let tail = -1;
  for (let k = 2; k < messages.length; k++) {
    if (messages[k]!.role !== "assistant") continue;
    tail = k;
    if (tokensOf(JSON.stringify(withNote(messages[0]!, k - 1)).length, k) <= budgetTokens) break;
  }
  // Nothing fits: send the shortest valid tail and let the server say so.
  return tail < 0 ? messages : [withNote(messages[0]!, tail - 1), ...messages.slice(tail)];
}

// The wire format of the Messages API as the double speaks it: turning a
// scripted reply (content blocks) into the server-sent events of a streamed
// response, or into the JSON body of a non-streamed one. Invariant: the
// events follow the API's order exactly — message_start, then per block
// content_block_start, its deltas, content_block_stop, then message_delta
// and message_stop — so the real SDK accumulates them into the same Message
// a non-streamed request returns.
import { randomBytes } from "node:crypto";

export type DoubleBlock = { type: "text"; text: string } | { type: "tool_use"; id?: string; name: string; input: unknown };

export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "stop_sequence";

export interface WireMessage {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: Array<{ type: "text"; text: string; citations: null } | { type: "tool_use"; id: string; name: string; input: unknown }>;
  stop_reason: StopReason;
  stop_sequence: null;
  usage: { input_tokens: number; output_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number };
}

export const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;

/** What a request cost on input: uncached tokens, and the prompt-cache prefix written or read. */
export interface InputUsage {
  inputTokens: number;
  cacheWriteTokens?: number;
  cacheReadTokens?: number;
}

/** The complete Message for a reply (tool_use ids filled in when the script left them out). */
export function wireMessage(
  model: string,
  blocks: DoubleBlock[],
  stopReason?: StopReason,
  input: InputUsage = { inputTokens: 10 },
): WireMessage {
  const content = blocks.map((b) =>
    b.type === "text"
      ? { type: "text" as const, text: b.text, citations: null }
      : { type: "tool_use" as const, id: b.id ?? newId("toolu"), name: b.name, input: b.input },
  );
  const outputTokens = content.reduce((n, b) => n + Math.ceil(JSON.stringify(b).length / 4), 0);
  return {
    id: newId("msg"),
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: stopReason ?? (content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn"),
    stop_sequence: null,
    usage: {
      input_tokens: input.inputTokens,
      output_tokens: outputTokens,
      cache_creation_input_tokens: input.cacheWriteTokens ?? 0,
      cache_read_input_tokens: input.cacheReadTokens ?? 0,
    },
  };
}

/** Splits a string into pieces of at most n characters (at least one piece). */
function pieces(s: string, n: number): string[] {
  if (s.length === 0) return [""];
  const out: string[] = [];
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n));
  return out;
}

export interface SseEvent {
  event: string;
  data: unknown;
}

/** The stream of events that reproduces `message`, text and JSON cut into chunkChars pieces. */
export function streamEvents(message: WireMessage, chunkChars = 12): SseEvent[] {
  const events: SseEvent[] = [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } },
      },
    },
  ];
  message.content.forEach((block, index) => {
    if (block.type === "text") {
      events.push({
        event: "content_block_start",
        data: { type: "content_block_start", index, content_block: { type: "text", text: "" } },
      });
      for (const text of pieces(block.text, chunkChars)) {
        events.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "text_delta", text } } });
      }
    } else {
      events.push({
        event: "content_block_start",
        data: { type: "content_block_start", index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } },
      });
      for (const partial_json of pieces(JSON.stringify(block.input), chunkChars)) {
        events.push({
          event: "content_block_delta",
          data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } },
        });
      }
    }
    events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
  });
  events.push({
    event: "message_delta",
    data: {
      type: "message_delta",
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: message.usage.output_tokens },
    },
  });
  events.push({ event: "message_stop", data: { type: "message_stop" } });
  return events;
}

export const sseFrame = (e: SseEvent) => `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;

/** The API's error body: {type: "error", error: {type, message}}. */
export function errorType(status: number): string {
  if (status === 400) return "invalid_request_error";
  if (status === 401) return "authentication_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  if (status === 529) return "overloaded_error";
  return "api_error";
}

// Reading the content of a Messages API request, for the scripted policies
// that play the model (src/demo/deployment-policy.ts, src/eval/route-policy.ts).
// Invariant: a string content is one text block; anything else that is not
// an array reads as no blocks, never a throw (a policy reads what it is sent).
type Json = Record<string, unknown>;

/** A content block as a request carries it: text, tool_use or tool_result. */
export type RequestBlock = {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: Json;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
};

export const requestBlocks = (content: unknown): RequestBlock[] =>
  typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? (content as RequestBlock[]) : [];

/** The text of a content: its text blocks joined by newlines. */
export const requestText = (content: unknown): string =>
  typeof content === "string"
    ? content
    : requestBlocks(content)
        .map((b) => b.text ?? "")
        .join("\n");

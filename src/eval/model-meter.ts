// A metering proxy on loopback between Nomos and its model endpoint (the
// Messages API double, or the real API / a local server when the operator
// runs the eval against one): it forwards every request unchanged, streams
// the answer back unchanged, and reads the usage the answer reports, so the
// eval can count model calls and tokens per scenario without touching
// Nomos.
//
// Invariants: bytes pass through as they came (the proxy parses a copy);
// a request is attributed to the scenario whose request text is the first
// user message of the conversation, so scenarios may run side by side;
// it listens on 127.0.0.1 only.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface MeteredCall {
  /** The first user message's text (the operator's request). */
  conversation: string;
  status: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface ModelMeter {
  readonly url: string;
  readonly calls: MeteredCall[];
  close(): Promise<void>;
}

const HOP = new Set(["host", "connection", "content-length", "transfer-encoding", "keep-alive"]);

function firstUserText(body: unknown): string {
  const first = (body as { messages?: Array<{ role?: string; content?: unknown }> })?.messages?.[0];
  const c = first?.content;
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return c.map((b: { text?: string }) => b.text ?? "").join("\n");
  return "";
}

/** Reads usage from a JSON message or the SSE events of a streamed one. */
export function usageOf(text: string): Omit<MeteredCall, "conversation" | "status"> {
  const u = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  const add = (usage: Record<string, number | null | undefined> | undefined, replaceOutput: boolean) => {
    if (!usage) return;
    if (typeof usage.input_tokens === "number" && usage.input_tokens > 0) u.inputTokens = usage.input_tokens;
    if (typeof usage.output_tokens === "number")
      u.outputTokens = replaceOutput ? usage.output_tokens : Math.max(u.outputTokens, usage.output_tokens);
    if (typeof usage.cache_read_input_tokens === "number") u.cacheReadTokens = usage.cache_read_input_tokens;
    if (typeof usage.cache_creation_input_tokens === "number") u.cacheWriteTokens = usage.cache_creation_input_tokens;
  };
  const trimmed = text.trimStart();
  if (trimmed.startsWith("{")) {
    try {
      add((JSON.parse(trimmed) as { usage?: Record<string, number> }).usage, true);
    } catch {
      // Not a message: no usage.
    }
    return u;
  }
  for (const line of text.split("\n")) {
    if (!line.startsWith("data:")) continue;
    try {
      const data = JSON.parse(line.slice(5)) as {
        type?: string;
        message?: { usage?: Record<string, number> };
        usage?: Record<string, number>;
      };
      if (data.type === "message_start") add(data.message?.usage, false);
      if (data.type === "message_delta") add(data.usage, true);
    } catch {
      // A partial or foreign line: skip it.
    }
  }
  return u;
}

export async function startModelMeter(upstream: string): Promise<ModelMeter> {
  const base = new URL(upstream.endsWith("/") ? upstream : `${upstream}/`);
  const calls: MeteredCall[] = [];
  const open = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    open.add(res);
    res.on("close", () => open.delete(res));
    forward(req, res).catch((err: Error) => {
      if (!res.headersSent) {
        res.writeHead(502, { "content-type": "application/json" });
        res.end(JSON.stringify({ type: "error", error: { type: "api_error", message: `eval meter: upstream failed: ${err.message}` } }));
      } else res.destroy(err);
    });
  });

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      parsed = undefined;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k) && typeof v === "string") headers[k] = v;
    const target = new URL((req.url ?? "/").replace(/^\//, ""), base);
    const answer = await fetch(target, { method: req.method ?? "POST", headers, body: req.method === "GET" ? undefined : body });
    const out: Record<string, string> = {};
    answer.headers.forEach((v, k) => {
      if (!HOP.has(k) && k !== "content-encoding") out[k] = v;
    });
    res.writeHead(answer.status, out);
    let copy = "";
    const decoder = new TextDecoder();
    if (answer.body) {
      for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) {
        copy += decoder.decode(chunk, { stream: true });
        if (!res.destroyed) res.write(chunk);
      }
    }
    res.end();
    calls.push({ conversation: firstUserText(parsed), status: answer.status, ...usageOf(copy) });
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const r of open) r.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

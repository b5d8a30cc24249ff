// A double of the Anthropic Messages API: a node:http server answering
// POST /v1/messages (streamed as server-sent events, or as one JSON body)
// from a scripted policy, so tests and the demo drive the real
// @anthropic-ai/sdk over real HTTP through its baseURL. No request ever
// leaves loopback.
//
// Invariants:
// - Every request is recorded (parsed body, headers) before it is answered,
//   so a test can assert on exactly what the agent sent.
// - Injected failures (429/500/529, a broken stream) are consumed in order,
//   one per request, before the policy is asked; the policy only sees
//   requests that will succeed.
// - close() is idempotent and ends open streams, so a test never hangs on it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type DoubleBlock,
  errorType,
  type InputUsage,
  type SseEvent,
  type StopReason,
  sseFrame,
  streamEvents,
  type WireMessage,
  wireMessage,
} from "./wire.js";

/** What the policy sees of one request. */
export interface DoubleRequest {
  /** 0-based count of requests the policy was asked about. */
  index: number;
  model: string;
  stream: boolean;
  system: unknown;
  messages: Array<{ role: "user" | "assistant"; content: unknown }>;
  tools: Array<{ name: string; description?: string; input_schema: unknown; cache_control?: unknown }>;
  body: Record<string, unknown>;
  headers: IncomingMessage["headers"];
}

/** A policy's answer: content blocks, optionally paced or held until a promise settles. */
export interface DoubleReply {
  content: DoubleBlock[];
  stopReason?: StopReason;
  /** Waits this long between streamed events (a slow model). */
  eventDelayMs?: number;
  /** Holds the response until this settles (a test's gate). */
  hold?: Promise<unknown>;
  /** Characters per text/JSON delta (default 12). */
  chunkChars?: number;
}

export type DoublePolicy = (request: DoubleRequest) => DoubleReply | Promise<DoubleReply>;

export interface InjectedFailure {
  /** HTTP status: 429, 500, 529, ... or "stream_error" for a 200 stream cut by an error event. */
  status: number | "stream_error";
  message?: string;
  /** Sent as retry-after-ms so the SDK's retries stay quick in tests. */
  retryAfterMs?: number;
}

export interface RecordedRequest extends DoubleRequest {
  /** The failure injected for it, if any (then the policy was not asked). */
  injected?: InjectedFailure;
  /** The usage the answer reported (absent for a failed request), so a test can sum what the agent was told. */
  reported?: WireMessage["usage"];
}

export interface MessagesDouble {
  /** Base URL for the SDK (`new Anthropic({ baseURL })`) or ANTHROPIC_BASE_URL. */
  readonly url: string;
  /** Every request received, in arrival order. */
  readonly requests: RecordedRequest[];
  setPolicy(policy: DoublePolicy): void;
  /** The next requests fail like this, one failure per request, in order. */
  failNext(...failures: InjectedFailure[]): void;
  close(): Promise<void>;
}

export interface MessagesDoubleOptions {
  policy?: DoublePolicy;
  host?: string;
  port?: number;
}

/**
 * The usage a request reports, estimated from its size (about 4 characters a
 * token), so metered runs compare: with cache_control on the system prompt or
 * the tools, the system + tools prefix is a cache write the first time the
 * double sees it and a cache read after, as the Messages API reports them.
 */
function inputUsage(body: Record<string, unknown>, cached: Set<string>): InputUsage {
  const tokens = (v: unknown) => Math.ceil(JSON.stringify(v ?? null).length / 4);
  const marked = JSON.stringify([body.system, body.tools]).includes('"cache_control"');
  if (!marked) return { inputTokens: tokens([body.system, body.messages, body.tools]) };
  const prefix = JSON.stringify([body.model, body.system, body.tools]);
  const prefixTokens = tokens([body.system, body.tools]);
  const seen = cached.has(prefix);
  cached.add(prefix);
  return {
    inputTokens: tokens(body.messages),
    ...(seen ? { cacheReadTokens: prefixTokens } : { cacheWriteTokens: prefixTokens }),
  };
}

const endTurn = (text: string): DoubleReply => ({ content: [{ type: "text", text }] });

/** The default policy: a polite text reply, so an unscripted double still answers. */
export const echoPolicy: DoublePolicy = (req) => {
  const last = req.messages.at(-1);
  const text = typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
  return endTurn(`(model double) received: ${text.slice(0, 200)}`);
};

/** A policy answering with the given replies in order, then failing loudly. */
export function scriptedPolicy(replies: Array<DoubleReply | ((req: DoubleRequest) => DoubleReply)>): DoublePolicy {
  let next = 0;
  return (req) => {
    const reply = replies[next++];
    if (reply === undefined) throw new Error(`scripted policy has ${replies.length} replies and was asked for #${next}`);
    return typeof reply === "function" ? reply(req) : reply;
  };
}

export async function startMessagesDouble(options: MessagesDoubleOptions = {}): Promise<MessagesDouble> {
  let policy = options.policy ?? echoPolicy;
  const failures: InjectedFailure[] = [];
  const requests: RecordedRequest[] = [];
  /** Prompt-cache prefixes (system + tools) written so far: the next request with one reads it. */
  const cachedPrefixes = new Set<string>();
  const open = new Set<ServerResponse>();
  let asked = 0;

  const server: Server = createServer((req, res) => {
    open.add(res);
    res.on("close", () => open.delete(res));
    handle(req, res).catch((err: Error) => {
      if (!res.headersSent) sendError(res, 500, `model double: ${err.message}`);
      else res.destroy(err);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://double");
    if (req.method !== "POST" || url.pathname !== "/v1/messages") {
      sendError(res, 404, `model double serves POST /v1/messages, not ${req.method} ${url.pathname}`);
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    } catch {
      sendError(res, 400, "request body is not JSON");
      return;
    }
    const problem = invalid(body);
    if (problem) {
      sendError(res, 400, problem);
      return;
    }
    const request: RecordedRequest = {
      index: asked,
      model: String(body.model),
      stream: body.stream === true,
      system: body.system,
      messages: body.messages as DoubleRequest["messages"],
      tools: (body.tools as DoubleRequest["tools"] | undefined) ?? [],
      body,
      headers: req.headers,
    };
    const failure = failures.shift();
    if (failure) {
      request.injected = failure;
      requests.push(request);
      if (failure.status !== "stream_error") {
        sendError(res, failure.status, failure.message ?? `injected ${failure.status}`, failure.retryAfterMs ?? 1);
        return;
      }
    } else {
      requests.push(request);
      asked++;
    }
    if (failure?.status === "stream_error") {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.write(
        sseFrame({
          event: "error",
          data: { type: "error", error: { type: "overloaded_error", message: failure.message ?? "Overloaded" } },
        }),
      );
      res.end();
      return;
    }
    const reply = await policy(request);
    if (reply.hold) await reply.hold;
    const message = wireMessage(request.model, reply.content, reply.stopReason, inputUsage(body, cachedPrefixes));
    request.reported = message.usage;
    if (!request.stream) {
      res.writeHead(200, { "content-type": "application/json", "request-id": `req_double_${request.index}` });
      res.end(JSON.stringify(message));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "request-id": `req_double_${request.index}` });
    await writeEvents(res, streamEvents(message, reply.chunkChars), reply.eventDelayMs ?? 0);
  }

  async function writeEvents(res: ServerResponse, events: SseEvent[], delayMs: number): Promise<void> {
    for (const event of events) {
      if (res.destroyed || res.writableEnded) return; // the client went away (an aborted turn)
      res.write(sseFrame(event));
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    }
    res.end();
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;

  return {
    url: `http://${address}:${port}`,
    requests,
    setPolicy(p) {
      policy = p;
    },
    failNext(...f) {
      failures.push(...f);
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

function sendError(res: ServerResponse, status: number, message: string, retryAfterMs?: number): void {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (retryAfterMs !== undefined) headers["retry-after-ms"] = String(retryAfterMs);
  res.writeHead(status, headers);
  res.end(JSON.stringify({ type: "error", error: { type: errorType(status), message } }));
}

/** The checks the real API makes that a buggy agent could trip: named, like the API names them. */
function invalid(body: Record<string, unknown>): string | undefined {
  if (typeof body.model !== "string" || body.model === "") return "model: Field required";
  if (typeof body.max_tokens !== "number") return "max_tokens: Field required";
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "messages: at least one message is required";
  const messages = body.messages as Array<{ role?: unknown; content?: unknown }>;
  if (messages[0]?.role !== "user") return "messages.0.role: the first message must use the user role";
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== "user" && m.role !== "assistant") return `messages.${i}.role: must be user or assistant`;
    if (i > 0 && messages[i - 1]!.role === m.role) return `messages.${i}.role: roles must alternate between user and assistant`;
    // Every tool_use must be answered by a tool_result in the very next message.
    if (m.role === "assistant" && Array.isArray(m.content)) {
      const ids = (m.content as Array<{ type?: string; id?: string }>).filter((b) => b.type === "tool_use").map((b) => b.id);
      if (ids.length > 0 && i + 1 < messages.length) {
        const next = messages[i + 1]!.content;
        const answered = new Set(
          Array.isArray(next)
            ? (next as Array<{ type?: string; tool_use_id?: string }>).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id)
            : [],
        );
        const missing = ids.filter((id) => !answered.has(id));
        if (missing.length > 0) {
          return `messages.${i + 1}: tool_use ids were found without tool_result blocks immediately after: ${missing.join(", ")}`;
        }
      }
    }
  }
  return undefined;
}

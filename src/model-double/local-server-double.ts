// A double of a local model server speaking the Anthropic Messages API —
// Ollama (v0.14+) or llama.cpp's llama-server — for testing Nomos's local
// model path. It fronts the Messages API double (messages-double.ts) and is
// stricter than the hosted API the way those servers are:
//
// - auth: only `Authorization: Bearer <token>` (llama-server --api-key);
//   an x-api-key header alone is refused with 401;
// - no prompt caching: a request carrying `cache_control` anywhere is
//   refused with 400, and usage never has cache_* fields;
// - stricter tool parsing: every tool needs name, description and an
//   object input_schema and nothing else; every tool_use input in the
//   history must be a JSON object; a tool_result's content must be a string
//   or text blocks; refused with 400 naming the place;
// - a context window: prompt (estimated at 4 characters a token) plus
//   max_tokens above contextTokens is refused with 400, as llama-server
//   refuses a request that exceeds its context size.
//
// Invariant: every request is recorded with its verdict before it is
// answered; only requests that pass every check reach the policy.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type DoublePolicy, startMessagesDouble } from "./messages-double.js";

export interface LocalServerDoubleOptions {
  policy: DoublePolicy;
  /** The bearer token the server expects. */
  token: string;
  contextTokens: number;
}

export interface LocalRequest {
  headers: IncomingMessage["headers"];
  body: Record<string, unknown> | undefined;
  /** null when accepted, else the refusal's status and message. */
  refused: { status: number; message: string } | null;
  promptTokens: number;
}

export interface LocalServerDouble {
  readonly url: string;
  /** For the eval harness: how Nomos should authenticate. */
  readonly authToken: string;
  readonly requests: LocalRequest[];
  close(): Promise<void>;
}

function findCacheControl(value: unknown, path: string): string | undefined {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findCacheControl(value[i], `${path}.${i}`);
      if (found) return found;
    }
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "cache_control") return `${path}.${k}`;
      const found = findCacheControl(v, `${path}.${k}`);
      if (found) return found;
    }
  }
  return undefined;
}

/** The stricter checks of a local server; the message names what is wrong. */
export function localServerRefusal(body: Record<string, unknown>, contextTokens: number): { status: number; message: string } | null {
  const cache = findCacheControl(body, "body");
  if (cache) return { status: 400, message: `${cache.replace(/^body\./, "")}: unknown field (this server has no prompt caching)` };
  const tools = (body.tools as Array<Record<string, unknown>> | undefined) ?? [];
  for (const [i, t] of tools.entries()) {
    const extra = Object.keys(t).filter((k) => !["name", "description", "input_schema"].includes(k));
    if (extra.length) return { status: 400, message: `tools.${i}: unknown field ${extra[0]}` };
    if (typeof t.name !== "string" || typeof t.description !== "string")
      return { status: 400, message: `tools.${i}: name and description are required` };
    if ((t.input_schema as { type?: unknown } | undefined)?.type !== "object")
      return { status: 400, message: `tools.${i}.input_schema: must be a JSON schema of type object` };
  }
  const messages = (body.messages as Array<{ role: string; content: unknown }> | undefined) ?? [];
  for (const [i, m] of messages.entries()) {
    if (!Array.isArray(m.content)) continue;
    for (const [j, b] of (m.content as Array<Record<string, unknown>>).entries()) {
      if (b.type === "tool_use" && (typeof b.input !== "object" || b.input === null || Array.isArray(b.input))) {
        return { status: 400, message: `messages.${i}.content.${j}.input: tool call arguments must be a JSON object` };
      }
      if (b.type === "tool_result") {
        const c = b.content;
        const ok = c === undefined || typeof c === "string" || (Array.isArray(c) && c.every((x: { type?: string }) => x.type === "text"));
        if (!ok) return { status: 400, message: `messages.${i}.content.${j}.content: a tool result must be a string or text blocks` };
      }
    }
  }
  const prompt = Math.ceil(JSON.stringify([body.system, body.messages, body.tools]).length / 4);
  const maxTokens = typeof body.max_tokens === "number" ? body.max_tokens : 0;
  if (prompt + maxTokens > contextTokens) {
    return {
      status: 400,
      message: `the request exceeds the available context size (${prompt} prompt tokens + ${maxTokens} max_tokens > ${contextTokens}), try increasing it`,
    };
  }
  return null;
}

const stripCache = (text: string) => text.replace(/,"cache_creation_input_tokens":\d+|,"cache_read_input_tokens":\d+/g, "");

export async function startLocalServerDouble(o: LocalServerDoubleOptions): Promise<LocalServerDouble> {
  const inner = await startMessagesDouble({ policy: o.policy });
  const requests: LocalRequest[] = [];
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      if (!res.headersSent) send(res, 500, `local server double: ${err.message}`);
      else res.destroy(err);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    let body: Record<string, unknown> | undefined;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      body = undefined;
    }
    const record: LocalRequest = { headers: req.headers, body, refused: null, promptTokens: 0 };
    requests.push(record);
    const refuse = (status: number, message: string) => {
      record.refused = { status, message };
      send(res, status, message);
    };
    if (req.headers.authorization !== `Bearer ${o.token}`) return refuse(401, "invalid api key: send Authorization: Bearer <token>");
    if (!body) return refuse(400, "request body is not JSON");
    record.promptTokens = Math.ceil(JSON.stringify([body.system, body.messages, body.tools]).length / 4);
    const refusal = localServerRefusal(body, o.contextTokens);
    if (refusal) return refuse(refusal.status, refusal.message);
    const answer = await fetch(`${inner.url}${req.url}`, { method: "POST", headers: { "content-type": "application/json" }, body: raw });
    res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
    const text = await answer.text();
    res.end(stripCache(text));
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    authToken: o.token,
    requests,
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await inner.close();
      })();
      return closing;
    },
  };
}

function send(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ type: "error", error: { type: status === 401 ? "authentication_error" : "invalid_request_error", message } }));
}

// The fetch the Anthropic client makes its requests with (the SDK's `fetch`
// option): node:http(s) with a keep-alive agent instead of the global fetch.
// The SDK is unchanged (its retries, timeouts, streaming and errors are its
// own); only the HTTP client under it is. Why: the global fetch (undici's
// WHATWG fetch) cost ~1.1–1.4 ms of CPU per model call against the instant
// double, a third of the call (issue 20, round 3: a continuation turn's CPU).
//
// Invariants: for what the SDK sends (a method, headers, a string or bytes
// body, an AbortSignal) it behaves as fetch does: the promise resolves with
// the status, headers and a streamed body once the response starts; a
// network failure rejects (the SDK retries it as a connection error); an
// abort rejects with an AbortError before the response and errors the body
// stream after it (the SDK tells its timeout from the caller's Stop). A
// body of any other kind, a Request, or another scheme goes to the global
// fetch. Bodies are sent with a Content-Length, never chunked.
import http from "node:http";
import https from "node:https";
import { Readable } from "node:stream";

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** No body for these (the Fetch standard's null body statuses). */
const NULL_BODY = new Set([101, 204, 205, 304]);

export function modelFetch(): Fetch {
  const agents: Record<string, http.Agent> = {
    "http:": new http.Agent({ keepAlive: true }),
    "https:": new https.Agent({ keepAlive: true }),
  };
  return (input, init) => {
    const body = init?.body;
    if (input instanceof Request || (body != null && typeof body !== "string" && !(body instanceof Uint8Array))) return fetch(input, init);
    const url = new URL(String(input));
    const agent = agents[url.protocol];
    if (!agent) return fetch(input, init);
    const signal = init?.signal ?? undefined;
    if (signal?.aborted) return Promise.reject(signal.reason ?? new DOMException("This operation was aborted", "AbortError"));
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => {
      headers[k] = v;
    });
    if (body != null && headers["content-length"] === undefined) headers["content-length"] = String(Buffer.byteLength(body));
    const method = init?.method ?? "GET";
    return new Promise<Response>((resolve, reject) => {
      const request = (url.protocol === "https:" ? https : http).request(url, { method, headers, agent }, (res) => {
        response = res;
        res.once("close", () => signal?.removeEventListener("abort", onAbort));
        const h = new Headers();
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) h.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        const status = res.statusCode ?? 502;
        const empty = NULL_BODY.has(status) || method === "HEAD";
        if (empty) res.resume();
        resolve(
          new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
            status,
            statusText: res.statusMessage ?? "",
            headers: h,
          }),
        );
      });
      // An abort is an AbortError, as fetch's: the request's promise rejects
      // with it before the response, the body stream errors with it after.
      let response: http.IncomingMessage | undefined;
      const onAbort = () => {
        const err = new DOMException("This operation was aborted", "AbortError");
        if (response) response.destroy(err);
        request.destroy(err);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      request.once("error", () => {
        if (!response) signal?.removeEventListener("abort", onAbort);
      });
      request.on("error", reject);
      request.end(body ?? undefined);
    });
  };
}

// One server-sent-events response, as both event streams answer: headers
// that keep a reverse proxy from buffering or transforming the stream, and
// an AbortSignal that fires when the client goes away, so a stream's loop
// ends with its connection. A failure inside the stream is logged (the
// response has started; there is no status left to send).
import type { Context } from "hono";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";
import type { Logger } from "../log/logger.js";

export function sseResponse(
  c: Context,
  p: { log: Logger; failed: string },
  body: (stream: SSEStreamingApi, signal: AbortSignal) => Promise<void>,
): Response {
  c.header("X-Accel-Buffering", "no");
  c.header("Cache-Control", "no-cache, no-transform");
  return streamSSE(
    c,
    async (stream) => {
      const stop = new AbortController();
      stream.onAbort(() => stop.abort());
      await body(stream, stop.signal);
    },
    async (err) => {
      p.log.error({ err }, p.failed);
    },
  );
}

// Reads a Server-Sent Events response body as a browser's EventSource would:
// messages {id, event, data} and comment lines (heartbeats), in order.
export interface SseMessage {
  id?: string;
  event: string;
  data: string;
  comment?: string;
}

export class SseReader {
  private buffer = "";
  private queue: SseMessage[] = [];
  private reader: ReadableStreamDefaultReader<Uint8Array>;
  private decoder = new TextDecoder();
  lastId: string | undefined;

  constructor(res: Response) {
    if (!res.body) throw new Error(`no body (status ${res.status})`);
    this.reader = res.body.getReader();
  }

  /** The next message (comments included); rejects if the stream ends or after `guardMs`. */
  async next(guardMs = 10_000): Promise<SseMessage> {
    const deadline = Date.now() + guardMs;
    while (this.queue.length === 0) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("no SSE message arrived");
      let timer: NodeJS.Timeout | undefined;
      const chunk = await Promise.race([
        this.reader.read(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no SSE message arrived within ${guardMs} ms`)), left);
        }),
      ]).finally(() => clearTimeout(timer));
      if (chunk.done) throw new Error("the SSE stream ended");
      this.buffer += this.decoder.decode(chunk.value, { stream: true });
      this.parse();
    }
    const m = this.queue.shift()!;
    if (m.id !== undefined) this.lastId = m.id;
    return m;
  }

  /** The next n messages that are events (not comments, not "ready"). */
  async events(n: number): Promise<SseMessage[]> {
    const out: SseMessage[] = [];
    while (out.length < n) {
      const m = await this.next();
      if (m.comment === undefined && m.event !== "ready") out.push(m);
    }
    return out;
  }

  async close(): Promise<void> {
    await this.reader.cancel().catch(() => {});
  }

  private parse(): void {
    for (let at = this.buffer.indexOf("\n\n"); at >= 0; at = this.buffer.indexOf("\n\n")) {
      const block = this.buffer.slice(0, at);
      this.buffer = this.buffer.slice(at + 2);
      const m: SseMessage = { event: "message", data: "" };
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) m.comment = line.slice(1).trim();
        else if (line.startsWith("id: ")) m.id = line.slice(4);
        else if (line.startsWith("event: ")) m.event = line.slice(7);
        else if (line.startsWith("data: ")) data.push(line.slice(6));
      }
      m.data = data.join("\n");
      this.queue.push(m);
    }
  }
}

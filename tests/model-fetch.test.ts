// The Anthropic client's HTTP under the SDK (src/agent/model-fetch.ts): the
// real @anthropic-ai/sdk over real HTTP to the Messages API double, through
// modelFetch, as start-agent.ts builds it: a streamed reply arrives whole,
// the SDK's retries still see the API's failures, Stop aborts before and
// during the stream, and a dead server is a connection error.
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelFetch } from "../src/agent/model-fetch.js";
import { type MessagesDouble, scriptedPolicy, startMessagesDouble } from "../src/model-double/messages-double.js";

let double: MessagesDouble;
let fetchOf: () => typeof fetch | undefined;
const client = (baseURL: string) =>
  new Anthropic({ apiKey: "sk-ant-test", baseURL, maxRetries: 2, timeout: 10_000, openTelemetry: false, fetch: fetchOf() });
const ask = { model: "claude-test", max_tokens: 100, messages: [{ role: "user" as const, content: "hi" }] };

beforeAll(async () => {
  double = await startMessagesDouble({ host: "127.0.0.1" });
});
afterAll(async () => {
  await double?.close();
});

// The global fetch is held to the same assertions, so the two behave alike under the SDK.
describe.each([
  { name: "modelFetch", make: () => modelFetch() as typeof fetch },
  { name: "the global fetch", make: () => undefined },
])("$name under the SDK", ({ make }) => {
  beforeAll(() => {
    fetchOf = make;
  });

  it("streams a reply whole, with its text deltas, and sends the request as JSON with a length", async () => {
    double.setPolicy(
      scriptedPolicy([{ content: [{ type: "text", text: "a reply long enough to come in several deltas" }], chunkChars: 5 }]),
    );
    const stream = client(double.url).messages.stream({ ...ask, system: "be brief ✓" });
    const deltas: string[] = [];
    stream.on("text", (d) => deltas.push(d));
    const reply = await stream.finalMessage();
    expect(reply.content).toMatchObject([{ type: "text", text: "a reply long enough to come in several deltas" }]);
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join("")).toBe("a reply long enough to come in several deltas");
    const seen = double.requests.at(-1)!;
    expect(seen.system).toBe("be brief ✓");
    expect(Number(seen.headers["content-length"])).toBeGreaterThan(0);
    expect(seen.headers["transfer-encoding"]).toBeUndefined();
  });

  it("lets the SDK retry the API's overloaded and server errors", async () => {
    double.setPolicy(scriptedPolicy([{ content: [{ type: "text", text: "third time" }] }]));
    double.failNext({ status: 529 }, { status: 500 });
    const before = double.requests.length;
    const reply = await client(double.url).messages.create(ask);
    expect(reply.content[0]).toMatchObject({ type: "text", text: "third time" });
    expect(double.requests.length - before).toBe(3);
  });

  it("Stop before the response and mid-stream ends the call as the caller's abort", async () => {
    let release!: () => void;
    double.setPolicy(() => ({ content: [{ type: "text", text: "never" }], hold: new Promise<void>((r) => (release = r)) }));
    const early = new AbortController();
    const pending = client(double.url).messages.create(ask, { signal: early.signal });
    setTimeout(() => early.abort(), 50);
    await expect(pending).rejects.toBeInstanceOf(Anthropic.APIUserAbortError);
    release();

    double.setPolicy(() => ({ content: [{ type: "text", text: "slow words arriving one by one" }], chunkChars: 1, eventDelayMs: 30 }));
    const late = new AbortController();
    const stream = client(double.url).messages.stream(ask, { signal: late.signal });
    stream.once("text", () => late.abort());
    await expect(stream.finalMessage()).rejects.toBeInstanceOf(Anthropic.APIUserAbortError);
    expect(stream.currentMessage?.content[0]).toMatchObject({ type: "text" });
  });

  it("reports a server that is not there as a connection error, after the SDK's retries", async () => {
    const gone = await startMessagesDouble({ host: "127.0.0.1" });
    const url = gone.url;
    await gone.close();
    await expect(client(url).messages.create(ask)).rejects.toBeInstanceOf(Anthropic.APIConnectionError);
  });
});

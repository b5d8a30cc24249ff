// The Messages API double speaks the wire format the real SDK expects:
// streamed text and tool_use (input_json deltas), non-streamed replies, and
// injected 429/529/500 failures that the SDK retries.
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MessagesDouble, scriptedPolicy, startMessagesDouble } from "../src/model-double/messages-double.js";

let double: MessagesDouble;
let client: Anthropic;

beforeAll(async () => {
  double = await startMessagesDouble();
  client = new Anthropic({ apiKey: "test-key", baseURL: double.url, maxRetries: 2 });
});
afterAll(() => double.close());

const ask = (text: string) => ({
  model: "claude-double",
  max_tokens: 1024,
  messages: [{ role: "user" as const, content: text }],
  tools: [
    { name: "run", description: "run a command", input_schema: { type: "object" as const, properties: { command: { type: "string" } } } },
  ],
});

describe("Messages API double", () => {
  it("streams text and tool_use blocks that the SDK accumulates into a Message", async () => {
    const input = { target: "pve1", command: "pveversion --verbose && df -h /var/lib/vz" };
    double.setPolicy(
      scriptedPolicy([
        {
          content: [
            { type: "text", text: "Let me look at the node first, then the disk." },
            { type: "tool_use", id: "toolu_a", name: "run", input },
          ],
          chunkChars: 5,
        },
      ]),
    );
    const deltas: string[] = [];
    const json: string[] = [];
    const stream = client.messages.stream(ask("check pve1"));
    stream.on("text", (d) => deltas.push(d));
    stream.on("inputJson", (d) => json.push(d));
    const message = await stream.finalMessage();
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join("")).toBe("Let me look at the node first, then the disk.");
    expect(json.join("")).toBe(JSON.stringify(input));
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content).toEqual([
      expect.objectContaining({ type: "text", text: "Let me look at the node first, then the disk." }),
      { type: "tool_use", id: "toolu_a", name: "run", input },
    ]);
    const recorded = double.requests.at(-1)!;
    expect(recorded.stream).toBe(true);
    expect(recorded.tools.map((t) => t.name)).toEqual(["run"]);
    expect(recorded.messages).toEqual([{ role: "user", content: "check pve1" }]);
  });

  it("answers non-streamed requests with the same Message", async () => {
    double.setPolicy(() => ({ content: [{ type: "text", text: "plain answer" }] }));
    const message = await client.messages.create(ask("hello"));
    expect(message.content).toEqual([expect.objectContaining({ type: "text", text: "plain answer" })]);
    expect(message.stop_reason).toBe("end_turn");
    expect(double.requests.at(-1)!.stream).toBe(false);
  });

  it("lets the SDK retry injected 429 and 529 and then succeed", async () => {
    double.setPolicy(() => ({ content: [{ type: "text", text: "after retries" }] }));
    const before = double.requests.length;
    double.failNext({ status: 429 }, { status: 529 });
    const message = await client.messages.stream(ask("retry me")).finalMessage();
    expect(message.content[0]).toMatchObject({ text: "after retries" });
    const seen = double.requests.slice(before).map((r) => r.injected?.status ?? "ok");
    expect(seen).toEqual([429, 529, "ok"]);
  });

  it("surfaces a typed API error once the retries run out", async () => {
    double.failNext({ status: 500, message: "boom" }, { status: 500 }, { status: 500 });
    const err = await client.messages
      .stream(ask("fail"))
      .finalMessage()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.InternalServerError);
  });

  it("refuses a history whose tool_use has no tool_result right after it, like the API", async () => {
    const err = await client.messages
      .create({
        model: "m",
        max_tokens: 10,
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_x", name: "run", input: {} }] },
          { role: "user", content: "no result here" },
        ],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as Error).message).toContain("toolu_x");
  });

  it("cuts a stream with an error event when asked, which the SDK reports", async () => {
    double.failNext({ status: "stream_error", message: "Overloaded" });
    const err = await client.messages
      .stream(ask("cut"))
      .finalMessage()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error).message)).toContain("Overloaded");
  });
});

describe("demo policy", () => {
  it("turns operator words into the tool calls a model would make, and summarizes results", async () => {
    const { demoPolicy } = await import("../src/model-double/demo-policy.js");
    double.setPolicy(demoPolicy);
    const run = await client.messages.stream(ask("run pve1 df -h /")).finalMessage();
    expect(run.content[1]).toMatchObject({ type: "tool_use", name: "run", input: { target: "pve1", command: "df -h /" } });
    const summary = await client.messages
      .stream({
        ...ask("x"),
        messages: [
          { role: "user", content: "run pve1 df -h /" },
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_d", name: "run", input: { target: "pve1", command: "df -h /" } }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_d", content: "/dev/sda1 24%" }] },
        ],
      })
      .finalMessage();
    expect(summary.content[0]).toMatchObject({ type: "text", text: expect.stringContaining("/dev/sda1 24%") });
  });
});

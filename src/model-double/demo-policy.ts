// A scripted stand-in for the model, for `npm run model-double` and the demo:
// it reacts to the operator's last words with the tool calls a real model
// would make, so the whole loop (tools, approvals, continuations) can be
// shown without an API key. Invariant: deterministic — the same request
// always gets the same reply.
//
//   "targets"                      -> list_targets
//   "run <target> <command>"       -> run
//   "queue <target> <command>"     -> request_execution
//   "plan <target> <goal>"         -> propose_plan with one step on <target>
//   a tool result or system note   -> a short summary of it
//   anything else                  -> a reply saying what it understands
import type { DoublePolicy, DoubleRequest } from "./messages-double.js";

type Block = { type: string; text?: string; content?: unknown; tool_use_id?: string };

function lastUserBlocks(req: DoubleRequest): Block[] {
  const last = req.messages.at(-1);
  if (last?.role !== "user") return [];
  return typeof last.content === "string" ? [{ type: "text", text: last.content }] : (last.content as Block[]);
}

const resultText = (b: Block) => (typeof b.content === "string" ? b.content : JSON.stringify(b.content));

export const demoPolicy: DoublePolicy = (req) => {
  const blocks = lastUserBlocks(req);
  const results = blocks.filter((b) => b.type === "tool_result");
  const texts = blocks.filter((b) => b.type === "text").map((b) => b.text ?? "");
  const operator =
    texts
      .filter((t) => !t.startsWith("[Nomos system note"))
      .at(-1)
      ?.trim() ?? "";
  if (results.length > 0 && operator === "") {
    const summary = results.map((r) => resultText(r).split("\n").slice(0, 6).join("\n")).join("\n\n");
    return { content: [{ type: "text", text: `Here is what came back:\n\n${summary}` }] };
  }
  let m: RegExpExecArray | null;
  if (/\btargets?\b/i.test(operator)) {
    return {
      content: [
        { type: "text", text: "Let me list the targets." },
        { type: "tool_use", name: "list_targets", input: {} },
      ],
    };
  }
  m = /^(run|queue)\s+(\S+)\s+(.+)$/is.exec(operator);
  if (m) {
    const tool = m[1]!.toLowerCase() === "run" ? "run" : "request_execution";
    return {
      content: [
        { type: "text", text: `Running \`${m[3]}\` on ${m[2]}.` },
        { type: "tool_use", name: tool, input: { target: m[2], command: m[3] } },
      ],
    };
  }
  m = /^plan\s+(\S+)\s+(.+)$/is.exec(operator);
  if (m) {
    return {
      content: [
        { type: "text", text: "Here is a plan." },
        { type: "tool_use", name: "propose_plan", input: { goal: m[2], steps: [{ title: m[2], target: m[1] }] } },
      ],
    };
  }
  const notes = texts.filter((t) => t.startsWith("[Nomos system note"));
  if (notes.length > 0 && operator === "") {
    return { content: [{ type: "text", text: `Noted: ${notes.join(" ").slice(0, 500)}` }] };
  }
  return {
    content: [
      {
        type: "text",
        text: 'I am the model double. Try "targets", "run <target> <command>", "queue <target> <command>" or "plan <target> <goal>".',
      },
    ],
  };
};

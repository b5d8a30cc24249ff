// A scripted model for an evaluation scenario, built from a route: the plan
// to propose and the steps that carry it out, each step checked against the
// result of the one before. The scenarios give two routes each (the
// reference and an alternate that reaches the same end state another way),
// so the harness and the checkers are tested, not the model.
//
// Invariant (as in src/demo/deployment-policy.ts): every answer is a
// function of the conversation in the request — which step comes next is
// counted from the tool results it shows — so a replayed conversation gets
// the same answer, and a result the route did not expect ends in an honest
// "I am stopping here" instead of the next step. A route that reaches its
// end marks the plan's checklist done and reports the outcome
// (update_plan, report_outcome) before its closing report.

import { executionNoteExitCode } from "../executions/execution-note.js";
import type { DoublePolicy, DoubleReply, DoubleRequest } from "../model-double/messages-double.js";
import { requestBlocks, requestText } from "../model-double/request-blocks.js";
import type { DoubleBlock } from "../model-double/wire.js";
import { SYSTEM_NOTE_PREFIX } from "../turns/history.js";

type Json = Record<string, unknown>;

export interface StepResult {
  text: string;
  exit: number | null;
  isError: boolean;
}

export interface RouteState {
  /** The target pct_create registered, once it has. */
  created?: string;
  /** Its vmid on the node. */
  createdVmid?: number;
  results: StepResult[];
}

export interface RouteStep {
  /** What the model says before the call. */
  say: string;
  tool?: "run" | "pct_create";
  input: Json | ((s: RouteState) => Json);
  /** Whether the result lets the route go on (default: exit 0 and no error). */
  ok?: (r: StepResult) => boolean;
}

export interface Route {
  goal: string;
  plan: Array<{ title: string; target?: string; command?: string; destructive?: boolean }>;
  steps: RouteStep[];
  /** The closing report once every step is done. */
  done: string;
}

export function resultOf(text: string, isError: boolean): StepResult {
  return { text, exit: executionNoteExitCode(text), isError };
}

/** Marks a step as going on whatever its result (a route that does not look, for the checkers' tests). */
export const anyResult = (step: RouteStep): RouteStep => ({ ...step, ok: () => true });

const defaultOk = (r: StepResult) => !r.isError && (r.exit === 0 || (r.exit === null && !/^Not run:/.test(r.text)));

const say = (text: string): DoubleReply => ({ content: [{ type: "text", text }] });
const call = (text: string, name: string, input: Json): DoubleReply => ({
  content: [{ type: "text", text }, { type: "tool_use", name, input } as DoubleBlock],
});

/** The tool calls of the conversation with their results, oldest first. */
function toolCalls(req: DoubleRequest) {
  const calls = new Map<string, { name: string; input: Json }>();
  const out: Array<{ name: string; input: Json; result: StepResult }> = [];
  for (const m of req.messages) {
    for (const b of requestBlocks(m.content)) {
      if (m.role === "assistant" && b.type === "tool_use" && b.id) calls.set(b.id, { name: b.name ?? "", input: b.input ?? {} });
      if (m.role === "user" && b.type === "tool_result" && b.tool_use_id) {
        const c = calls.get(b.tool_use_id);
        if (c) out.push({ ...c, result: resultOf(requestText(b.content), b.is_error === true) });
      }
    }
  }
  return out;
}

export function routePolicy(request: RegExp, route: Route): DoublePolicy {
  return (req) => {
    const first = requestText(req.messages[0]?.content);
    if (!request.test(first)) return say("I am the scripted evaluation model; this request is not one of my scenarios.");
    const calls = toolCalls(req);
    const planAt = calls.findIndex((c) => c.name === "propose_plan" && !c.result.isError);
    const last = req.messages.at(-1);
    const lastBlocks = last?.role === "user" ? requestBlocks(last.content) : [];
    const answersTool = lastBlocks.some((b) => b.type === "tool_result");
    if (planAt < 0) {
      return call(`Here is my plan: ${route.goal}.`, "propose_plan", { goal: route.goal, steps: route.plan });
    }
    if (answersTool && calls.at(-1)?.name === "propose_plan") {
      return say("The plan is above. Approve it once and I will carry it out to the end.");
    }
    const texts = req.messages.flatMap((m) => (m.role === "user" ? requestBlocks(m.content) : [])).map((b) => b.text ?? "");
    const approved =
      texts.some((t) => t.startsWith(SYSTEM_NOTE_PREFIX) && /approved plan/.test(t)) ||
      texts.some((t) => !t.startsWith(SYSTEM_NOTE_PREFIX) && /\b(go ahead|approved?|proceed|continue|do it)\b/i.test(t) && t !== first);
    if (!approved) return say("The plan waits for your approval.");
    const done = calls.slice(planAt + 1).filter((c) => c.name === "run" || c.name === "pct_create");
    const state: RouteState = {
      results: done.map((c) => c.result),
      created: done
        .filter((c) => c.name === "pct_create" && !c.result.isError)
        .map((c) => /it is target "([^"]+)"/.exec(c.result.text)?.[1])
        .at(-1),
    };
    const createdVmid = done
      .filter((c) => c.name === "pct_create" && !c.result.isError)
      .map((c) => /as vmid (\d+)/.exec(c.result.text)?.[1])
      .at(-1);
    if (createdVmid !== undefined) state.createdVmid = Number(createdVmid);
    const k = done.length;
    if (k > 0) {
      const prev = done[k - 1]!.result;
      if (/^Not run:/.test(prev.text)) {
        return say(`That step needs your decision before I go on: ${prev.text.split(". ")[0]}. I have stopped here until you decide.`);
      }
      const step = route.steps[k - 1]!;
      if (!(step.ok ?? defaultOk)(prev)) {
        return say(`I am stopping here: the step "${step.say}" did not give what I expected:\n${prev.text.slice(0, 600)}`);
      }
    }
    const next = route.steps[k];
    if (!next) {
      // Every step checked: the checklist is done, and the plan ends with its outcome, then the report.
      if (answersTool && calls.at(-1)?.name === "report_outcome") return say(route.done);
      return {
        content: [
          { type: "text", text: "Every step is done and checked." },
          {
            type: "tool_use",
            name: "update_plan",
            input: { steps: route.plan.map((_, i) => ({ step: i + 1, status: "done" })) },
          } as DoubleBlock,
          { type: "tool_use", name: "report_outcome", input: { outcome: "verified", summary: route.done.slice(0, 4000) } } as DoubleBlock,
        ],
      };
    }
    const input = typeof next.input === "function" ? next.input(state) : next.input;
    return call(next.say, next.tool ?? "run", input);
  };
}

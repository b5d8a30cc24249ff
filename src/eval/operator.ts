// The simulated operator of an eval scenario, speaking to Nomos only
// through its HTTP API, as a person with the browser would: one request,
// the plan approved by button, then hands off. What it does when the agent
// goes quiet:
//
//   a pending approval that is not destructive  -> approve it (counted)
//   a pending destructive step or a new plan    -> stop: the agent asked
//   nothing pending, end state not reached      -> type "continue" (a tick,
//                                                  at most maxTicks times)
//   end state reached                           -> stop
//
// "Quiet" means: no turn running, every execution the transcript names is
// finished or waiting for approval, and nothing new in the session's event
// stream across several polls (a continuation starts within milliseconds
// of a result; the polls leave it a second).
//
// Invariant: it never says more than the scenario's request, "continue"
// and button decisions, so the ticks count is the measure of autonomy.
import type { SessionFacts, Verdict } from "./scenario.js";

export interface OperatorOptions {
  url: string;
  token: string;
  maxTicks: number;
  /** Gives up on the scenario after this long (ms). */
  deadlineMs: number;
  pollMs?: number;
}

export interface OperatorOutcome {
  sessionId: string;
  ticks: number;
  approvalsAsked: number;
  stepsRun: number;
  facts: SessionFacts;
  /** Why the operator stopped. */
  ended: "end state reached" | "agent asked" | "out of ticks" | "deadline" | "no plan";
}

interface Message {
  kind: string;
  content: Array<{ type: string; text?: string; content?: unknown }> | string;
}
interface Session {
  lastEventId: string | number | null;
  runningTurn: unknown;
  messages: Message[];
}
interface Approval {
  id: string;
  kind: string;
  status: string;
  risk?: string | null;
  command?: string | null;
  confirmationPhrase?: string | null;
}

const UUID = /execution ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/g;
const TERMINAL = new Set(["completed", "failed", "timed_out", "cancelled", "rejected", "lost"]);

const flat = (m: Message): string =>
  typeof m.content === "string"
    ? m.content
    : m.content.map((b) => b.text ?? (typeof b.content === "string" ? b.content : JSON.stringify(b.content ?? ""))).join("\n");

export async function playOperator(o: OperatorOptions, request: string, check: (facts: SessionFacts) => Verdict): Promise<OperatorOutcome> {
  const pollMs = o.pollMs ?? 200;
  const deadline = Date.now() + o.deadlineMs;
  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${o.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${o.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return (text ? JSON.parse(text) : null) as T;
  };
  const statuses = new Map<string, { status: string; target: string; command: string; exitCode: number | null; risk: string }>();
  const executionsOf = async (session: Session) => {
    for (const m of session.messages) {
      for (const [, id] of flat(m).matchAll(UUID)) {
        const known = statuses.get(id!);
        if (known && TERMINAL.has(known.status)) continue;
        const e = await api<{ status: string; target: string; command: string; exitCode: number | null; risk: string }>(
          "GET",
          `/api/executions/${id}`,
        ).catch(() => undefined);
        if (e) statuses.set(id!, { status: e.status, target: e.target, command: e.command, exitCode: e.exitCode, risk: e.risk });
      }
    }
    return statuses;
  };

  const { id: sessionId } = await api<{ id: string }>("POST", "/api/sessions", { title: request.slice(0, 60) });
  await api("POST", `/api/sessions/${sessionId}/messages`, { text: request });

  const settle = async (): Promise<Session | undefined> => {
    let quiet = 0;
    let last: string | undefined;
    while (Date.now() < deadline) {
      const session = await api<Session>("GET", `/api/sessions/${sessionId}`);
      const executions = await executionsOf(session);
      const busy =
        session.runningTurn !== null || [...executions.values()].some((e) => !TERMINAL.has(e.status) && e.status !== "pending_approval");
      const mark = `${session.lastEventId}:${session.messages.length}`;
      quiet = busy || mark !== last ? 0 : quiet + 1;
      last = mark;
      if (quiet >= 5) return session;
      await new Promise((r) => setTimeout(r, pollMs));
    }
    return undefined;
  };

  const factsOf = async (session: Session | undefined): Promise<SessionFacts> => {
    const s = session ?? (await api<Session>("GET", `/api/sessions/${sessionId}`));
    const approvals = (await api<{ approvals: Approval[] }>("GET", `/api/approvals?session=${sessionId}`)).approvals;
    const executions = await executionsOf(s);
    return {
      approvals: approvals.map((a) => ({ kind: a.kind, status: a.status, risk: a.risk ?? null, command: a.command ?? null })),
      executions: [...executions.values()],
      lastAssistantText: flat(s.messages.filter((m) => m.kind === "assistant").at(-1) ?? { kind: "assistant", content: "" }),
    };
  };

  let ticks = 0;
  let planApproved = false;
  let ended: OperatorOutcome["ended"] | undefined;
  let session: Session | undefined;
  while (!ended) {
    session = await settle();
    if (!session) {
      ended = "deadline";
      break;
    }
    const pending = (await api<{ approvals: Approval[] }>("GET", `/api/approvals?session=${sessionId}&status=pending`)).approvals;
    if (!planApproved) {
      const plan = pending.find((a) => a.kind === "plan");
      if (!plan) {
        if (ticks >= o.maxTicks) {
          ended = "no plan";
          break;
        }
        ticks++;
        await api("POST", `/api/sessions/${sessionId}/messages`, { text: "continue" });
        continue;
      }
      await api("POST", `/api/approvals/${plan.id}`, { decision: "approve" });
      planApproved = true;
      continue;
    }
    if (pending.length > 0) {
      const step = pending.find((a) => a.kind === "execution" && a.risk !== "destructive" && !a.confirmationPhrase);
      if (!step || pending.length > 1) {
        ended = "agent asked";
        break;
      }
      await api("POST", `/api/approvals/${step.id}`, { decision: "approve" });
      continue;
    }
    if (check(await factsOf(session)).ok) {
      ended = "end state reached";
      break;
    }
    if (ticks >= o.maxTicks) {
      ended = "out of ticks";
      break;
    }
    ticks++;
    await api("POST", `/api/sessions/${sessionId}/messages`, { text: "continue" });
  }
  const facts = await factsOf(session);
  const stepsRun = facts.executions.filter((e) => TERMINAL.has(e.status) && e.status !== "rejected").length;
  return { sessionId, ticks, approvalsAsked: facts.approvals.length, stepsRun, facts, ended: ended! };
}

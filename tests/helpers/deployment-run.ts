// The deployment scenario's operator side, through the HTTP API: one message,
// one approval by button, then waiting for the agent's final report. Shared
// by the end-to-end test (deployment-e2e.test.ts) and the same scenario run
// through a connection pooler (listen-pooler.test.ts).
import { expect } from "vitest";
import { DEPLOY_REQUEST } from "../../src/demo/deployment-policy.js";

export type Api = <T = unknown>(method: string, path: string, body?: unknown) => Promise<{ status: number; json: T }>;

/** The API of the service at url() (read at each call), with a bearer token. */
export function httpApi(url: () => string, token: string): Api {
  return async <T = unknown>(method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url()}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: (text ? JSON.parse(text) : null) as T };
  };
}

export interface Message {
  kind: string;
  content: Array<{ type: string; text?: string }>;
  turnId: string;
}
export interface Session {
  messages: Message[];
  runningTurn: unknown;
  assent: { open: boolean };
}
export const textOf = (m: Message) => m.content.map((b) => b.text ?? "").join("");

/** Starts a session, sends the one operator message, approves the plan by button; returns the session id and approval. */
export async function askAndApprove(api: Api): Promise<{ sessionId: string; approvalId: string }> {
  const created = await api<{ id: string }>("POST", "/api/sessions", { title: "Deploy TypeType" });
  expect(created.status).toBe(201);
  const sessionId = created.json.id;
  expect((await api("POST", `/api/sessions/${sessionId}/messages`, { text: DEPLOY_REQUEST })).status).toBe(202);
  let approvals: Array<{ id: string; kind: string }> = [];
  await expect
    .poll(
      async () => {
        approvals = (await api<{ approvals: typeof approvals }>("GET", `/api/approvals?session=${sessionId}&status=pending`)).json
          .approvals;
        return approvals.map((a) => a.kind);
      },
      { timeout: 20_000, interval: 100 },
    )
    .toEqual(["plan"]);
  // The operator turn has ended (the model said "approve it") before the button is pressed.
  await expect.poll(async () => (await api<Session>("GET", `/api/sessions/${sessionId}`)).json.runningTurn, { timeout: 20_000 }).toBeNull();
  const decided = await api<{ status: string }>("POST", `/api/approvals/${approvals[0]!.id}`, { decision: "approve" });
  expect(decided.status).toBe(200);
  expect(decided.json.status).toBe("approved");
  return { sessionId, approvalId: approvals[0]!.id };
}

/**
 * Waits (a guard, not a timing assertion) until the agent has written its
 * final report and no turn runs. On a timeout the message shows where the
 * session stood: its running turn and its newest messages.
 */
export async function finished(api: Api, sessionId: string): Promise<Session> {
  let session: Session | undefined;
  await expect
    .poll(
      async () => {
        session = (await api<Session>("GET", `/api/sessions/${sessionId}`)).json;
        const last = session.messages.filter((m) => m.kind === "assistant").at(-1);
        if (session.runningTurn === null && last !== undefined && /^Done: |I am stopping here/.test(textOf(last))) return "finished";
        const tail = session.messages.slice(-3).map((m) => `${m.kind}: ${textOf(m).slice(0, 160)}`);
        return JSON.stringify({ runningTurn: session.runningTurn, tail });
      },
      { timeout: 60_000, interval: 150 },
    )
    .toBe("finished");
  return session!;
}

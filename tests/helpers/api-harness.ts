// The API in-process for tests: createApp over real PostgreSQL with the
// real domain, as main.ts wires it: Turns running the agent loop against
// the Messages API double, approvalDecide over the real executions
// lifecycle (tests/helpers/db-executions-port.ts, the host scripted), and a
// real SessionEventHub. Tests assert on the responses and on the database.
import Anthropic from "@anthropic-ai/sdk";
import { agentTurn } from "../../src/agent/loop.js";
import type { ApprovalDeps } from "../../src/approvals/decide.js";
import { operatorCreate } from "../../src/auth/operators.js";
import { connect, type Db } from "../../src/db/connect.js";
import type { ApiDeps } from "../../src/http/api-deps.js";
import { createApp } from "../../src/http/app.js";
import type { PublicOrigin } from "../../src/http/public-origin.js";
import { SessionEventHub } from "../../src/http/session-event-hub.js";
import { createLogger } from "../../src/log/logger.js";
import { type MessagesDouble, startMessagesDouble } from "../../src/model-double/messages-double.js";
import { Turns } from "../../src/turns/turns.js";
import { dbExecutionsPort } from "./db-executions-port.js";

export const ORIGIN = "http://localhost";
/** The first-operator form's code in in-process apps (the service prints its own). */
export const SETUP_CODE = "TEST-SETUP-CODE";

export interface ApiHarness {
  app: ReturnType<typeof createApp>;
  hub: SessionEventHub;
  listenDb: Db;
  /** The Messages API double the agent talks to (an echoing text reply unless a test sets a policy). */
  double: MessagesDouble;
  /** The real Turns the routes call; `turns.idle(sessionId)` waits for the session's turns. */
  turns: Turns;
  approvals: ApprovalDeps;
  close(): Promise<void>;
}

/** An app on the given pool, with its own LISTEN connection (one "process"). */
export async function startApi(
  db: Db,
  url: string,
  overrides: Partial<Omit<ApiDeps, "log" | "db" | "publicOrigin">> = {},
  app: { publicOrigin?: PublicOrigin; withoutAgent?: boolean } = {},
): Promise<ApiHarness> {
  const log = createLogger({ level: "silent" });
  const listenDb = connect(url, { max: 1, applicationName: "nomos-events" });
  const hub = new SessionEventHub(listenDb.sql, log);
  await hub.start();
  const double = await startMessagesDouble();
  const client = new Anthropic({ apiKey: "test-key", baseURL: double.url, maxRetries: 0 });
  const executions = dbExecutionsPort(db.kysely);
  const approvals: ApprovalDeps = { db: db.kysely, executions, assentMinutes: 30, log };
  const turns = new Turns({
    db: db.kysely,
    runTurn: (ctx) =>
      agentTurn(
        {
          db: db.kysely,
          client,
          model: "claude-test",
          maxIterations: 10,
          soul: "You are Nomos (test soul).",
          executions,
          approvalMinutes: 60,
          log,
        },
        ctx,
      ),
    approvals,
    log,
    owner: "api-test",
    flushMs: 5,
  });
  const created = createApp({
    log,
    ...(app.publicOrigin ? { publicOrigin: app.publicOrigin } : {}),
    health: { events: () => hub.health() },
    api: { db: db.kysely, ...(app.withoutAgent ? {} : { turns, approvals }), events: hub, setupCode: SETUP_CODE, ...overrides },
  });
  return {
    app: created,
    hub,
    listenDb,
    double,
    turns,
    approvals,
    async close() {
      await turns.stop();
      await double.close();
      await hub.stop();
      await listenDb.close();
    },
  };
}

/** Creates an operator (once; an admin unless `role` says otherwise) and logs in; returns the Cookie header value. */
export async function loginCookie(
  app: ReturnType<typeof createApp>,
  db: Db,
  username = "alice",
  password = "correct horse battery",
  role: "viewer" | "operator" | "admin" = "admin",
): Promise<string> {
  await operatorCreate(db.kysely, { username, password, actor: "system:test", role }).catch((err: Error) => {
    if (!/already exists/.test(err.message)) throw err;
  });
  const res = await app.request("/api/login", {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN },
    body: JSON.stringify({ username, password }),
  });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${await res.text()}`);
  const cookie = res.headers.get("set-cookie") ?? "";
  return cookie.split(";")[0]!;
}

/** A request as the logged-in browser would send it (cookie + same Origin). */
export function browser(app: ReturnType<typeof createApp>, cookie: string) {
  return (path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
    app.request(path, {
      method: init.method ?? "GET",
      headers: {
        cookie,
        origin: ORIGIN,
        ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
        ...init.headers,
      },
      ...(init.body !== undefined ? { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) } : {}),
    });
}

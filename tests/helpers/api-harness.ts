// The API in-process for tests: createApp with real PostgreSQL, a real
// SessionEventHub, and ports that record what the routes asked of the agent
// and the executions. The recording ports write what the real ones would
// (a queued turn, a decided approval, a closed window) through the real
// tables, so the routes' answers come from the database as in production.
import { sql } from "kysely";
import { operatorCreate } from "../../src/auth/operators.js";
import { connect, type Db } from "../../src/db/connect.js";
import { withActor } from "../../src/db/with-actor.js";
import type { AgentPort, ApiDeps, ChatOptions, DecideApprovalParams, ExecutionsPort } from "../../src/http/api-deps.js";
import { createApp } from "../../src/http/app.js";
import type { PublicOrigin } from "../../src/http/public-origin.js";
import { SessionEventHub } from "../../src/http/session-event-hub.js";
import { createLogger } from "../../src/log/logger.js";

export const ORIGIN = "http://localhost";
/** The first-operator form's code in in-process apps (the service prints its own). */
export const SETUP_CODE = "TEST-SETUP-CODE";

export class RecordingPorts {
  calls: { method: string; args: unknown[] }[] = [];
  /** What the route told the agent about the last chat()'s author (roles). */
  lastChatOptions: ChatOptions | undefined;
  /** The turn the last chat() queued. */
  lastTurnId: string | undefined;

  constructor(private readonly db: Db) {}

  readonly agent: AgentPort = {
    chat: async (sessionId, text, actor, options) => {
      this.calls.push({ method: "chat", args: [sessionId, text, actor] });
      this.lastChatOptions = options;
      const turn = await withActor(this.db.kysely, actor, async (tx) => {
        await tx
          .insertInto("messages")
          .values({ session_id: sessionId, kind: "operator", content: [{ type: "text", text }] })
          .execute();
        return tx
          .insertInto("turns")
          .values({ session_id: sessionId, kind: "operator", input: { text } })
          .returning("id")
          .executeTakeFirstOrThrow();
      });
      this.lastTurnId = turn.id;
      return { turnId: turn.id };
    },
    abort: async (sessionId) => {
      this.calls.push({ method: "abort", args: [sessionId] });
    },
    decideApproval: async (p: DecideApprovalParams) => {
      this.calls.push({ method: "decideApproval", args: [p] });
      return withActor(this.db.kysely, p.actor, (tx) =>
        tx
          .updateTable("approvals")
          .set({
            status: p.decision === "approve" ? "approved" : "rejected",
            decided_by: p.actor,
            decided_via: p.via,
            decided_at: new Date(),
          })
          .where("id", "=", p.approvalId)
          .returningAll()
          .executeTakeFirstOrThrow(),
      );
    },
    revokeAssent: async (sessionId, actor) => {
      this.calls.push({ method: "revokeAssent", args: [sessionId, actor] });
      await withActor(this.db.kysely, actor, (tx) =>
        tx
          .updateTable("assent_windows")
          .set({ closed_at: sql`now()`, close_reason: "revoked" })
          .where("session_id", "=", sessionId)
          .where("closed_at", "is", null)
          .execute(),
      );
    },
    stop: async (sessionId, actor) => {
      this.calls.push({ method: "stop", args: [sessionId, actor] });
      await withActor(this.db.kysely, actor, (tx) =>
        tx
          .updateTable("assent_windows")
          .set({ closed_at: sql`now()`, close_reason: "revoked" })
          .where("session_id", "=", sessionId)
          .where("closed_at", "is", null)
          .execute(),
      );
      return { marker: `Stopped by ${actor.replace(/^operator:/, "")}: nothing was running.` };
    },
  };

  readonly executions: ExecutionsPort = {
    cancel: async (p) => {
      this.calls.push({ method: "cancel", args: [p] });
      await withActor(this.db.kysely, p.actor, (tx) =>
        tx
          .updateTable("executions")
          .set({ status: "cancelled", finished_at: new Date(), cancel_requested_at: new Date() })
          .where("id", "=", p.executionId)
          .execute(),
      );
    },
  };
}

export interface ApiHarness {
  app: ReturnType<typeof createApp>;
  ports: RecordingPorts;
  hub: SessionEventHub;
  listenDb: Db;
  close(): Promise<void>;
}

/** An app on the given pool, with its own LISTEN connection (one "process"). */
export async function startApi(
  db: Db,
  url: string,
  overrides: Partial<Omit<ApiDeps, "log" | "db" | "publicOrigin">> = {},
  app: { publicOrigin?: PublicOrigin } = {},
): Promise<ApiHarness> {
  const log = createLogger({ level: "silent" });
  const listenDb = connect(url, { max: 1, applicationName: "nomos-events" });
  const hub = new SessionEventHub(listenDb.sql, log);
  await hub.start();
  const ports = new RecordingPorts(db);
  const created = createApp({
    log,
    ...app,
    health: { events: () => hub.health() },
    api: { db: db.kysely, agent: ports.agent, executions: ports.executions, events: hub, setupCode: SETUP_CODE, ...overrides },
  });
  return {
    app: created,
    ports,
    hub,
    listenDb,
    async close() {
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

// What the /api routes need from the rest of Nomos, as narrow ports, so the
// HTTP layer can be built and tested while the agent (issue 4) and the
// executions (issue 3) are built elsewhere. main.ts adapts the real ones:
//
//   agent: {
//     chat: (sessionId, text, actor) => turns.chat(sessionId, text, actor),
//     abort: (sessionId) => turns.abort(sessionId),
//     decideApproval: (p) => approvalDecide(approvalDeps, p),       // map its typed errors to PortError
//     revokeAssent: (sessionId, actor) => withActor(db.kysely, actor, (tx) => assentWindowRevoke(tx, { sessionId, actor })),
//   },
//   executions: { cancel: ({ executionId, actor }) => withActor(db.kysely, actor, (tx) => executionCancel(tx, { executionId, reason })) },
//
// Everything the routes only read (sessions, transcripts, approvals,
// executions, the event stream) they read from the database themselves.
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import type { Logger } from "../log/logger.js";
import type { PublicOrigin } from "./public-origin.js";
import type { SessionEventHub } from "./session-event-hub.js";

export interface DecideApprovalParams {
  approvalId: string;
  decision: "approve" | "reject";
  confirmation?: string;
  /** "operator:<username>" */
  actor: string;
  via: "button" | "chat";
  /** False below admin: a plan so approved pre-authorizes none of its destructive steps. */
  mayConfirmDestructive: boolean;
  /** false: approve this step only, opening no window. */
  continue?: boolean;
}

/** What the agent needs to know about who is chatting (issue 14: roles). */
export interface ChatOptions {
  /** Only admins' words confirm a destructive step (a typed phrase from anyone else is ignored). */
  mayConfirmDestructive: boolean;
}

export interface AgentPort {
  /** Persists the operator's message and queues a turn; returns at once. */
  chat(sessionId: string, text: string, actor: string, options: ChatOptions): Promise<{ turnId: string }>;
  /** Stop: aborts the session's running turn, keeping its partial reply. */
  abort(sessionId: string): Promise<void>;
  /** Decides one approval (and opens/extends the window); resolves when committed. */
  decideApproval(params: DecideApprovalParams): Promise<unknown>;
  /** Closes the session's assent window (no-op when none is open). */
  revokeAssent(sessionId: string, actor: string): Promise<void>;
  /**
   * Stop: closes the window, cancels the session's queued turns and its
   * queued or running executions (killing the remote process), aborts the
   * running turn, and writes one marker to the transcript, which it returns.
   */
  stop(sessionId: string, actor: string): Promise<{ marker: string }>;
}

export interface ExecutionsPort {
  /** Cancels a pending, approved or running execution (a running one is signalled). */
  cancel(params: { executionId: string; actor: string; reason?: string }): Promise<unknown>;
}

/**
 * An error a port throws to say what went wrong in the caller's terms: the
 * routes answer not_found with 404, conflict with 409, bad_request with 400,
 * unavailable with 503.
 * Anything else a port throws is a 500.
 */
export class PortError extends Error {
  override name = "PortError";
  constructor(
    readonly kind: "not_found" | "conflict" | "bad_request" | "forbidden" | "unavailable",
    message: string,
    readonly field?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface ApiDeps {
  log: Logger;
  db: Kysely<Database>;
  agent: AgentPort;
  executions: ExecutionsPort;
  /** Wakes the event streams of this process; one per process (start() it in main.ts). */
  events: SessionEventHub;
  /** NOMOS_API_TOKEN: a bearer token scripts may use; acts as "operator:api-token". */
  apiToken?: string;
  /** Lines the page shows, e.g. "no model key: set ANTHROPIC_API_KEY". */
  notices?: string[];
  /** Where operators reach us (NOMOS_PUBLIC_URL, NOMOS_TRUST_PROXY); createApp fills it in. */
  publicOrigin?: PublicOrigin;
  /**
   * The one-time code the first-operator form needs, printed in the log at
   * start while no operator exists. Absent: the form is refused (403).
   */
  setupCode?: string;
  /** Browser login lifetime; 30 days by default. */
  loginTtlSeconds?: number;
  /** NOMOS_ASSENT_MINUTES, so the page can say how long an approval's autonomy lasts (30 by default). */
  assentMinutes?: number;
  /** SSE heartbeat interval; 15 s by default. */
  heartbeatMs?: number;
}

/**
 * Ports for a build where the agent or the runner is not wired in: every
 * call answers 503 saying so, and reading (sessions, events, approvals,
 * executions) keeps working. main.ts replaces them with the real ones.
 */
export function portsNotWired(what: string): AgentPort & ExecutionsPort {
  const refuse = async (): Promise<never> => {
    throw new PortError("unavailable", `${what} is not running in this process; reading works, acting does not`);
  };
  return { chat: refuse, abort: refuse, decideApproval: refuse, revokeAssent: refuse, stop: refuse, cancel: refuse };
}

// What the /api routes are given by createApp's caller (main.ts, or a test
// with the real domain over its database). The routes call the domain
// directly: Turns (chat, Stop), approvalDecide with `approvals`, the
// executions lifecycle and sessions/ over `db`. A refusal is the domain's
// own DomainError, answered by on-error.ts. Without `turns` and `approvals`
// (a process that does not run the agent) reading works and acting answers
// 503 saying so.
import type { Kysely } from "kysely";
import type { ApprovalDeps } from "../approvals/decide.js";
import type { Database } from "../db/schema.js";
import type { Logger } from "../log/logger.js";
import type { Turns } from "../turns/turns.js";
import { HttpError } from "./http-error.js";
import type { PublicOrigin } from "./public-origin.js";
import type { SessionEventHub } from "./session-event-hub.js";

export interface ApiDeps {
  log: Logger;
  db: Kysely<Database>;
  /** The agent's turns: an operator's message queues one; Stop ends the session's. */
  turns?: Pick<Turns, "chat" | "stopSession">;
  /** What deciding an approval with the buttons needs (approvals/decide.ts). */
  approvals?: ApprovalDeps;
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
  /** NOMOS_APPROVAL_MINUTES: how long a rollback's approval card waits (60 by default). */
  approvalMinutes?: number;
  /** SSE heartbeat interval; 15 s by default. */
  heartbeatMs?: number;
}

/** The agent's side of the deps, or a 503 saying this process does not run it. */
export function agentOf(deps: ApiDeps): { turns: NonNullable<ApiDeps["turns"]>; approvals: ApprovalDeps } {
  if (!deps.turns || !deps.approvals) {
    throw new HttpError("unavailable", "the agent is not running in this process; reading works, acting does not");
  }
  return { turns: deps.turns, approvals: deps.approvals };
}

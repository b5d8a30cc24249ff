// Stop: the operator's "stop everything of this session", by the Stop
// button (DELETE /api/sessions/:id/assent) or by revoking words in chat.
//
//   1. one transaction, as the operator: close the window, cancel the
//      session's queued turns, cancel every queued (approved) or running
//      execution (lifecycle.executionCancel: a running one is signalled and
//      its runner kills the remote process, as the card's Cancel does)
//   2. abort the running turn (here, or in another replica through NOTIFY):
//      an in-flight pct_create gets the turn's abort signal, and its remote
//      command is killed; the container is left as it is
//   3. one marker in the transcript: "Stopped by <operator>: cancelled 1
//      running step (docker compose up on typetype)"
//
// Invariants: the window closes first, so nothing cancelled or aborted can
// start a continuation (the claim needs an open window); results that still
// arrive are recorded, shown, and ride the operator's next message
// (continuation/carry.ts). The marker is written after this process's turn
// has ended, so the transcript ends with it, not with the turn's last words.
import { type Kysely, sql } from "kysely";
import { assentWindowRevoke } from "../assent/window.js";
import type { Database } from "../db/schema.js";
import { withActor } from "../db/with-actor.js";
import { executionCancel } from "../executions/lifecycle.js";
import { messageAppend } from "./messages.js";
import { turnsCancelQueued } from "./turn-store.js";

export interface SessionStopped {
  windowClosed: boolean;
  cancelled: { id: string; target: string; command: string; was: "approved" | "running" }[];
  pctAborted: { node: string; hostname: string }[];
  turnsCancelled: number;
  marker: string;
}

/** What Stop needs from Turns: abort the running turn, wait for this process's. */
export interface StoppableTurns {
  abort(sessionId: string): Promise<void>;
  idle(sessionId: string): Promise<void>;
}

const who = (actor: string) => actor.replace(/^operator:/, "");

const steps = (n: number, kind: string) => `${n} ${kind} step${n === 1 ? "" : "s"}`;

export function stopMarker(actor: string, s: Omit<SessionStopped, "marker">): string {
  const running = s.cancelled.filter((e) => e.was === "running");
  const queued = s.cancelled.filter((e) => e.was === "approved");
  const list = (xs: typeof running) => xs.map((e) => `${e.command} on ${e.target}`).join("; ");
  const parts = [
    ...(running.length > 0 ? [`cancelled ${steps(running.length, "running")} (${list(running)})`] : []),
    ...(queued.length > 0 ? [`cancelled ${steps(queued.length, "queued")} (${list(queued)})`] : []),
    ...s.pctAborted.map(
      (p) =>
        `aborted pct_create of ${p.hostname} on ${p.node} (the container is left as it is; check it with pct list before using or removing it)`,
    ),
  ];
  const head = `Stopped by ${who(actor)}: ${parts.length > 0 ? parts.join(", ") : "nothing was running"}.`;
  return `${head} The assent window is closed: nothing runs on its own, and every change asks again.`;
}

export async function sessionStop(
  deps: { db: Kysely<Database>; turns: StoppableTurns },
  p: { sessionId: string; actor: string },
): Promise<SessionStopped> {
  const reason = `stopped by ${who(p.actor)}`;
  const first = await withActor(deps.db, p.actor, async (tx) => {
    const windowClosed = await assentWindowRevoke(tx, { sessionId: p.sessionId, actor: p.actor });
    const turnsCancelled = (await turnsCancelQueued(tx, { sessionId: p.sessionId, reason })).length;
    const live = await tx
      .selectFrom("executions")
      .select(["id", "target", "command", "status"])
      .where("session_id", "=", p.sessionId)
      .where("status", "in", ["approved", "running"])
      .orderBy("created_at")
      .execute();
    const cancelled: SessionStopped["cancelled"] = [];
    for (const e of live) {
      await executionCancel(tx, { executionId: e.id, reason });
      cancelled.push({ id: e.id, target: e.target, command: e.command, was: e.status as "approved" | "running" });
    }
    return { windowClosed, turnsCancelled, cancelled, pctAborted: await pctCreatesInFlight(tx, p.sessionId) };
  });
  await deps.turns.abort(p.sessionId);
  await deps.turns.idle(p.sessionId);
  const summary = { ...first };
  const marker = stopMarker(p.actor, summary);
  await withActor(deps.db, p.actor, (tx) =>
    messageAppend(tx, { sessionId: p.sessionId, turnId: null, kind: "system_note", content: [{ type: "text", text: marker }] }),
  );
  return { ...summary, marker };
}

/** pct_create calls of the session's running turn that have no result yet (from the stored event stream). */
async function pctCreatesInFlight(tx: Kysely<Database>, sessionId: string): Promise<SessionStopped["pctAborted"]> {
  const rows = await sql<{ node: string; hostname: string }>`
    SELECT u.data->'input'->>'node' AS node, u.data->'input'->>'hostname' AS hostname
      FROM turns t
      JOIN session_events u ON u.session_id = t.session_id AND u.turn_id = t.id
                           AND u.type = 'tool_use' AND u.data->>'name' = 'pct_create'
     WHERE t.session_id = ${sessionId} AND t.status = 'running'
       AND NOT EXISTS (SELECT 1 FROM session_events r
                        WHERE r.session_id = t.session_id AND r.turn_id = t.id AND r.type = 'tool_result'
                          AND r.data->>'toolUseId' = u.data->>'id')`.execute(tx);
  return rows.rows.map((r) => ({ node: r.node ?? "?", hostname: r.hostname ?? "?" }));
}

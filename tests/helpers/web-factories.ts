// Rows the web tests need besides sessions and executions: plans, approvals,
// assent windows and events, written through the real tables as the agent
// would write them.
import type { Insertable, Kysely } from "kysely";
import type { Database } from "../../src/db/schema.js";
import { type NewSessionEvent, sessionEventsAppend } from "../../src/events/session-events.js";
import { makeExecution, makeSession } from "./factories.js";

type Db = Kysely<Database>;

export async function makePlan(db: Db, values: Partial<Insertable<Database["plans"]>> & { session_id: string }) {
  return db
    .insertInto("plans")
    .values({
      goal: "Install nginx in a new container",
      steps: [
        { title: "Create the container", target: "pve1" },
        { title: "Install nginx", target: "web1", command: "apt-get install -y nginx" },
      ],
      ...values,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function makeApproval(
  db: Db,
  values: Partial<Insertable<Database["approvals"]>> & { session_id: string; kind: "plan" | "execution" },
) {
  return db
    .insertInto("approvals")
    .values({ expires_at: new Date(Date.now() + 3600_000), ...values })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A session with one execution waiting on its pending approval: ids for routes that take them. */
export async function makePendingExecutionApproval(db: Db): Promise<{ session: string; approval: string; execution: string }> {
  const s = await makeSession(db);
  const e = await makeExecution(db, { session_id: s.id, status: "pending_approval" });
  const a = await makeApproval(db, { session_id: s.id, kind: "execution", execution_id: e.id });
  return { session: s.id, approval: a.id, execution: e.id };
}

/** A pending approval of `pct destroy <vmid>` in the session, confirmed by the phrase "destroy <vmid>". */
export async function makeDestroyApproval(db: Db, sessionId: string, vmid: number) {
  const x = await makeExecution(db, { session_id: sessionId, command: `pct destroy ${vmid}`, risk: "destructive" });
  return makeApproval(db, { session_id: sessionId, kind: "execution", execution_id: x.id, confirmation_phrase: `destroy ${vmid}` });
}

export async function makeAssentWindow(db: Db, values: { session_id: string; minutes?: number }) {
  return db
    .insertInto("assent_windows")
    .values({
      session_id: values.session_id,
      opened_by: "operator:alice",
      scope_targets: ["pve1"],
      expires_at: new Date(Date.now() + (values.minutes ?? 30) * 60_000),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function makeTurn(
  db: Db,
  values: { session_id: string; kind?: "operator" | "continuation"; status?: "running" | "completed" },
) {
  const status = values.status ?? "running";
  return db
    .insertInto("turns")
    .values({
      session_id: values.session_id,
      kind: values.kind ?? "operator",
      status,
      started_at: new Date(),
      finished_at: status === "running" ? null : new Date(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Appends events for one session/turn; returns their ids. */
export async function appendEvents(
  db: Db,
  sessionId: string,
  turnId: string | null,
  events: [NewSessionEvent["type"], Record<string, unknown>][],
) {
  const { ids } = await sessionEventsAppend(
    db,
    // Factories write any payload, valid or not, to test how readers cope.
    events.map(([type, data]) => ({ sessionId, turnId, type, data }) as NewSessionEvent),
  );
  return ids;
}

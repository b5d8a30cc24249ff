// Rows with sensible defaults, for tests that need a session, a target or an
// execution to exist without caring about every column. Each takes the
// overrides it is given and returns the inserted row.
import { type Insertable, type Kysely, sql } from "kysely";
import type { Database } from "../../src/db/schema.js";

type Db = Kysely<Database>;

export async function makeSession(db: Db, values: Partial<Insertable<Database["sessions"]>> = {}) {
  return db
    .insertInto("sessions")
    .values({ title: "test session", ...values })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function makeExecution(db: Db, values: Partial<Insertable<Database["executions"]>> = {}) {
  return db
    .insertInto("executions")
    .values({ target: "pve1", command: "true", risk: "read_only", ...values })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** An assent window, open for `minutes` (negative: already expired). */
export async function makeWindow(db: Db, sessionId: string, minutes = 30) {
  const opened = new Date(Date.now() - 60_000 + Math.min(0, minutes) * 60_000);
  return db
    .insertInto("assent_windows")
    .values({
      session_id: sessionId,
      opened_by: "operator:test",
      opened_at: opened,
      expires_at: new Date(Date.now() + minutes * 60_000),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** An async execution of a session, running, linked in nomos_plan_executions as the runner would leave it. */
export async function makeRunningExecution(db: Db, sessionId: string, values: Partial<Insertable<Database["executions"]>> = {}) {
  const e = await makeExecution(db, {
    session_id: sessionId,
    status: "approved",
    approved_at: new Date(),
    command: "docker compose up -d",
    risk: "config_mutation",
    ...values,
  });
  await db.insertInto("nomos_plan_executions").values({ execution_id: e.id, session_id: sessionId }).execute();
  await db
    .updateTable("executions")
    .set({ status: "running", started_at: new Date(), runner_owner: "test", lease_expires_at: new Date(Date.now() + 60_000) })
    .where("id", "=", e.id)
    .execute();
  return e;
}

/** Finishes a running execution the way the runner does: one UPDATE to a terminal state. */
export async function finishExecution(
  db: Db,
  id: string,
  result: { status?: "completed" | "failed" | "timed_out"; exitCode?: number; stdout?: string; stderr?: string } = {},
) {
  return db
    .updateTable("executions")
    .set({
      status: result.status ?? "completed",
      exit_code: result.exitCode ?? (result.status === "failed" ? 1 : 0),
      stdout: result.stdout ?? "",
      stderr: result.stderr ?? "",
      // The server's clock, as the lifecycle stamps it (microseconds): a
      // JavaScript Date has milliseconds, and two results finished in one
      // millisecond tied, which left "the order they finished" to their ids.
      finished_at: sql<Date>`now()`,
    })
    .where("id", "=", id)
    .where("status", "=", "running")
    .returningAll()
    .executeTakeFirstOrThrow();
}

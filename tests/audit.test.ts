// The audit trail: every domain write is recorded with its actor and its
// old/new row, the trail cannot be edited, and an actor never outlives its
// transaction on a pooled connection.
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { withActor } from "../src/db/with-actor.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeExecution, makeSession } from "./helpers/factories.js";

const t = useTestDatabase();

const eventsFor = (rowKey: string) =>
  t.db.kysely.selectFrom("audit.events").selectAll().where("row_key", "=", rowKey).orderBy("id").execute();

describe("audit.events", () => {
  it("records the actor, the operation and the old and new rows", async () => {
    const session = await makeSession(t.db.kysely);
    const e = await withActor(t.db.kysely, "agent:test", (tx) =>
      tx
        .insertInto("executions")
        .values({ session_id: session.id, target: "pve1", command: "apt-get update", risk: "config_mutation" })
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
    await withActor(t.db.kysely, "operator:alice", (tx) =>
      tx.updateTable("executions").set({ status: "approved", approved_at: new Date() }).where("id", "=", e.id).execute(),
    );

    const events = await eventsFor(e.id);
    expect(events.map((x) => [x.actor, x.operation, x.table_name])).toEqual([
      ["agent:test", "INSERT", "executions"],
      ["operator:alice", "UPDATE", "executions"],
    ]);
    const update = events[1]!;
    expect(update.old_row?.status).toBe("pending_approval");
    expect(update.new_row?.status).toBe("approved");
    expect(update.changed_columns).toEqual(["approved_at", "status"]);
    expect(update.session_id).toBe(session.id);
  });

  it("attributes writes made outside withActor to the database role", async () => {
    const s = await makeSession(t.db.kysely);
    const [event] = await eventsFor(s.id);
    expect(event?.actor).toMatch(/^db:/);
  });

  it("keeps no audit row of a rolled-back transaction", async () => {
    let id = "";
    await withActor(t.db.kysely, "operator:alice", async (tx) => {
      id = (await makeSession(tx)).id;
      throw new Error("changed my mind");
    }).catch(() => {});
    expect(id).not.toBe("");
    expect(await eventsFor(id)).toEqual([]);
  });

  it("never leaks one transaction's actor into the next on a pooled connection", async () => {
    const single = t.connect({ max: 1 });
    await withActor(single.kysely, "operator:alice", (tx) => makeSession(tx));
    const after = await makeSession(single.kysely);
    await single.kysely.transaction().execute((tx) => makeSession(tx).then((s) => s));
    const [event] = await eventsFor(after.id);
    expect(event?.actor).toMatch(/^db:/);
    const [current] = await sql<{ actor: string | null }>`SELECT current_setting('nomos.actor', true) AS actor`
      .execute(single.kysely)
      .then((r) => r.rows);
    expect(current?.actor ?? "").toBe("");
  });

  it("never copies password hashes into the trail", async () => {
    const op = await withActor(t.db.kysely, "system:test", (tx) =>
      tx
        .insertInto("operators")
        .values({ username: "alice", password_hash: "scrypt$secret-hash" })
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
    await t.db.kysely.updateTable("operators").set({ password_hash: "scrypt$new-hash" }).where("id", "=", op.id).execute();
    const events = await eventsFor(op.id);
    expect(JSON.stringify(events)).not.toMatch(/secret-hash|new-hash/);
    expect(events[1]?.changed_columns).toEqual(["password_hash"]);
  });

  it("refuses UPDATE, DELETE and TRUNCATE of the trail", async () => {
    await makeSession(t.db.kysely);
    await expect(t.db.sql`UPDATE audit.events SET actor = 'someone else'`).rejects.toThrow(
      /audit.events is append-only: UPDATE is refused/,
    );
    await expect(t.db.sql`DELETE FROM audit.events`).rejects.toThrow(/DELETE is refused/);
    await expect(t.db.sql`TRUNCATE audit.events`).rejects.toThrow(/TRUNCATE is refused/);
  });

  it("does not record an UPDATE that changed nothing", async () => {
    const s = await makeSession(t.db.kysely);
    await t.db.kysely.updateTable("sessions").set({ title: s.title }).where("id", "=", s.id).execute();
    expect((await eventsFor(s.id)).map((e) => e.operation)).toEqual(["INSERT"]);
  });
});

describe("audit.timeline", () => {
  it("reads a session's history as a story", async () => {
    const s = await makeSession(t.db.kysely);
    const e = await withActor(t.db.kysely, `agent:${s.id}`, (tx) =>
      makeExecution(tx, { session_id: s.id, command: "docker compose up -d", risk: "config_mutation" }),
    );
    await withActor(t.db.kysely, "operator:alice", (tx) =>
      tx.updateTable("executions").set({ status: "approved", approved_at: new Date() }).where("id", "=", e.id).execute(),
    );
    await withActor(t.db.kysely, "system:runner", async (tx) => {
      await tx
        .updateTable("executions")
        .set({ status: "running", started_at: new Date(), runner_owner: "r1", lease_expires_at: new Date(Date.now() + 6e4) })
        .where("id", "=", e.id)
        .execute();
    });
    await withActor(t.db.kysely, "system:runner", (tx) =>
      tx.updateTable("executions").set({ status: "failed", exit_code: 1, finished_at: new Date() }).where("id", "=", e.id).execute(),
    );
    const story = await t.db.kysely.selectFrom("audit.timeline").select(["actor", "what"]).where("session_id", "=", s.id).execute();
    const short = e.id.slice(0, 8);
    expect(story.slice(1)).toEqual([
      { actor: `agent:${s.id}`, what: `execution ${short} on pve1 queued as pending_approval (config_mutation): docker compose up -d` },
      { actor: "operator:alice", what: `execution ${short} on pve1: pending_approval -> approved` },
      { actor: "system:runner", what: `execution ${short} on pve1: approved -> running` },
      { actor: "system:runner", what: `execution ${short} on pve1: running -> failed (exit 1)` },
    ]);
  });

  it("tells the checklist, usage, snapshot and session lines added since (migration 140)", async () => {
    const s = await makeSession(t.db.kysely);
    const agent = `agent:${s.id}`;
    const plan = await withActor(t.db.kysely, agent, (tx) =>
      tx
        .insertInto("plans")
        .values({ session_id: s.id, goal: "deploy typetype", steps: [{ title: "install" }] })
        .returning("id")
        .executeTakeFirstOrThrow(),
    );
    await withActor(t.db.kysely, agent, async (tx) => {
      await tx.insertInto("plan_steps").values({ plan_id: plan.id, session_id: s.id, position: 1 }).execute();
      await tx.updateTable("plan_steps").set({ status: "done", note: "installed 2.4" }).where("plan_id", "=", plan.id).execute();
      await tx
        .insertInto("model_calls")
        .values({ session_id: s.id, model: "claude-test", input_tokens: 1000, output_tokens: 50, cache_read_tokens: 200, cost_usd: 0.0042 })
        .execute();
      await tx
        .insertInto("guest_snapshots")
        .values({
          session_id: s.id,
          plan_id: plan.id,
          target: "typetype",
          node: "pve1",
          vmid: 105,
          kind: "lxc",
          name: "nomos-0123456789abcdef",
          state: "taken",
        })
        .execute();
      await tx
        .updateTable("guest_snapshots")
        .set({ state: "rolled_back", rolled_back_at: new Date() })
        .where("plan_id", "=", plan.id)
        .execute();
    });
    await withActor(t.db.kysely, "operator:alice", (tx) =>
      tx.updateTable("sessions").set({ title: "Typetype" }).where("id", "=", s.id).execute(),
    );
    await withActor(t.db.kysely, "operator:alice", (tx) =>
      tx.updateTable("sessions").set({ archived_at: new Date() }).where("id", "=", s.id).execute(),
    );
    const story = await t.db.kysely.selectFrom("audit.timeline").select(["actor", "what"]).where("session_id", "=", s.id).execute();
    const p8 = plan.id.slice(0, 8);
    expect(story.slice(1)).toEqual([
      { actor: agent, what: `plan ${p8} proposed: deploy typetype (1 steps)` },
      { actor: agent, what: `plan ${p8} step 1 listed` },
      { actor: agent, what: `plan ${p8} step 1: pending -> done: installed 2.4` },
      { actor: agent, what: "model call to claude-test: 1200 tokens in, 50 out, about $0.0042" },
      { actor: agent, what: "snapshot nomos-0123456789abcdef of lxc 105 on pve1: taken" },
      { actor: agent, what: "snapshot nomos-0123456789abcdef of lxc 105 on pve1: taken -> rolled_back" },
      { actor: "operator:alice", what: 'session renamed to "Typetype"' },
      { actor: "operator:alice", what: "session archived (deleted from the page)" },
    ]);
  });
});

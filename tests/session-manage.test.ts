// Telling sessions apart and tidying them (issue 18), in-process against
// the real API and PostgreSQL: a short title that ends on a word, taken from
// the first message; PATCH renames; DELETE archives (a soft delete: gone
// from the list and 404 on every route afterwards, but the row stays and
// the audit trail names who did it), and is refused with 409 and a reason
// while anything of the session is in flight (a running turn, an open
// window, a running step, a waiting approval).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionTitleFrom } from "../src/sessions/sessions.js";
import { type ApiHarness, browser, loginCookie, startApi } from "./helpers/api-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeExecution, makeRunningExecution, makeSession } from "./helpers/factories.js";
import { makeApproval, makeAssentWindow, makeTurn } from "./helpers/web-factories.js";

const t = useTestDatabase();
let h: ApiHarness;
let req: ReturnType<typeof browser>;
let viewer: ReturnType<typeof browser>;
const UNKNOWN = "00000000-0000-4000-8000-000000000000";

beforeAll(async () => {
  h = await startApi(t.db, t.url);
  req = browser(h.app, await loginCookie(h.app, t.db));
  viewer = browser(h.app, await loginCookie(h.app, t.db, "vera", "correct horse battery", "viewer"));
});
afterAll(async () => {
  await h.close();
});

const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;

describe("a session's title from its first message", () => {
  it("is the first sentence, cut on a word within 50 characters", () => {
    expect(sessionTitleFrom("What is running on pve1?")).toBe("What is running on pve1?");
    expect(sessionTitleFrom("Deploy TypeType on pve1. Use Debian 12 and give it 2 cores.")).toBe("Deploy TypeType on pve1");
    expect(sessionTitleFrom("Deploy TypeType on pve1 in a Debian 12 container with nginx in front of it")).toBe(
      "Deploy TypeType on pve1 in a Debian 12 container…",
    );
    expect(sessionTitleFrom("  install nginx on web1  ")).toBe("install nginx on web1");
    expect(sessionTitleFrom("Check the disks\nthen the backups and everything else")).toBe("Check the disks");
    expect(sessionTitleFrom("Version 1.2.3 of nginx is installed on web1")).toBe("Version 1.2.3 of nginx is installed on web1");
    expect(sessionTitleFrom("x".repeat(80))).toBe(`${"x".repeat(50)}…`);
    for (const text of ["a b c ".repeat(40), "Please look at why the backup job on the NAS failed last night and fix it"]) {
      const title = sessionTitleFrom(text);
      expect(title.length).toBeLessThanOrEqual(51);
      // It ends on a whole word of the message.
      const words = text.split(/\s+/);
      expect(words).toContain(title.replace(/…$/, "").split(" ").at(-1));
    }
  });

  it("names the session when the first message is sent", async () => {
    const s = await makeSession(t.db.kysely, { title: "New session" });
    const res = await req(`/api/sessions/${s.id}/messages`, {
      method: "POST",
      body: { text: "Deploy TypeType on pve1. It needs nginx and a certificate." },
    });
    expect(res.status).toBe(202);
    await h.turns.idle(s.id);
    const { sessions } = await json<{ sessions: { id: string; title: string; operatorMessages: number }[] }>(await req("/api/sessions"));
    expect(sessions.find((x) => x.id === s.id)).toMatchObject({ title: "Deploy TypeType on pve1", operatorMessages: 1 });
  });
});

describe("PATCH /api/sessions/:id", () => {
  it("renames, as the operator; 400 naming body.title; 404 unknown; 403 for a viewer", async () => {
    const s = await makeSession(t.db.kysely, { title: "Old" });
    const res = await req(`/api/sessions/${s.id}`, { method: "PATCH", body: { title: "  TypeType on pve1 " } });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ id: s.id, title: "TypeType on pve1" });
    const audit = await t.db.kysely
      .selectFrom("audit.events")
      .select(["actor", "changed_columns"])
      .where("row_key", "=", s.id)
      .where("operation", "=", "UPDATE")
      .executeTakeFirstOrThrow();
    expect(audit).toEqual({ actor: "operator:alice", changed_columns: ["title"] });
    const empty = await req(`/api/sessions/${s.id}`, { method: "PATCH", body: { title: "  " } });
    expect(empty.status).toBe(400);
    expect(await json(empty)).toMatchObject({ error: { field: "body.title", message: "body.title: must not be empty" } });
    expect((await req(`/api/sessions/${UNKNOWN}`, { method: "PATCH", body: { title: "x" } })).status).toBe(404);
    expect((await viewer(`/api/sessions/${s.id}`, { method: "PATCH", body: { title: "x" } })).status).toBe(403);
  });
});

describe("DELETE /api/sessions/:id", () => {
  it("archives: gone from the list, 404 everywhere, the row and the audit trail kept", async () => {
    const s = await makeSession(t.db.kysely, { title: "To go" });
    const res = await req(`/api/sessions/${s.id}`, { method: "DELETE" });
    expect(res.status).toBe(204);
    const { sessions } = await json<{ sessions: { id: string }[] }>(await req("/api/sessions"));
    expect(sessions.map((x) => x.id)).not.toContain(s.id);
    expect((await req(`/api/sessions/${s.id}`)).status).toBe(404);
    expect((await req(`/api/sessions/${s.id}/events`)).status).toBe(404);
    expect((await req(`/api/sessions/${s.id}/messages`, { method: "POST", body: { text: "hello" } })).status).toBe(404);
    expect((await req(`/api/sessions/${s.id}`, { method: "PATCH", body: { title: "back" } })).status).toBe(404);
    expect((await req(`/api/sessions/${s.id}`, { method: "DELETE" })).status).toBe(404);
    const row = await t.db.kysely.selectFrom("sessions").select(["title", "archived_at"]).where("id", "=", s.id).executeTakeFirstOrThrow();
    expect(row.title).toBe("To go");
    expect(row.archived_at).toBeInstanceOf(Date);
    const audit = await t.db.kysely
      .selectFrom("audit.events")
      .select(["actor", "changed_columns"])
      .where("row_key", "=", s.id)
      .where("operation", "=", "UPDATE")
      .execute();
    expect(audit).toEqual([{ actor: "operator:alice", changed_columns: ["archived_at"] }]);
    expect((await viewer(`/api/sessions/${UNKNOWN}`, { method: "DELETE" })).status).toBe(403);
  });

  it("is refused with 409 and a reason while a turn runs, the window is open, a step runs or an approval waits", async () => {
    const cases: [string, (sessionId: string) => Promise<unknown>, RegExp][] = [
      ["turn", (id) => makeTurn(t.db.kysely, { session_id: id }), /Nomos is working in this session: press Stop/],
      ["window", (id) => makeAssentWindow(t.db.kysely, { session_id: id }), /Autonomy is on in this session: press Stop/],
      ["step", (id) => makeRunningExecution(t.db.kysely, id), /still running/],
      [
        "approval",
        async (id) => {
          const x = await makeExecution(t.db.kysely, { session_id: id, status: "pending_approval" });
          return makeApproval(t.db.kysely, { session_id: id, kind: "execution", execution_id: x.id });
        },
        /approvals waiting: approve or reject them/,
      ],
    ];
    for (const [what, make, reason] of cases) {
      const s = await makeSession(t.db.kysely, { title: `Busy: ${what}` });
      await make(s.id);
      const res = await req(`/api/sessions/${s.id}`, { method: "DELETE" });
      expect(res.status, what).toBe(409);
      const body = await json<{ error: { code: string; message: string } }>(res);
      expect(body.error.code, what).toBe("conflict");
      expect(body.error.message, what).toMatch(reason);
      const row = await t.db.kysely.selectFrom("sessions").select("archived_at").where("id", "=", s.id).executeTakeFirstOrThrow();
      expect(row.archived_at, what).toBeNull();
    }
  });
});

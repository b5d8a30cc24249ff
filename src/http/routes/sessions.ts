// Sessions: create, list, read (transcript + assent window + lastEventId),
// send a message (queues a turn on the agent), Stop (everything of the
// session stops: window, turn, executions). Every write runs as the operator.
import { Hono } from "hono";
import { z } from "zod";
import type { AuthEnv } from "../../auth/middleware.js";
import { requireRole, roleAtLeast } from "../../auth/roles.js";
import { withActor } from "../../db/with-actor.js";
import type { ApiDeps } from "../api-deps.js";
import { notFound } from "../http-error.js";
import { assentWindowRead, sessionExists, sessionGet, sessionList } from "../read/session-read.js";
import { validate } from "../validate.js";
import { idParam } from "./ids.js";
import { viaPort } from "./port-errors.js";

const DEFAULT_TITLE = "New session";

export function sessionRoutes(deps: ApiDeps) {
  const mustExist = async (sessionId: string) => {
    if (!(await sessionExists(deps.db, { sessionId }))) throw notFound("session", sessionId);
  };

  return new Hono<AuthEnv>()
    .post(
      "/api/sessions",
      requireRole("operator", "creating a session"),
      validate("json", z.object({ title: z.string().trim().min(1).max(200).optional() }).default({})),
      async (c) => {
        const { title } = c.req.valid("json");
        const op = c.get("operator");
        const row = await withActor(deps.db, c.get("actor"), (tx) =>
          tx
            .insertInto("sessions")
            .values({ title: title ?? DEFAULT_TITLE, operator_id: op.id })
            .returning(["id", "title", "created_at"])
            .executeTakeFirstOrThrow(),
        );
        return c.json({ id: row.id, title: row.title, createdAt: row.created_at }, 201);
      },
    )
    .get("/api/sessions", async (c) => c.json({ sessions: await sessionList(deps.db) }))
    .get("/api/sessions/:id", validate("param", idParam), async (c) => {
      const { id } = c.req.valid("param");
      const session = await sessionGet(deps.db, { sessionId: id });
      if (!session) throw notFound("session", id);
      // assentMinutes: how long approving opens the window for, which the cards say before the click.
      return c.json({ ...session, assentMinutes: deps.assentMinutes ?? 30 });
    })
    .post(
      "/api/sessions/:id/messages",
      requireRole("operator", "chatting"),
      validate("param", idParam),
      validate("json", z.object({ text: z.string().trim().min(1, "must not be empty").max(20_000) })),
      async (c) => {
        const { id } = c.req.valid("param");
        const { text } = c.req.valid("json");
        await mustExist(id);
        const actor = c.get("actor");
        // A session still called "New session" is named after its first words.
        await withActor(deps.db, actor, (tx) =>
          tx
            .updateTable("sessions")
            .set({ title: text.replace(/\s+/g, " ").slice(0, 60) })
            .where("id", "=", id)
            .where("title", "=", DEFAULT_TITLE)
            .execute(),
        );
        // Typed confirmation phrases count only from admins (roles.ts).
        const mayConfirmDestructive = roleAtLeast(c.get("operator").role, "admin");
        const { turnId } = await viaPort(() => deps.agent.chat(id, text, actor, { mayConfirmDestructive }));
        return c.json({ turnId }, 202);
      },
    )
    .delete("/api/sessions/:id/assent", requireRole("operator", "Stop"), validate("param", idParam), async (c) => {
      const { id } = c.req.valid("param");
      await mustExist(id);
      const actor = c.get("actor");
      // Everything of the session stops (turns/session-stop.ts): the window
      // closes first, so nothing the aborted turn or a cancelled step leaves
      // behind can start a continuation.
      const { marker } = await viaPort(() => deps.agent.stop(id, actor));
      deps.log.info({ sessionId: id, actor, marker }, "Stop");
      return c.json({ assent: await assentWindowRead(deps.db, { sessionId: id }), stopped: marker });
    });
}

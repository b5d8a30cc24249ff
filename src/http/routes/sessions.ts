// Sessions: create, list, read (transcript + assent window + lastEventId),
// rename, delete (an archive: hidden, 404 afterwards, kept in the audit
// trail; refused with 409 while the session has anything in flight),
// send a message (queues a turn on the agent), Stop (everything of the
// session stops: window, turn, executions). The rules are sessions/'s and
// Turns'; this file translates HTTP to them. Every write runs as the operator.
import { Hono } from "hono";
import { z } from "zod";
import { roleAtLeast } from "../../auth/roles.js";
import {
  SESSION_MESSAGE_MAX_CHARS,
  sessionArchive,
  sessionArchiveBlocker,
  sessionAssentView,
  sessionCreate,
  sessionExists,
  sessionList,
  sessionNameFromMessage,
  sessionRename,
  sessionView,
} from "../../sessions/sessions.js";
import { type ApiDeps, agentOf } from "../api-deps.js";
import type { AuthEnv } from "../auth-middleware.js";
import { HttpError, notFound } from "../http-error.js";
import { requireRole } from "../require-role.js";
import { validate } from "../validate.js";
import { idParam } from "./ids.js";

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
        const session = await sessionCreate(deps.db, {
          ...(title !== undefined ? { title } : {}),
          operatorId: c.get("operator").id,
          actor: c.get("actor"),
        });
        return c.json(session, 201);
      },
    )
    .get("/api/sessions", async (c) => c.json({ sessions: await sessionList(deps.db) }))
    .get("/api/sessions/:id", validate("param", idParam), async (c) => {
      const { id } = c.req.valid("param");
      const session = await sessionView(deps.db, { sessionId: id });
      if (!session) throw notFound("session", id);
      // assentMinutes: how long approving opens the window for, which the cards say before the click.
      return c.json({ ...session, assentMinutes: deps.assentMinutes ?? 30 });
    })
    .patch(
      "/api/sessions/:id",
      requireRole("operator", "renaming a session"),
      validate("param", idParam),
      validate("json", z.object({ title: z.string().trim().min(1, "must not be empty").max(200) })),
      async (c) => {
        const { id } = c.req.valid("param");
        const { title } = c.req.valid("json");
        if (!(await sessionRename(deps.db, { sessionId: id, title, actor: c.get("actor") }))) throw notFound("session", id);
        return c.json({ id, title });
      },
    )
    .delete("/api/sessions/:id", requireRole("operator", "deleting a session"), validate("param", idParam), async (c) => {
      const { id } = c.req.valid("param");
      await mustExist(id);
      // Nothing in flight is orphaned: a running turn, an open window, a
      // running step or a waiting approval must be settled first.
      const blocker = await sessionArchiveBlocker(deps.db, { sessionId: id });
      if (blocker) throw new HttpError("conflict", blocker);
      if (!(await sessionArchive(deps.db, { sessionId: id, actor: c.get("actor") }))) throw notFound("session", id);
      deps.log.info({ sessionId: id, actor: c.get("actor") }, "session archived");
      return c.body(null, 204);
    })
    .post(
      "/api/sessions/:id/messages",
      requireRole("operator", "chatting"),
      validate("param", idParam),
      validate("json", z.object({ text: z.string().trim().min(1, "must not be empty").max(SESSION_MESSAGE_MAX_CHARS) })),
      async (c) => {
        const { id } = c.req.valid("param");
        const { text } = c.req.valid("json");
        await mustExist(id);
        const actor = c.get("actor");
        await sessionNameFromMessage(deps.db, { sessionId: id, text, actor });
        // Typed confirmation phrases count only from admins (roles.ts).
        const mayConfirmDestructive = roleAtLeast(c.get("operator").role, "admin");
        const { turnId } = await agentOf(deps).turns.chat(id, text, actor, { mayConfirmDestructive });
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
      const { marker } = await agentOf(deps).turns.stopSession(id, actor);
      deps.log.info({ sessionId: id, actor, marker }, "Stop");
      return c.json({ assent: await sessionAssentView(deps.db, { sessionId: id }), stopped: marker });
    });
}

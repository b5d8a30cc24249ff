// GET /api/sessions/:id/export?format=md|json: the session as a document to
// download (sessions/session-export.ts, and session-export-md.ts for the
// Markdown). Any role may read it (viewers too); the answer is an
// attachment named after the session's title and date.
import { Hono } from "hono";
import { z } from "zod";
import { sessionExport } from "../../sessions/session-export.js";
import { sessionExportMarkdown } from "../../sessions/session-export-md.js";
import type { ApiDeps } from "../api-deps.js";
import type { AuthEnv } from "../auth-middleware.js";
import { notFound } from "../http-error.js";
import { validate } from "../validate.js";
import { idParam } from "./ids.js";

/** A filename from the title: letters, digits and dashes, never empty. */
function filename(title: string, createdAt: string, ext: string): string {
  const slug = title
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60)
    .replace(/-+$/, "");
  return `nomos-${slug || "session"}-${createdAt.slice(0, 10)}.${ext}`;
}

export function sessionExportRoutes(deps: ApiDeps) {
  return new Hono<AuthEnv>().get(
    "/api/sessions/:id/export",
    validate("param", idParam),
    validate("query", z.object({ format: z.enum(["md", "json"], "must be md or json").default("md") })),
    async (c) => {
      const { id } = c.req.valid("param");
      const { format } = c.req.valid("query");
      const doc = await sessionExport(deps.db, { sessionId: id });
      if (!doc) throw notFound("session", id);
      const name = filename(doc.session.title, doc.session.createdAt, format);
      c.header("Content-Disposition", `attachment; filename="${name}"`);
      c.header("Cache-Control", "no-store");
      if (format === "json") return c.json(doc);
      c.header("Content-Type", "text/markdown; charset=utf-8");
      return c.body(sessionExportMarkdown(doc));
    },
  );
}

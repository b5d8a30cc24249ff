// Guest snapshots (issue 17): the snapshots view (all of Nomos's, or one
// session's) and "Roll back <guest> to before this plan", which creates the
// destructive rollback step pending the operator's typed confirmation
// (snapshots/rollback.ts); it runs only once an approval decides it, like
// any destructive step.
import { Hono } from "hono";
import { approvalView } from "../../approvals/approval-view.js";
import { withActor } from "../../db/with-actor.js";
import { snapshotRollbackRequest } from "../../snapshots/rollback.js";
import { snapshotView, snapshotViews } from "../../snapshots/snapshot-view.js";
import type { ApiDeps } from "../api-deps.js";
import type { AuthEnv } from "../auth-middleware.js";
import { notFound } from "../http-error.js";
import { requireRole } from "../require-role.js";
import { validate } from "../validate.js";
import { idParam } from "./ids.js";

export function snapshotRoutes(deps: ApiDeps) {
  return new Hono<AuthEnv>()
    .get("/api/snapshots", async (c) => c.json({ snapshots: await snapshotViews(deps.db, {}) }))
    .get("/api/sessions/:id/snapshots", validate("param", idParam), async (c) => {
      const { id } = c.req.valid("param");
      const session = await deps.db.selectFrom("sessions").select("id").where("id", "=", id).executeTakeFirst();
      if (!session) throw notFound("session", id);
      return c.json({ snapshots: await snapshotViews(deps.db, { sessionId: id, includeFailed: true }) });
    })
    .post("/api/snapshots/:id/rollback", requireRole("operator", "asking for a rollback"), validate("param", idParam), async (c) => {
      const { id } = c.req.valid("param");
      const { approval } = await withActor(deps.db, c.get("actor"), (tx) =>
        snapshotRollbackRequest(tx, { snapshotId: id, approvalMinutes: deps.approvalMinutes ?? 60 }),
      );
      return c.json({ snapshot: await snapshotView(deps.db, id), approval: await approvalView(deps.db, { approvalId: approval.id }) }, 201);
    });
}

// Operator management by an admin: the list, a role change, a removal
// (creation is operators.ts's operatorCreate). The only module that changes
// operators.role or deletes operators, and where their invariants live:
//   - there is always at least one admin: demoting or removing the last one
//     is refused (someone must be able to manage the rest);
//   - an operator cannot remove themself (an admin locking themself out by a
//     slip is the likely mistake, and another admin can do it).
// Each change is one conditional statement that checks the admins that
// would remain, run under the actor the audit trail records (withActor).
//
// Why the advisory lock: under READ COMMITTED a statement's subquery reads a
// snapshot taken when the statement starts, so two admins demoting each
// other at once would each still see the other as an admin, and both would
// succeed. Every change that can reduce the admins takes the same
// transaction-level lock first; the second waits for the first to commit,
// and its statement, starting after that, sees the first one's change.
//
// Removal: operator_logins rows cascade (the operator's cookies and tokens
// stop working at once), as do their notification channels and push
// subscriptions; their sessions keep their history (sessions.operator_id is
// ON DELETE SET NULL) and the audit trail keeps every row it recorded.
import { type Kysely, sql } from "kysely";
import type { Database, OperatorRole } from "../db/schema.js";
import { type Tx, withActor } from "../db/with-actor.js";

export interface OperatorView {
  id: string;
  username: string;
  role: OperatorRole;
  createdAt: string;
  /** When the operator last logged in or made a token (the audit trail's newest operator_logins INSERT); null if never. */
  lastLoginAt: string | null;
}

export type OperatorRefusal = "not_found" | "last_admin" | "self";

/** A change the invariants refuse; `reason` says which, `message` says it to a person. */
export class OperatorChangeRefused extends Error {
  override name = "OperatorChangeRefused";
  constructor(
    readonly reason: OperatorRefusal,
    message: string,
  ) {
    super(message);
  }
}

/** Every operator, oldest first; with `id`, that one only (read by primary key, not by listing all). */
export async function operatorsList(db: Kysely<Database>, p: { id?: string } = {}): Promise<OperatorView[]> {
  // The audit index (table_name, row_key, id) answers the lateral lookup
  // per operator; operator_logins is audited keyed by operator_id.
  const { rows } = await sql<{ id: string; username: string; role: OperatorRole; created_at: Date; last_login_at: Date | null }>`
    SELECT o.id, o.username, o.role, o.created_at, last.at AS last_login_at
      FROM operators o
      LEFT JOIN LATERAL (
        SELECT e.at FROM audit.events e
         WHERE e.table_name = 'operator_logins' AND e.row_key = o.id::text AND e.operation = 'INSERT'
         ORDER BY e.id DESC LIMIT 1
      ) last ON true
     WHERE ${p.id === undefined ? sql`true` : sql`o.id = ${p.id}`}
     ORDER BY o.created_at, o.username`.execute(db);
  return rows.map((r) => ({
    id: r.id,
    username: r.username,
    role: r.role,
    createdAt: r.created_at.toISOString(),
    lastLoginAt: r.last_login_at ? r.last_login_at.toISOString() : null,
  }));
}

async function lockAdmins(tx: Tx): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext('nomos.operator_admins'))`.execute(tx);
}

/** Why a conditional statement touched no row: the operator is gone, or the admin rule refused. */
async function refusal(tx: Tx, id: string, doing: "demoting" | "removing"): Promise<OperatorChangeRefused> {
  const row = await tx.selectFrom("operators").select("username").where("id", "=", id).executeTakeFirst();
  if (!row) return new OperatorChangeRefused("not_found", "no such operator (removed already?)");
  return new OperatorChangeRefused(
    "last_admin",
    `Nomos needs an admin, and ${row.username} is the last one: make another operator an admin before ${doing} them`,
  );
}

/** Sets an operator's role; takes effect on their next request (the role is read per request). */
export async function operatorRoleSet(
  db: Kysely<Database>,
  params: { id: string; role: OperatorRole; actor: string },
): Promise<OperatorView> {
  await withActor(db, params.actor, async (tx) => {
    await lockAdmins(tx);
    // Allowed when the new role is admin, or the target is no admin, or
    // another admin remains.
    const { rows } = await sql<{ id: string }>`
      UPDATE operators SET role = ${params.role}
       WHERE id = ${params.id}
         AND (${params.role} = 'admin' OR role <> 'admin'
              OR EXISTS (SELECT 1 FROM operators other WHERE other.role = 'admin' AND other.id <> ${params.id}))
      RETURNING id`.execute(tx);
    if (rows.length === 0) throw await refusal(tx, params.id, "demoting");
  });
  const [view] = await operatorsList(db, { id: params.id });
  if (!view) throw new OperatorChangeRefused("not_found", "no such operator (removed already?)");
  return view;
}

/**
 * Removes an operator. `byOperatorId` is the caller's own operator id (null
 * for the API token, which is nobody's login): nobody removes themself.
 */
export async function operatorRemove(
  db: Kysely<Database>,
  params: { id: string; byOperatorId: string | null; actor: string },
): Promise<{ username: string }> {
  if (params.id === params.byOperatorId) {
    throw new OperatorChangeRefused("self", "you cannot remove yourself; another admin can");
  }
  return withActor(db, params.actor, async (tx) => {
    await lockAdmins(tx);
    const { rows } = await sql<{ username: string }>`
      DELETE FROM operators
       WHERE id = ${params.id}
         AND (role <> 'admin'
              OR EXISTS (SELECT 1 FROM operators other WHERE other.role = 'admin' AND other.id <> ${params.id}))
      RETURNING username`.execute(tx);
    if (rows[0]) return rows[0];
    throw await refusal(tx, params.id, "removing");
  });
}

// Which database role does what (issue 14; migration 030 says what each may).
// Migrations run as the owner: NOMOS_DATABASE_OWNER_URL when it is set, else
// DATABASE_URL (a single-user setup where the service is the owner). When
// the two differ, the service's login role is made a member of
// nomos_service, the group that may read and write the domain tables but
// only append to and read audit.events.
//
// Invariant: the owner's connection lives only as long as the migration:
// opened, used, closed before the service takes its first request.
import type { Logger } from "../log/logger.js";
import { connect, type Sql } from "./connect.js";
import { type MigrateResult, MigrationError, migrate } from "./migrate.js";
import { isPgError } from "./pg-errors.js";

export interface RolePowers {
  role: string;
  superuser: boolean;
  /** Owns audit.events: could disable its guard triggers and rewrite it. */
  ownsAudit: boolean;
}

export async function rolePowers(sql: Sql): Promise<RolePowers> {
  const [row] = await sql<{ role: string; superuser: boolean; owns_audit: boolean }[]>`
    SELECT current_user AS role,
           (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser,
           coalesce((SELECT pg_has_role(current_user, c.relowner, 'USAGE')
                       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                      WHERE n.nspname = 'audit' AND c.relname = 'events'), false) AS owns_audit`;
  return { role: row!.role, superuser: row!.superuser, ownsAudit: row!.owns_audit };
}

/** Applies pending migrations as the owner and lets the service's role in. */
export async function migrateAsOwner(p: { serviceSql: Sql; ownerUrl?: string; log: Logger }): Promise<MigrateResult> {
  if (!p.ownerUrl) {
    try {
      return await migrate(p.serviceSql);
    } catch (err) {
      if (isPgError(err, "insufficient_privilege") || isPgError((err as Error).cause, "insufficient_privilege")) {
        throw new MigrationError(
          `migrations need the owner role, and DATABASE_URL's role may not apply them (${(err as Error).message}); ` +
            "set NOMOS_DATABASE_OWNER_URL to the owner's URL, or run `npm run migrate` with DATABASE_URL set to it",
          { cause: err },
        );
      }
      throw err;
    }
  }
  const owner = connect(p.ownerUrl, { max: 1, applicationName: "nomos-migrate" });
  try {
    const result = await migrate(owner.sql);
    const service = await rolePowers(p.serviceSql);
    const [group] = await owner.sql<{ present: boolean; member: boolean }[]>`
      SELECT true AS present, pg_has_role(${service.role}, 'nomos_service', 'MEMBER') AS member
        FROM pg_roles WHERE rolname = 'nomos_service'`;
    if (group && !group.member && !service.superuser) {
      const grant = `GRANT nomos_service TO "${service.role.replaceAll('"', '""')}"`;
      try {
        await owner.sql.unsafe(grant);
        p.log.info({ role: service.role }, "the service's database role joined nomos_service");
      } catch (err) {
        // An owner without the right to grant roles: the service will fail on
        // its first query, so say here what a superuser must run.
        if (!isPgError(err, "insufficient_privilege")) throw err;
        p.log.error({ role: service.role }, `the owner may not add the service's role to nomos_service; as a superuser run: ${grant}`);
      }
    }
    return result;
  } finally {
    await owner.close();
  }
}

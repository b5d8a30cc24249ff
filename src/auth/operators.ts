// Operator accounts: creation (the first one from the environment, from
// `npm run create-operator`, or from the page's first-operator form) and
// lookup. Invariant: "the first operator" is created at most once even when
// two requests race, because the check and the insert run under one
// transaction-level advisory lock.
import { type Kysely, sql } from "kysely";
import { isPgError } from "../db/pg-errors.js";
import type { Database } from "../db/schema.js";
import { withActor } from "../db/with-actor.js";
import { passwordHash } from "./password.js";

export const USERNAME_PATTERN = /^[A-Za-z0-9._@-]{1,64}$/;
export const PASSWORD_MIN = 8;

export interface OperatorInfo {
  id: string;
  username: string;
}

export class OperatorExistsError extends Error {
  override name = "OperatorExistsError";
}

export async function operatorCount(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom("operators")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function operatorGetByUsername(db: Kysely<Database>, params: { username: string }) {
  return db.selectFrom("operators").selectAll().where("username", "=", params.username).executeTakeFirst();
}

/**
 * Creates an operator. With onlyIfNone, creates it only when there is no
 * operator at all (the first-operator form): returns undefined otherwise.
 */
export async function operatorCreate(
  db: Kysely<Database>,
  params: { username: string; password: string; actor: string; onlyIfNone?: boolean },
): Promise<OperatorInfo | undefined> {
  if (!USERNAME_PATTERN.test(params.username)) {
    throw new Error(`username "${params.username}" must be 1-64 letters, digits or . _ @ -`);
  }
  if (params.password.length < PASSWORD_MIN) throw new Error(`password must be at least ${PASSWORD_MIN} characters`);
  const hash = await passwordHash(params.password);
  try {
    return await withActor(db, params.actor, async (tx) => {
      if (params.onlyIfNone) {
        await sql`SELECT pg_advisory_xact_lock(hashtext('nomos.first_operator'))`.execute(tx);
        if ((await operatorCount(tx)) > 0) return undefined;
      }
      return tx
        .insertInto("operators")
        .values({ username: params.username, password_hash: hash })
        .returning(["id", "username"])
        .executeTakeFirstOrThrow();
    });
  } catch (err) {
    if (isPgError(err, "unique_violation")) {
      throw new OperatorExistsError(`an operator named "${params.username}" already exists`, { cause: err });
    }
    throw err;
  }
}

/**
 * On start: when NOMOS_ADMIN_USER/PASSWORD are set and no operator exists,
 * creates that one. Never changes an existing operator's password.
 */
export async function operatorEnsureFirst(
  db: Kysely<Database>,
  admin: { username: string; password: string } | undefined,
): Promise<OperatorInfo | undefined> {
  if (!admin) return undefined;
  return operatorCreate(db, { ...admin, actor: "system:startup", onlyIfNone: true });
}

// Operator accounts: creation (the first one from the environment, from
// `npm run create-operator`, or from the page's first-operator form; later
// ones also by an admin, POST /api/operators) and lookup. Role changes and
// removals are operator-accounts.ts's. Invariant: "the first operator" is created at most once even when
// two requests race, because the check and the insert run under one
// transaction-level advisory lock; and the first operator is always an admin
// (someone must be able to manage the rest).
import { type Kysely, sql } from "kysely";
import { isPgError } from "../db/pg-errors.js";
import type { Database, OperatorRole } from "../db/schema.js";
import { withActor } from "../db/with-actor.js";
import { passwordHash } from "./password.js";
import { passwordProblem } from "./password-strength.js";

export const USERNAME_PATTERN = /^[A-Za-z0-9._@-]{1,64}$/;
/** The name NOMOS_API_TOKEN's caller acts under (operator:api-token): no operator may take it, or the audit trail would mix the two. */
export const API_TOKEN_USERNAME = "api-token";
export const PASSWORD_MIN = 8;

export interface OperatorInfo {
  id: string;
  username: string;
  role: OperatorRole;
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
 * The first operator is an admin whatever `role` says; later ones get
 * `role` ("operator" when absent). The password's strength is judged by the
 * callers where a person chooses it (passwordProblem), not here.
 */
export async function operatorCreate(
  db: Kysely<Database>,
  params: { username: string; password: string; actor: string; onlyIfNone?: boolean; role?: OperatorRole },
): Promise<OperatorInfo | undefined> {
  if (!USERNAME_PATTERN.test(params.username)) {
    throw new Error(`username "${params.username}" must be 1-64 letters, digits or . _ @ -`);
  }
  if (params.username === API_TOKEN_USERNAME) {
    throw new Error(`username "${API_TOKEN_USERNAME}" is reserved: it names NOMOS_API_TOKEN's caller in the audit trail`);
  }
  if (params.password.length < PASSWORD_MIN) throw new Error(`password must be at least ${PASSWORD_MIN} characters`);
  const hash = await passwordHash(params.password);
  try {
    return await withActor(db, params.actor, async (tx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtext('nomos.first_operator'))`.execute(tx);
      const first = (await operatorCount(tx)) === 0;
      if (params.onlyIfNone && !first) return undefined;
      return tx
        .insertInto("operators")
        .values({ username: params.username, password_hash: hash, role: first ? "admin" : (params.role ?? "operator") })
        .returning(["id", "username", "role"])
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
  if ((await operatorCount(db)) > 0) return undefined;
  const problem = passwordProblem(admin.password, { username: admin.username });
  if (problem) throw new Error(`NOMOS_ADMIN_PASSWORD: ${problem}`);
  return operatorCreate(db, { ...admin, actor: "system:startup", onlyIfNone: true });
}

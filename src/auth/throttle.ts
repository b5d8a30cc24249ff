// Throttling of failed logins and failed bearer tokens, kept in PostgreSQL
// (auth_throttles, migration 030) so every process sees the same counts and
// a restart forgets nothing. Keys: "addr:<address>" (logins and setup codes
// from one source), "user:<username>" (logins to one name from anywhere),
// "bearer:<address>" (wrong tokens from one source).
//
// Growing delays, never a lockout: after five failures in a row a key must
// wait 2 s, then 4, 8 ... up to 15 minutes (auth_throttle_delay); a key's
// count starts over an hour after its last failure.
//
// Invariants:
// - A login attempt takes its slot before the password is checked, in one
//   conditional upsert per key (attemptTake), so a burst of parallel guesses
//   cannot all slip in before the first failure is counted; a success gives
//   the slot back (attemptRelease).
// - A username being hammered refuses only sources that have failed before:
//   a correct password from an address with no recent failures is always
//   checked, so nobody can lock an operator out with someone else's failures.
import { type Kysely, sql } from "kysely";
import type { Database } from "../db/schema.js";

/** How long a key's count lasts after its last failure. */
const FORGET_AFTER = sql`interval '1 hour'`;

export interface Taken {
  key: string;
  /** False: the key is blocked; retryAfterS says for how long. */
  taken: boolean;
  /** Failures in a row under this key, this attempt included when taken. */
  failures: number;
  retryAfterS: number;
}

/** Counts one attempt under `key` as a failure, unless the key is blocked right now. */
export async function throttleAttemptTake(db: Kysely<Database>, params: { key: string }): Promise<Taken> {
  const taken = await sql<{ failures: number }>`
    INSERT INTO auth_throttles AS t (key, failures, last_failure_at, blocked_until)
    VALUES (${params.key}, 1, now(), NULL)
    ON CONFLICT (key) DO UPDATE SET
      failures = CASE WHEN t.last_failure_at < now() - ${FORGET_AFTER} THEN 1 ELSE t.failures + 1 END,
      last_failure_at = now(),
      blocked_until = now() + auth_throttle_delay(
        CASE WHEN t.last_failure_at < now() - ${FORGET_AFTER} THEN 1 ELSE t.failures + 1 END)
    WHERE t.blocked_until IS NULL OR t.blocked_until <= now()
    RETURNING failures`.execute(db);
  const row = taken.rows[0];
  if (row) return { key: params.key, taken: true, failures: row.failures, retryAfterS: 0 };
  const blocked = await throttleBlockedFor(db, params);
  // Unblocked between the two statements: let the caller try again at once.
  return { key: params.key, taken: false, failures: blocked.failures, retryAfterS: Math.max(1, blocked.retryAfterS) };
}

/** Gives back a slot taken by an attempt that succeeded. */
export async function throttleAttemptRelease(db: Kysely<Database>, params: { key: string }): Promise<void> {
  await sql`
    UPDATE auth_throttles
       SET failures = greatest(failures - 1, 0),
           blocked_until = CASE WHEN failures - 1 <= 5 THEN NULL ELSE blocked_until END
     WHERE key = ${params.key}`.execute(db);
}

/** Seconds until `key` may try again (0: now), and its failures in a row. */
export async function throttleBlockedFor(
  db: Kysely<Database>,
  params: { key: string },
): Promise<{ retryAfterS: number; failures: number }> {
  const r = await sql<{ wait: string | null; failures: number }>`
    SELECT ceil(extract(epoch FROM blocked_until - now())) AS wait, failures
      FROM auth_throttles WHERE key = ${params.key}`.execute(db);
  const row = r.rows[0];
  return { retryAfterS: Math.max(0, Number(row?.wait ?? 0)), failures: row?.failures ?? 0 };
}

/** Records a failure under `key` (bearer tokens: checked first with throttleBlockedFor). */
export async function throttleFailureRecord(db: Kysely<Database>, params: { key: string }): Promise<void> {
  await sql`
    INSERT INTO auth_throttles AS t (key, failures, last_failure_at, blocked_until)
    VALUES (${params.key}, 1, now(), NULL)
    ON CONFLICT (key) DO UPDATE SET
      failures = CASE WHEN t.last_failure_at < now() - ${FORGET_AFTER} THEN 1 ELSE t.failures + 1 END,
      last_failure_at = now(),
      blocked_until = now() + auth_throttle_delay(
        CASE WHEN t.last_failure_at < now() - ${FORGET_AFTER} THEN 1 ELSE t.failures + 1 END)`.execute(db);
  // Counters of sources long gone: cheap with the index, and keeps the table small.
  await sql`DELETE FROM auth_throttles WHERE last_failure_at < now() - interval '1 day'`.execute(db);
}

// The one place that knows PostgreSQL's error codes, by name, and turns an
// unknown thrown value into an Error. Invariant: no other module compares
// SQLSTATE strings; it asks isPgError(err, "unique_violation").
const CODES = {
  unique_violation: "23505",
  foreign_key_violation: "23503",
  not_null_violation: "23502",
  check_violation: "23514",
  exclusion_violation: "23P01",
  serialization_failure: "40001",
  deadlock_detected: "40P01",
  lock_not_available: "55P03",
  insufficient_privilege: "42501",
  undefined_table: "42P01",
  duplicate_database: "42P04",
  invalid_catalog_name: "3D000",
  object_in_use: "55006",
  admin_shutdown: "57P01",
  raise_exception: "P0001",
  invalid_text_representation: "22P02",
} as const;

export type PgErrorName = keyof typeof CODES;

/**
 * The SQLSTATE of an error PostgreSQL sent, or undefined for anything else.
 * Only the server's errors carry one, always with a severity: Node's own
 * codes can look like a SQLSTATE (a socket the server ended is EPIPE, five
 * capitals), and read as one, EPIPE was no connection error.
 */
export function pgCode(err: unknown): string | undefined {
  if (typeof err === "object" && err !== null && "code" in err && "severity" in err) {
    const code = (err as { code: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

export function isPgError(err: unknown, name: PgErrorName): boolean {
  return pgCode(err) === CODES[name];
}

/** Whatever was thrown, as an Error (strings and objects are wrapped). */
export function toError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  return new Error(typeof thrown === "string" ? thrown : JSON.stringify(thrown), { cause: thrown });
}

/** The database could not be reached or is restarting: worth trying again. */
export function isDbUnavailable(err: unknown): boolean {
  const code = pgCode(err);
  // Connection (08), resources (53), shutdown/start-up (57); postgres.js's own
  // CONNECTION_* / ECONNREFUSED errors carry no SQLSTATE.
  if (code !== undefined) return /^(08|53|57)/.test(code);
  const own = (err as { code?: unknown } | null)?.code;
  return typeof own === "string" && /^(CONNECTION_|ECONN|ETIMEDOUT|EPIPE|CONNECT_TIMEOUT)/.test(own);
}

/**
 * Runs `write` and, while the database is unavailable (isDbUnavailable),
 * tries again with backoff for up to `forMs`; any other error, or the time
 * running out, is thrown. For the few writes that must not be dropped by a
 * database restart (an execution's result, a turn's end).
 */
export async function retryWhileDbUnavailable<T>(
  write: () => Promise<T>,
  p: { forMs: number; onRetry?: (err: unknown, attempt: number) => void },
): Promise<T> {
  const deadline = Date.now() + p.forMs;
  for (let attempt = 1, wait = 250; ; attempt++, wait = Math.min(wait * 2, 4000)) {
    try {
      return await write();
    } catch (err) {
      if (!isDbUnavailable(err) || Date.now() + wait > deadline) throw err;
      p.onRetry?.(err, attempt);
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

export class DeadlineError extends Error {
  override name = "DeadlineError";
}

/**
 * Settles like `work`, or rejects with DeadlineError after `ms`. For loops
 * that must not wedge on one query that never returns (the unpatched
 * driver left such queries after a database restart; a network path that
 * drops packets without a reset still can): the loop gives up waiting and goes on; the
 * work itself is not cancelled, so what it does must be safe to finish late
 * (a claim with a lease, an idempotent read).
 */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(`${what} took longer than ${ms} ms; giving up waiting`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

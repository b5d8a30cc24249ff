// The start-time proof that LISTEN hears NOTIFY: a NOTIFY sent the way
// Nomos's triggers send them (on a connection of the DATABASE_URL pool) must
// reach a LISTEN on the listen connection (NOMOS_DATABASE_LISTEN_URL,
// default DATABASE_URL) within a second. Behind a transaction pooler
// (PgBouncer's pool_mode=transaction) LISTEN "succeeds" on a server
// connection the pooler hands to someone else right after, and no
// notification ever comes back: the event loop would go deaf in silence,
// with only the sweep left. Invariant: Nomos never starts deaf; it refuses
// with one line naming both variables.
import { randomBytes } from "node:crypto";
import type { Sql } from "../db/connect.js";

export const LISTEN_CHECK_CHANNEL = "nomos_listen_check";

export class ListenCheckError extends Error {
  override name = "ListenCheckError";
}

export async function listenSelfCheck(options: { notify: Sql; listen: Sql; timeoutMs?: number }): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 1000;
  const token = randomBytes(8).toString("hex");
  let heard!: () => void;
  const arrived = new Promise<boolean>((resolve) => {
    heard = () => resolve(true);
    setTimeout(() => resolve(false), timeoutMs).unref();
  });
  const listening = await options.listen.listen(LISTEN_CHECK_CHANNEL, (payload) => {
    if (payload === token) heard();
  });
  try {
    await options.notify`SELECT pg_notify(${LISTEN_CHECK_CHANNEL}, ${token})`;
    if (!(await arrived)) {
      throw new ListenCheckError(
        `LISTEN does not hear NOTIFY: a notification sent through DATABASE_URL did not reach a LISTEN on NOMOS_DATABASE_LISTEN_URL (unset: DATABASE_URL) within ${timeoutMs} ms. If DATABASE_URL goes through a transaction pooler such as PgBouncer, set NOMOS_DATABASE_LISTEN_URL to a direct connection to the same PostgreSQL database`,
      );
    }
  } finally {
    await listening.unlisten().catch(() => {});
  }
}

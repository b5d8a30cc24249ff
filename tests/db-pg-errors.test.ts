// What counts as "the database is unavailable" (src/db/pg-errors.ts), on
// errors of the real kinds: PostgreSQL's own (they carry a SQLSTATE) and
// Node's socket errors (they carry a code of their own). A turn or a result
// cut off by an outage is retried or resumed only when its error says so.
//
// Invariant pinned: a socket the server ended (EPIPE) is an outage, not a
// SQLSTATE, and a server error keeps its SQLSTATE.
import { createConnection, createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { isDbUnavailable, isPgError, pgCode } from "../src/db/pg-errors.js";
import { shouldResume } from "../src/turns/resume.js";
import { useTestDatabase } from "./helpers/database.js";

const t = useTestDatabase();

/**
 * The error Node gives a write to a socket whose other side has ended it:
 * what postgres.js's deferred write (a setImmediate) meets when the server
 * closed the connection in between.
 */
async function writeAfterTheServerEnded(): Promise<Error> {
  const server = createServer((s) => s.end());
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  try {
    return await new Promise<Error>((resolve, reject) => {
      const client = createConnection({ host: "127.0.0.1", port });
      client.on("error", resolve);
      // Node's writeAfterFIN, as the deferred write meets it: our side has ended too.
      client.on("end", () => {
        client.end();
        client.write("SELECT 1");
      });
      client.on("close", () => reject(new Error("the socket closed without an error")));
    });
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
}

describe("a write to a connection the server has ended", () => {
  it("is the database unavailable (EPIPE is no SQLSTATE), so the turn it cut off is resumed", async () => {
    const err = await writeAfterTheServerEnded();
    expect(err).toMatchObject({ code: "EPIPE", message: "This socket has been ended by the other party" });
    expect(pgCode(err)).toBeUndefined();
    expect(isDbUnavailable(err)).toBe(true);
    expect(shouldResume({ err, aborted: false, reason: undefined })).toBe(true);
  });
});

describe("an error PostgreSQL sent", () => {
  it("keeps its SQLSTATE: a refusal is not an outage, a shutdown is", async () => {
    const refused = await t.db.sql`SELECT 1 / 0`.catch((e: unknown) => e);
    expect(pgCode(refused)).toBe("22012");
    expect(isDbUnavailable(refused)).toBe(false);
    // The server's own error with a shutdown's SQLSTATE (57P01), as a backend ended by a restart sends it.
    const shutdown = await t.db.sql`DO $$ BEGIN RAISE EXCEPTION 'going down' USING ERRCODE = 'admin_shutdown'; END $$`.catch(
      (e: unknown) => e,
    );
    expect(isPgError(shutdown, "admin_shutdown")).toBe(true);
    expect(isDbUnavailable(shutdown)).toBe(true);
  });
});

// Operator logins: a browser's session cookie, or a long-lived token a
// script sends as `Authorization: Bearer`. The client holds a random token;
// the table holds only its sha256, so a database dump opens no sessions.
import { createHash, randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import { withActor } from "../db/with-actor.js";
import type { OperatorInfo } from "./operators.js";

export const tokenSha256 = (token: string) => createHash("sha256").update(token).digest("hex");

export async function operatorLoginCreate(
  db: Kysely<Database>,
  params: { operator: OperatorInfo; ttlSeconds: number },
): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBytes(32).toString("base64url");
  const expiresAt = new Date(Date.now() + params.ttlSeconds * 1000);
  await withActor(db, `operator:${params.operator.username}`, (tx) =>
    tx
      .insertInto("operator_logins")
      .values({ token_sha256: tokenSha256(token), operator_id: params.operator.id, expires_at: expiresAt })
      .execute(),
  );
  return { token, expiresAt };
}

/** The operator a token belongs to, if the login exists and has not expired. */
export async function operatorLoginResolve(db: Kysely<Database>, params: { token: string }): Promise<OperatorInfo | undefined> {
  return db
    .selectFrom("operator_logins as l")
    .innerJoin("operators as o", "o.id", "l.operator_id")
    .select(["o.id", "o.username", "o.role"])
    .where("l.token_sha256", "=", tokenSha256(params.token))
    .where("l.expires_at", ">", new Date())
    .executeTakeFirst();
}

export async function operatorLoginDelete(db: Kysely<Database>, params: { token: string; actor: string }): Promise<void> {
  await withActor(db, params.actor, (tx) =>
    tx.deleteFrom("operator_logins").where("token_sha256", "=", tokenSha256(params.token)).execute(),
  );
}

// This installation's VAPID key pair (Web Push): generated on first start
// and kept in notification_vapid_keys, so a browser subscribed once keeps
// receiving after restarts. Invariant: one pair per database, created
// race-free: the table's key can only be `true`, so of two processes
// starting at once one INSERT wins, the other does nothing, and both read
// the winner's row.
import type { Kysely } from "kysely";
import webpush from "web-push";
import type { Database } from "../db/schema.js";

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

/** The pair, generated and stored the first time. Pass a withActor transaction or handle. */
export async function vapidKeysEnsure(db: Kysely<Database>): Promise<VapidKeys> {
  const fresh = webpush.generateVAPIDKeys();
  await db
    .insertInto("notification_vapid_keys")
    .values({ public_key: fresh.publicKey, private_key: fresh.privateKey })
    .onConflict((oc) => oc.column("id").doNothing())
    .execute();
  const row = await db.selectFrom("notification_vapid_keys").select(["public_key", "private_key"]).executeTakeFirstOrThrow();
  return { publicKey: row.public_key, privateKey: row.private_key };
}

/** The public key only (what a browser subscribes with), or undefined before the first start made one. */
export async function vapidPublicKey(db: Kysely<Database>): Promise<string | undefined> {
  const row = await db.selectFrom("notification_vapid_keys").select("public_key").executeTakeFirst();
  return row?.public_key;
}

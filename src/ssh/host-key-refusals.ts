// Records a refused host key (migration 010). Invariant: only fingerprints
// are written, and the write goes through withActor so audit.events names
// the actor that tried to connect.
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import { withActor } from "../db/with-actor.js";

export interface HostKeyRefusal {
  target: string;
  host: string;
  port: number;
  expectedSha256: string;
  presentedSha256: string;
}

export async function sshHostKeyRefusalRecord(db: Kysely<Database>, actor: string, r: HostKeyRefusal): Promise<void> {
  await withActor(db, actor, (tx) =>
    tx
      .insertInto("ssh_host_key_refusals")
      .values({
        target: r.target,
        host: r.host,
        port: r.port,
        expected_sha256: r.expectedSha256,
        presented_sha256: r.presentedSha256,
      })
      .execute(),
  );
}

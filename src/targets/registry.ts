// The targets the agent may act on: the hosts of the targets file (synced
// into the targets table at start-up so containers can reference their node)
// and the containers pct_create registered. Invariants: a container is
// reached through its node, so resolving it yields the node's connection
// details plus its vmid; only targets whose node is in the current targets
// file are listed or resolved (a host removed from the file is out of reach
// even if old rows remain); "<node>/<vmid>" reaches any container on a
// Proxmox node of the file, registered or not; key material never passes
// through here, only the path to it.

import type { Kysely } from "kysely";
import type { Database, TargetKind } from "../db/schema.js";
import { type Tx, withActor } from "../db/with-actor.js";
import type { SshEndpoint } from "../ssh/connection-pool.js";
import { type FileTarget, TARGET_NAME } from "./targets-file.js";

export type { SshEndpoint };

export interface TargetInfo {
  name: string;
  kind: TargetKind;
  /** For containers: the node that runs it and its id there. */
  node: string | null;
  vmid: number | null;
  createdBySessionId: string | null;
  /** For an ssh host that is a QEMU VM (the targets file's `vm`): its node and vmid, for snapshots. */
  vm: { node: string; vmid: number } | null;
  /** The connection to open (the node's, for a container). */
  ssh: SshEndpoint;
}

/** What the agent and the browser may see of a target: no address details, no key path. */
export function targetSummary(t: TargetInfo): {
  name: string;
  kind: TargetKind;
  node: string | null;
  vmid: number | null;
} {
  return { name: t.name, kind: t.kind, node: t.node, vmid: t.vmid };
}

export class TargetRegistry {
  readonly #db: Kysely<Database>;
  readonly #direct = new Map<string, FileTarget>();

  constructor(deps: { db: Kysely<Database>; fileTargets: FileTarget[] }) {
    this.#db = deps.db;
    for (const t of deps.fileTargets) this.#direct.set(t.name, t);
  }

  /** Writes the file's targets into the targets table (insert or update). */
  async sync(actor = "system:startup"): Promise<void> {
    if (this.#direct.size === 0) return;
    await withActor(this.#db, actor, async (tx) => {
      for (const t of this.#direct.values()) {
        await tx
          .insertInto("targets")
          .values({
            name: t.name,
            kind: t.kind,
            host: t.host,
            port: t.port,
            username: t.username,
            private_key_path: t.privateKeyPath,
            host_key_sha256: t.hostKeySha256,
          })
          .onConflict((oc) =>
            oc.column("name").doUpdateSet((eb) => ({
              kind: eb.ref("excluded.kind"),
              host: eb.ref("excluded.host"),
              port: eb.ref("excluded.port"),
              username: eb.ref("excluded.username"),
              private_key_path: eb.ref("excluded.private_key_path"),
              host_key_sha256: eb.ref("excluded.host_key_sha256"),
              updated_at: new Date(),
            })),
          )
          .execute();
      }
    });
  }

  async list(): Promise<TargetInfo[]> {
    const direct = [...this.#direct.values()].map((t) => this.#directInfo(t));
    const containers = await this.#db.selectFrom("targets").selectAll().where("kind", "=", "container").orderBy("name").execute();
    const reachable = containers.flatMap((c) => {
      const info = this.#containerInfo(c);
      return info ? [info] : [];
    });
    return [...direct, ...reachable];
  }

  /** By name ("web1", "pve1") or as "<node>/<vmid>" ("pve1/105"). */
  async resolve(nameOrNodeSlashVmid: string): Promise<TargetInfo | undefined> {
    const direct = this.#direct.get(nameOrNodeSlashVmid);
    if (direct) return this.#directInfo(direct);
    const m = /^([^/]+)\/(\d{3,9})$/.exec(nameOrNodeSlashVmid);
    // No target can have any other shape: answer "unknown" without asking the
    // database (a NUL in a name would make the query itself fail).
    if (!(m ? TARGET_NAME.test(m[1]!) : TARGET_NAME.test(nameOrNodeSlashVmid))) return undefined;
    let query = this.#db.selectFrom("targets").selectAll().where("kind", "=", "container");
    query = m ? query.where("node", "=", m[1]!).where("vmid", "=", Number(m[2])) : query.where("name", "=", nameOrNodeSlashVmid);
    const row = await query.executeTakeFirst();
    if (row) return this.#containerInfo(row);
    // "<node>/<vmid>" also reaches a container pct_create did not make (one the
    // operator created by hand): it is only `pct exec` on a node we may act on.
    const node = m ? this.#direct.get(m[1]!) : undefined;
    if (m && node?.kind === "proxmox" && Number(m[2]) >= 100) {
      return {
        ...this.#directInfo(node),
        name: nameOrNodeSlashVmid,
        kind: "container",
        node: node.name,
        vmid: Number(m[2]),
        vm: null,
      };
    }
    return undefined;
  }

  #directInfo(t: FileTarget): TargetInfo {
    return {
      name: t.name,
      kind: t.kind,
      node: null,
      vmid: null,
      createdBySessionId: null,
      vm: t.vm ?? null,
      ssh: {
        name: t.name,
        host: t.host,
        port: t.port,
        username: t.username,
        privateKeyPath: t.privateKeyPath,
        hostKeySha256: t.hostKeySha256,
      },
    };
  }

  #containerInfo(row: {
    name: string;
    node: string | null;
    vmid: number | null;
    created_by_session_id: string | null;
  }): TargetInfo | undefined {
    const node = row.node ? this.#direct.get(row.node) : undefined;
    if (!node || row.vmid === null) return undefined;
    return {
      ...this.#directInfo(node),
      name: row.name,
      kind: "container",
      node: node.name,
      vmid: row.vmid,
      createdBySessionId: row.created_by_session_id,
      vm: null,
    };
  }
}

export class TargetConflictError extends Error {
  override name = "TargetConflictError";
}

/** Registers a container created on `node` as a target named after its hostname. */
export async function targetRegisterContainer(
  tx: Tx,
  p: { name: string; node: string; vmid: number; createdBySessionId: string | null },
): Promise<void> {
  const existing = await tx.selectFrom("targets").select(["name", "kind", "node", "vmid"]).where("name", "=", p.name).executeTakeFirst();
  if (existing && !(existing.kind === "container" && existing.node === p.node)) {
    throw new TargetConflictError(
      `a target named "${p.name}" already exists (${existing.kind}${existing.node ? ` on ${existing.node}` : ""}); choose another hostname`,
    );
  }
  // The same hostname recreated on the same node (old container destroyed) takes the new vmid.
  await tx
    .deleteFrom("targets")
    .where("kind", "=", "container")
    .where("node", "=", p.node)
    .where("vmid", "=", p.vmid)
    .where("name", "<>", p.name)
    .execute();
  await tx
    .insertInto("targets")
    .values({
      name: p.name,
      kind: "container",
      node: p.node,
      vmid: p.vmid,
      created_by_session_id: p.createdBySessionId,
    })
    .onConflict((oc) =>
      oc.column("name").doUpdateSet({ vmid: p.vmid, created_by_session_id: p.createdBySessionId, updated_at: new Date() }),
    )
    .execute();
}

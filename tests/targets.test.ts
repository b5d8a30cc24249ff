// Targets: the file is validated whole (a bad entry names itself and its
// field), file targets are synced into the table, containers resolve by name
// and by <node>/<vmid> and are reached through their node.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withActor } from "../src/db/with-actor.js";
import { TargetConflictError, TargetRegistry, targetRegisterContainer, targetSummary } from "../src/targets/registry.js";
import { loadTargetsFile, TargetsFileError } from "../src/targets/targets-file.js";
import { useTestDatabase } from "./helpers/database.js";

const t = useTestDatabase();
const FP = `SHA256:${"A".repeat(43)}`;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "nomos-targets-"));
  await writeFile(join(dir, "id_ed25519"), "not a real key, only needs to exist");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const good = {
  name: "pve1",
  host: "127.0.0.1",
  port: 2222,
  username: "root",
  privateKeyPath: "id_ed25519",
  hostKeySha256: FP,
  kind: "proxmox",
};

async function fileWith(content: unknown) {
  const file = join(dir, `targets-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

describe("loadTargetsFile", () => {
  it("loads a good file, resolving the key path against the file's folder", async () => {
    const targets = await loadTargetsFile(await fileWith([good, { ...good, name: "nas", kind: "ssh", port: undefined }]));
    expect(targets).toHaveLength(2);
    expect(targets[0]!.privateKeyPath).toBe(join(dir, "id_ed25519"));
    expect(targets[1]!.port).toBe(22);
  });

  it.each([
    ["not an array", { name: "pve1" }, /must be a JSON array/],
    ["a missing field", [good, { ...good, name: "nas", username: undefined }], /entry 1 \("nas"\): username/],
    ["a bad fingerprint", [{ ...good, hostKeySha256: "md5:aa:bb" }], /entry 0 \("pve1"\): hostKeySha256 must be an OpenSSH fingerprint/],
    ["a bad kind", [{ ...good, kind: "vm" }], /entry 0 \("pve1"\): kind/],
    ["an unknown field", [{ ...good, password: "hunter2" }], /entry 0 \("pve1"\):.*password/],
    ["a duplicate name", [good, good], /entry 1 \("pve1"\): name "pve1" is used twice/],
    ["a missing key file", [{ ...good, privateKeyPath: "/nonexistent/key" }], /privateKeyPath \/nonexistent\/key does not exist/],
    ["a port out of range", [{ ...good, port: 70000 }], /entry 0 \("pve1"\): port/],
  ])("refuses %s, naming the entry and field", async (_what, content, message) => {
    const err = await loadTargetsFile(await fileWith(content)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TargetsFileError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toMatch(/hunter2/);
  });

  it("refuses invalid JSON and a missing file", async () => {
    await expect(loadTargetsFile(await fileWith("[{"))).rejects.toThrow(/is not valid JSON/);
    await expect(loadTargetsFile(join(dir, "absent.json"))).rejects.toThrow(/cannot be read/);
  });
});

describe("TargetRegistry", () => {
  it("syncs file targets, lists them and resolves containers through their node", async () => {
    const fileTargets = await loadTargetsFile(await fileWith([good, { ...good, name: "nas", kind: "ssh" }]));
    const registry = new TargetRegistry({ db: t.db.kysely, fileTargets });
    await registry.sync();
    await registry.sync(); // idempotent
    const rows = await t.db.kysely.selectFrom("targets").select(["name", "kind"]).orderBy("name").execute();
    expect(rows).toEqual([
      { name: "nas", kind: "ssh" },
      { name: "pve1", kind: "proxmox" },
    ]);

    await withActor(t.db.kysely, "system:test", (tx) =>
      targetRegisterContainer(tx, { name: "web1", node: "pve1", vmid: 105, createdBySessionId: null }),
    );
    const byName = await registry.resolve("web1");
    const byAddress = await registry.resolve("pve1/105");
    expect(byName).toMatchObject({
      name: "web1",
      kind: "container",
      node: "pve1",
      vmid: 105,
      ssh: { name: "pve1", port: 2222 },
    });
    expect(byAddress).toEqual(byName);
    // A container nobody registered is still reachable as <node>/<vmid> on a Proxmox node, not on an ssh host.
    expect(await registry.resolve("pve1/106")).toMatchObject({
      name: "pve1/106",
      kind: "container",
      node: "pve1",
      vmid: 106,
      ssh: { name: "pve1" },
    });
    expect(await registry.resolve("nas/106")).toBeUndefined();
    expect(await registry.resolve("nope")).toBeUndefined();
    expect((await registry.list()).map((x) => x.name)).toEqual(["pve1", "nas", "web1"]);

    // A registry whose file no longer names pve1 cannot reach its containers.
    const narrowed = new TargetRegistry({ db: t.db.kysely, fileTargets: fileTargets.filter((f) => f.name === "nas") });
    expect(await narrowed.resolve("web1")).toBeUndefined();
    expect((await narrowed.list()).map((x) => x.name)).toEqual(["nas"]);
  });

  it("refuses a container name that is taken by another kind of target", async () => {
    const err = await withActor(t.db.kysely, "system:test", (tx) =>
      targetRegisterContainer(tx, { name: "nas", node: "pve1", vmid: 107, createdBySessionId: null }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TargetConflictError);
    expect((err as Error).message).toMatch(/"nas" already exists \(ssh\)/);
  });
});

describe("targetSummary", () => {
  it("shows name, kind, node and vmid, never the key path or address", async () => {
    const registry = new TargetRegistry({
      db: t.db.kysely,
      fileTargets: await loadTargetsFile(await fileWith([good])),
    });
    const [info] = await registry.list();
    expect(targetSummary(info!)).toEqual({ name: "pve1", kind: "proxmox", node: null, vmid: null });
  });
});

// The targets file under bad input, property-based: arbitrary bytes, any
// JSON, and good files with one field mutated to something wrong. Invariant:
// loadTargetsFile either returns targets that pass the schema or throws one
// TargetsFileError naming the entry and field; never another error, never a
// half-loaded list; and the message never quotes the file's contents other
// than target names and an unreadable key path (a planted value never
// appears in it otherwise).
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileTargetSchema, loadTargetsFile, TargetsFileError } from "../src/targets/targets-file.js";

const FP = `SHA256:${"A".repeat(43)}`;
const PLANTED = "planted-value-7Qx";
let dir: string;
let n = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "nomos-targets-fuzz-"));
  await writeFile(join(dir, "id_ed25519"), "not a real key, only needs to exist");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const good = {
  name: "pve1",
  host: "127.0.0.1",
  port: 22,
  username: "root",
  privateKeyPath: "id_ed25519",
  hostKeySha256: FP,
  kind: "proxmox",
};
const FIELDS = Object.keys(good) as (keyof typeof good)[];
const wrong = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.integer(),
  fc.boolean(),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.constantFrom(
    "",
    "\0",
    "\ud800",
    "../../etc/shadow",
    "pve1; rm -rf /",
    `${PLANTED}`,
    "x".repeat(300),
    "-oProxyCommand=sh",
    "SHA256:short",
  ),
  fc.array(fc.integer(), { maxLength: 2 }),
);

async function load(content: string | Buffer) {
  const file = join(dir, `t-${++n}.json`);
  await writeFile(file, content);
  return loadTargetsFile(file).then(
    (targets) => ({ ok: true as const, targets }),
    (err: unknown) => ({ ok: false as const, err }),
  );
}

/** `quotedOk`: the key path is named on purpose when it cannot be read (a path, not a secret). */
function check(r: Awaited<ReturnType<typeof load>>, quotedOk = false) {
  if (r.ok) {
    for (const target of r.targets) expect(fileTargetSchema.safeParse(target).success).toBe(true);
    return;
  }
  expect(r.err).toBeInstanceOf(TargetsFileError);
  if (!quotedOk) expect((r.err as Error).message).not.toContain(PLANTED);
}

describe("the targets file under bad input", () => {
  it("arbitrary bytes and any JSON: targets that pass the schema, or one TargetsFileError", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
          fc.jsonValue().map((v) => JSON.stringify(v)),
          fc.string().map((s) => `[{"name": "pve1", "host": "${PLANTED}", ${s}`),
        ),
        async (content) => check(await load(content)),
      ),
      { numRuns: 300 },
    );
  });

  it("a good file with one field made wrong is refused naming the entry and that field", async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: 3 }), fc.constantFrom(...FIELDS), wrong, async (index, field, bad) => {
        const entries = [0, 1, 2, 3].map((i) => ({ ...good, name: `t${i}` }));
        const mutated = { ...entries[index]!, [field]: bad };
        entries[index] = mutated;
        const r = await load(JSON.stringify(entries));
        check(r, field === "privateKeyPath");
        if (!r.ok) expect((r.err as Error).message).toMatch(new RegExp(`entry ${index}\\b`));
        if (!r.ok && field !== "name") expect((r.err as Error).message).toContain(field);
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    `[{"name": "pve1", "host": "127.0.0.1", "hostKeySha256": "${PLANTED}" oops}]`,
    `[{"name": "pve1", "host": ${PLANTED}}]`,
    PLANTED,
  ])("invalid JSON holding a value is refused without quoting it: %s", async (content) => {
    const r = await load(content);
    expect(r.ok).toBe(false);
    expect((r as { err: Error }).err.message).toMatch(/is not valid JSON/);
    expect((r as { err: Error }).err.message).not.toContain(PLANTED);
    expect(String(((r as { err: Error }).err.cause as Error).message)).not.toContain(PLANTED);
  });

  it("invalid JSON (legacy case) is refused without quoting it", async () => {
    const r = await load(`[{"name": "pve1", "host": "127.0.0.1", "hostKeySha256": "${PLANTED}" oops}]`);
    expect(r.ok).toBe(false);
    expect((r as { err: Error }).err.message).toMatch(/is not valid JSON/);
    expect((r as { err: Error }).err.message).not.toContain(PLANTED);
  });
});

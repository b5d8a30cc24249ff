// ssh2 accepts any host key unless told otherwise. This pins, structurally,
// that src/ has exactly one place that opens an SSH connection, and that it
// passes hostVerifier: no other code path can connect unverified.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) =>
      e.isDirectory() ? sourceFiles(join(dir, e.name)) : Promise.resolve(e.name.endsWith(".ts") ? [join(dir, e.name)] : []),
    ),
  );
  return nested.flat();
}

describe("SSH connections in src/", () => {
  it("are opened only by the connection pool, always with hostVerifier", async () => {
    const users: string[] = [];
    for (const file of await sourceFiles("src")) {
      const text = await readFile(file, "utf8");
      if (/from "ssh2"/.test(text) && /\bnew Client\(|\.connect\(\{/.test(text)) users.push(file);
    }
    expect(users).toEqual(["src/ssh/connection-pool.ts"]);
    const pool = await readFile("src/ssh/connection-pool.ts", "utf8");
    expect(pool.match(/client\.connect\(/g)).toHaveLength(1);
    expect(pool).toMatch(
      /client\.connect\(\{[\s\S]*hostVerifier: \(hostKey: Buffer\) => \{[\s\S]*fingerprintsEqual\(presented, endpoint\.hostKeySha256\)/,
    );
    expect(pool).not.toMatch(/agentForward: true|\bagent:/);
  });
});

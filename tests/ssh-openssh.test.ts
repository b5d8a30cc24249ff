// Against a real OpenSSH sshd on loopback: key authentication, host key
// pinning (our fingerprint is the one ssh-keygen prints; a mismatch is
// refused before authentication), the quoting property through the real
// server and a real bash, and timeouts and cancels that really end the
// remote process.
import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/log/logger.js";
import { SshPool } from "../src/ssh/connection-pool.js";
import { HostKeyMismatchError } from "../src/ssh/errors.js";
import { shellQuote } from "../src/ssh/quote.js";
import { makeRedactor } from "../src/ssh/redact.js";
import { buildRemoteCommand } from "../src/ssh/remote-command.js";
import { runCommand } from "../src/ssh/run-command.js";
import { type OpenSshServer, SSHD_PATH, sshdAvailable, startOpenSshServer } from "./helpers/openssh-server.js";

const log = createLogger({ level: "silent" });
const redact = makeRedactor();
const pgrep = (pattern: string) => {
  try {
    return execFileSync("pgrep", ["-f", pattern], { encoding: "utf8" }).trim();
  } catch {
    return ""; // exit 1: no process matched
  }
};

// Skipped only when Debian's openssh-server is not installed (.ci/run installs
// it); the suite's name then says why in the report.
const suiteName = sshdAvailable()
  ? `against OpenSSH (${SSHD_PATH})`
  : `against OpenSSH: skipped because ${SSHD_PATH} is absent (apt-get install -y openssh-server)`;
describe.skipIf(!sshdAvailable())(suiteName, () => {
  let sshd: OpenSshServer;
  let pool: SshPool;
  beforeAll(async () => {
    sshd = await startOpenSshServer();
    pool = new SshPool({ log });
  });
  afterAll(async () => {
    await pool?.stop();
    await sshd?.stop();
  });
  const run = (command: string, timeoutS = 30, signal?: AbortSignal) =>
    runCommand(pool, sshd.endpoint(), { command, timeoutS, outputCapBytes: 64 * 1024, redact, signal });

  it("authenticates with the key and computes the fingerprint ssh-keygen prints", async () => {
    const printed = execFileSync("ssh-keygen", ["-lf", `${sshd.dir}/host_ed25519.pub`], { encoding: "utf8" });
    expect(printed.split(" ")[1]).toBe(sshd.hostKeySha256);
    const r = await run("id -un; echo $0");
    expect(r).toMatchObject({ exitCode: 0, stderr: "" });
    expect(r.stdout).toBe(`${sshd.username}\nbash\n`);
  });

  it("refuses a host key other than the pinned one before authenticating", async () => {
    const accepted = (sshd.log().match(/Accepted publickey/g) ?? []).length;
    const fresh = new SshPool({ log });
    try {
      const wrong = `SHA256:${"B".repeat(43)}`;
      const err = await runCommand(fresh, sshd.endpoint({ name: "spoofed", hostKeySha256: wrong }), {
        command: "true",
        timeoutS: 5,
        outputCapBytes: 1024,
        redact,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HostKeyMismatchError);
      expect((err as HostKeyMismatchError).presented).toBe(sshd.hostKeySha256);
      await new Promise((r) => setTimeout(r, 200));
      expect((sshd.log().match(/Accepted publickey/g) ?? []).length).toBe(accepted);
    } finally {
      await fresh.stop();
    }
  });

  it("quoting: arbitrary strings come back unchanged through sshd and a real shell", async () => {
    const text = fc.string({ unit: "binary", maxLength: 60 }).filter((s) => !s.includes("\0"));
    const nasty = fc.constantFrom("'", '"', "$(id)", "`id`", "\n", "-n", "--", "\\", "$HOME", "!", "*", ";", "|", "é✓🚀", "'\\''", "\t");
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(text, nasty), { maxLength: 6 }).map((p) => p.join("")),
        async (s) => {
          const r = await run(`printf '%s' ${shellQuote(s)}`);
          expect(r.stdout).toBe(redact(s));
          // And the container path, with pct played by a shell function on the host.
          const remote = buildRemoteCommand({ command: `printf '%s' ${shellQuote(s)}`, timeoutS: 30, vmid: 105 });
          const raw = await pool.exec(sshd.endpoint(), `pct() { shift 3; "$@"; }; ${remote} 2>/dev/null`, {
            outputCapBytes: 64 * 1024,
          });
          expect(raw.stdout.result().text).toBe(s);
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);

  it("a timeout really ends the remote process", async () => {
    const r = await run("sleep 4242", 1);
    expect(r).toMatchObject({ timedOut: true, exitCode: 124 });
    await expect.poll(() => pgrep("sleep 4242")).toBe("");
  });

  it("a cancel really ends the remote process", async () => {
    const ac = new AbortController();
    const pending = run("sleep 4343; echo not reached", 60, ac.signal);
    await expect.poll(() => pgrep("^sleep 4343")).not.toBe("");
    ac.abort();
    const r = await pending;
    expect(r.cancelled).toBe(true);
    expect(r.stdout).toBe("");
    await expect.poll(() => pgrep("^sleep 4343")).toBe("");
  });

  it("multiplexes many commands over one connection", async () => {
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => run(`echo ${i}`)));
    expect(results.map((r) => r.stdout)).toEqual(Array.from({ length: 16 }, (_, i) => `${i}\n`));
    expect(pool.size).toBe(1);
  });
});

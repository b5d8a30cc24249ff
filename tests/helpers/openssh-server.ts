// A real OpenSSH sshd (Debian's openssh-server) as a child process on a
// loopback port, with its own config, host key and authorized_keys in a
// temporary folder. Used by the tests that must prove things against the
// real server (key auth, host key pinning, quoting through a real shell,
// timeouts killing the remote process) and by `npm run bench:ssh`.
//
//   const sshd = await startOpenSshServer();   // throws if sshd is absent
//   sshd.endpoint()  // pinned to its host key, with the generated client key
//   await sshd.stop();
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import type { SshEndpoint } from "../../src/ssh/connection-pool.js";
import { sha256Fingerprint } from "../../src/ssh/fingerprint.js";

export const SSHD_PATH = "/usr/sbin/sshd";
export const sshdAvailable = () => existsSync(SSHD_PATH);

export interface OpenSshServer {
  port: number;
  dir: string;
  hostKeySha256: string;
  clientKeyPath: string;
  username: string;
  /** sshd's log (-e), for assertions about what it saw. */
  log(): string;
  endpoint(overrides?: Partial<SshEndpoint>): SshEndpoint;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * As root, commands run as a dedicated user with a stock home: root's own
 * ~/.bashrc on a developer machine (pyenv, nvm...) runs for every command
 * sshd starts (Debian's bash sources it under sshd) and would dominate any
 * measurement. Not root: the current user.
 */
export const SSH_TEST_USER = "nomos-ssh";
function loginUser(): string {
  if (process.getuid?.() !== 0) return userInfo().username;
  try {
    execFileSync("id", [SSH_TEST_USER], { stdio: "ignore" });
  } catch {
    execFileSync("useradd", ["--create-home", "--shell", "/bin/bash", "--password", "*", SSH_TEST_USER], {
      stdio: "ignore",
    });
  }
  return SSH_TEST_USER;
}

export async function startOpenSshServer(): Promise<OpenSshServer> {
  if (!sshdAvailable()) throw new Error(`${SSHD_PATH} is not installed (apt-get install -y openssh-server)`);
  const dir = await mkdtemp(join(tmpdir(), "nomos-sshd-"));
  const username = loginUser();
  const keygen = (file: string) => execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "nomos-test", "-f", file]);
  keygen(join(dir, "host_ed25519"));
  keygen(join(dir, "client_ed25519"));
  await writeFile(join(dir, "authorized_keys"), await readFile(join(dir, "client_ed25519.pub")));
  // sshd reads authorized_keys as the user it logs in. (The user's password
  // is "*": no password login, but not "locked", which sshd would refuse.)
  await chmod(dir, 0o755);
  await chmod(join(dir, "authorized_keys"), 0o644);
  // sshd's privilege separation directory; Debian's package creates it only at boot.
  if (process.getuid?.() === 0) await mkdir("/run/sshd", { recursive: true, mode: 0o755 });
  const port = await freePort();
  await writeFile(
    join(dir, "sshd_config"),
    [
      `ListenAddress 127.0.0.1`,
      `Port ${port}`,
      `HostKey ${join(dir, "host_ed25519")}`,
      `PidFile ${join(dir, "sshd.pid")}`,
      `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
      `AllowUsers ${username}`,
      "PermitRootLogin prohibit-password",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "PubkeyAuthentication yes",
      "UsePAM no",
      "StrictModes no",
      "AllowAgentForwarding no",
      "X11Forwarding no",
      "MaxSessions 20",
      "MaxStartups 100:30:200",
      "LogLevel VERBOSE",
      "",
    ].join("\n"),
  );
  const pub = (await readFile(join(dir, "host_ed25519.pub"), "utf8")).split(" ")[1]!;
  const hostKeySha256 = sha256Fingerprint(Buffer.from(pub, "base64"));

  const child: ChildProcess = spawn(SSHD_PATH, ["-f", join(dir, "sshd_config"), "-D", "-e"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  child.stderr!.on("data", (d: Buffer) => (log += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sshd did not start: ${log}`)), 10_000);
    const check = () => {
      if (log.includes("Server listening")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stderr!.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`sshd exited with ${code}: ${log}`));
    });
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    port,
    dir,
    hostKeySha256,
    clientKeyPath: join(dir, "client_ed25519"),
    username,
    log: () => log,
    endpoint: (overrides = {}) => ({
      name: "sshd",
      host: "127.0.0.1",
      port,
      username,
      privateKeyPath: join(dir, "client_ed25519"),
      hostKeySha256,
      ...overrides,
    }),
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

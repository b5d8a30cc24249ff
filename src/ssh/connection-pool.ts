// SSH connections, one per direct target, shared by every command sent to it
// (ssh2 multiplexes channels over one connection). Invariants:
// - No connection is ever made without hostVerifier comparing the presented
//   key's SHA256 fingerprint with the pinned one; a mismatch is refused
//   during key exchange, before any authentication, and reported through
//   onHostKeyRefused (which records the audit row).
// - Key material is read from privateKeyPath at connect time and handed only
//   to ssh2; it is never logged, returned or stored. Agent forwarding is off.
// - A dropped connection is forgotten at once, so the next command
//   reconnects; a command whose connection dropped fails with
//   SshConnectionLostError (its outcome is unknown), never silently retried.
// - At most maxChannelsPerConnection commands run at once on a connection
//   (OpenSSH's MaxSessions defaults to 10); the rest wait their turn.
import { readFile } from "node:fs/promises";
import { Client, type ClientChannel } from "ssh2";
import type { Logger } from "../log/logger.js";
import { CappedOutput } from "./capped-output.js";
import { HostKeyMismatchError, SshConnectError, SshConnectionLostError } from "./errors.js";
import { fingerprintsEqual, sha256Fingerprint } from "./fingerprint.js";
import type { HostKeyRefusal } from "./host-key-refusals.js";

/** Where and how to open the SSH connection that reaches a target. */
export interface SshEndpoint {
  /** The direct target (node or host) whose connection this is. */
  name: string;
  host: string;
  port: number;
  username: string;
  privateKeyPath: string;
  hostKeySha256: string;
}

export interface SshPoolOptions {
  log: Logger;
  connectTimeoutMs?: number;
  keepaliveIntervalMs?: number;
  maxChannelsPerConnection?: number;
  onHostKeyRefused?: (refusal: HostKeyRefusal) => Promise<void>;
}

export interface RawExecOptions {
  /** Bytes kept per stream (head + tail). */
  outputCapBytes: number;
  /** Closes the channel after this long, whatever the remote side does. */
  hardDeadlineMs?: number;
  signal?: AbortSignal;
  /** Every stderr chunk as it arrives (the runner reads the pid marker from it). */
  onStderr?: (chunk: Buffer) => void;
}

export interface RawExecResult {
  exitCode: number | null;
  signal: string | null;
  stdout: CappedOutput;
  stderr: CappedOutput;
  /** Closed by us: the deadline passed or the signal aborted. */
  closedBy: "deadline" | "abort" | null;
  durationMs: number;
}

interface Pooled {
  client: Client;
  ready: Promise<void>;
  active: number;
  waiters: (() => void)[];
  closed: boolean;
}

export class SshPool {
  readonly #opts: Required<Omit<SshPoolOptions, "onHostKeyRefused">> & Pick<SshPoolOptions, "onHostKeyRefused">;
  readonly #conns = new Map<string, Pooled>();
  #stopped = false;

  constructor(options: SshPoolOptions) {
    this.#opts = {
      connectTimeoutMs: 10_000,
      keepaliveIntervalMs: 15_000,
      maxChannelsPerConnection: 8,
      ...options,
    };
  }

  /** Connections currently open or opening (for tests and health). */
  get size(): number {
    return this.#conns.size;
  }

  /** Runs `command` verbatim on the endpoint and collects capped output. */
  async exec(endpoint: SshEndpoint, command: string, options: RawExecOptions): Promise<RawExecResult> {
    if (this.#stopped) throw new SshConnectError("the SSH pool is stopped");
    const conn = await this.#connection(endpoint);
    await this.#acquire(conn);
    try {
      return await this.#run(endpoint, conn, command, options);
    } finally {
      conn.active--;
      conn.waiters.shift()?.();
    }
  }

  /** Closes every connection; idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    const all = [...this.#conns.values()];
    this.#conns.clear();
    await Promise.all(all.map((c) => this.#end(c)));
  }

  /** Drops the pooled connection to `name` (e.g. after the operator changed its key). */
  async forget(name: string): Promise<void> {
    const c = this.#conns.get(name);
    this.#conns.delete(name);
    if (c) await this.#end(c);
  }

  #end(c: Pooled): Promise<void> {
    if (c.closed) return Promise.resolve();
    return new Promise((resolve) => {
      c.client.once("close", () => resolve());
      c.client.end();
      setTimeout(() => {
        c.client.destroy();
        resolve();
      }, 2000).unref();
    });
  }

  async #acquire(conn: Pooled): Promise<void> {
    while (conn.active >= this.#opts.maxChannelsPerConnection) {
      await new Promise<void>((resolve) => conn.waiters.push(resolve));
    }
    conn.active++;
  }

  async #connection(endpoint: SshEndpoint): Promise<Pooled> {
    const key = endpoint.name;
    const existing = this.#conns.get(key);
    if (existing && !existing.closed) {
      try {
        await existing.ready;
        if (!existing.closed) return existing;
      } catch {
        // Fall through and try again with a new connection.
      }
    }
    const pooled = this.#open(endpoint);
    this.#conns.set(key, pooled);
    try {
      await pooled.ready;
    } catch (err) {
      if (this.#conns.get(key) === pooled) this.#conns.delete(key);
      throw err;
    }
    return pooled;
  }

  #open(endpoint: SshEndpoint): Pooled {
    const client = new Client();
    // Each running command watches the connection's close event.
    client.setMaxListeners(this.#opts.maxChannelsPerConnection + 10);
    const pooled: Pooled = { client, ready: Promise.resolve(), active: 0, waiters: [], closed: false };
    const log = this.#opts.log.child({ target: endpoint.name });
    pooled.ready = (async () => {
      let privateKey: Buffer;
      try {
        privateKey = await readFile(endpoint.privateKeyPath);
      } catch (err) {
        throw new SshConnectError(
          `cannot read the private key for ${endpoint.name} at ${endpoint.privateKeyPath}: ${(err as NodeJS.ErrnoException).code ?? "error"}`,
          { cause: err },
        );
      }
      let mismatch: HostKeyMismatchError | undefined;
      await new Promise<void>((resolve, reject) => {
        const onError = (err: Error) => {
          cleanup();
          if (mismatch) reject(mismatch);
          else
            reject(
              new SshConnectError(
                `cannot connect to ${endpoint.name} (${endpoint.username}@${endpoint.host}:${endpoint.port}): ${err.message}`,
                { cause: err },
              ),
            );
        };
        const onReady = () => {
          cleanup();
          resolve();
        };
        const onClose = () => onError(new Error("connection closed during the handshake"));
        const cleanup = () => {
          client.off("error", onError);
          client.off("ready", onReady);
          client.off("close", onClose);
        };
        client.on("error", onError);
        client.on("ready", onReady);
        client.on("close", onClose);
        client.connect({
          host: endpoint.host,
          port: endpoint.port,
          username: endpoint.username,
          privateKey,
          agentForward: false,
          readyTimeout: this.#opts.connectTimeoutMs,
          keepaliveInterval: this.#opts.keepaliveIntervalMs,
          keepaliveCountMax: 3,
          // The only host check, on every path: compare the pinned fingerprint.
          hostVerifier: (hostKey: Buffer) => {
            const presented = sha256Fingerprint(hostKey);
            if (fingerprintsEqual(presented, endpoint.hostKeySha256)) return true;
            mismatch = new HostKeyMismatchError(endpoint.name, endpoint.hostKeySha256, presented);
            log.warn({ expected: endpoint.hostKeySha256, presented }, "host key mismatch: connection refused");
            void this.#opts
              .onHostKeyRefused?.({
                target: endpoint.name,
                host: endpoint.host,
                port: endpoint.port,
                expectedSha256: endpoint.hostKeySha256,
                presentedSha256: presented,
              })
              .catch((err: unknown) => log.error({ err }, "could not record the host key refusal"));
            return false;
          },
        });
        // Small request/response packets: without this, Nagle's algorithm and
        // delayed ACKs add ~40 ms to every command after the first.
        client.setNoDelay(true);
      });
      client.on("error", (err) => log.warn({ err: err.message }, "ssh connection error"));
      client.on("close", () => {
        pooled.closed = true;
        if (this.#conns.get(endpoint.name) === pooled) this.#conns.delete(endpoint.name);
        log.debug("ssh connection closed");
      });
      log.debug("ssh connection ready");
    })();
    pooled.ready.catch(() => {
      pooled.closed = true;
      // ssh2 may still emit "error" after a failed handshake (the socket of a
      // host that timed out closes later): without a listener that would be
      // an uncaught exception and take the whole service down.
      client.on("error", (err) => log.debug({ err: err.message }, "ssh error after a failed connect"));
      client.destroy();
    });
    return pooled;
  }

  #run(endpoint: SshEndpoint, conn: Pooled, command: string, options: RawExecOptions): Promise<RawExecResult> {
    const started = performance.now();
    const stdout = new CappedOutput(options.outputCapBytes);
    const stderr = new CappedOutput(options.outputCapBytes);
    return new Promise<RawExecResult>((resolve, reject) => {
      let channel: ClientChannel | undefined;
      let exitCode: number | null = null;
      let exitSignal: string | null = null;
      let sawExit = false;
      let closedBy: RawExecResult["closedBy"] = null;
      let settled = false;
      const onAbort = () => {
        closedBy ??= "abort";
        channel?.close();
      };
      const deadline =
        options.hardDeadlineMs === undefined
          ? undefined
          : setTimeout(() => {
              closedBy ??= "deadline";
              channel?.close();
            }, options.hardDeadlineMs);
      const onConnClose = () =>
        finish(
          new SshConnectionLostError(`the connection to ${endpoint.name} dropped while the command ran; it may or may not have completed`),
        );
      conn.client.once("close", onConnClose);
      const finish = (err?: Error) => {
        if (settled) return;
        settled = true;
        if (deadline) clearTimeout(deadline);
        options.signal?.removeEventListener("abort", onAbort);
        conn.client.off("close", onConnClose);
        if (err) {
          reject(err);
          return;
        }
        resolve({ exitCode, signal: exitSignal, stdout, stderr, closedBy, durationMs: performance.now() - started });
      };
      if (options.signal?.aborted) {
        closedBy = "abort";
        finish();
        return;
      }
      options.signal?.addEventListener("abort", onAbort, { once: true });
      try {
        conn.client.exec(command, (err, ch) => {
          if (err) {
            finish(new SshConnectError(`cannot open a channel on ${endpoint.name}: ${err.message}`, { cause: err }));
            return;
          }
          channel = ch;
          if (closedBy) ch.close();
          ch.on("data", (d: Buffer) => stdout.push(d));
          ch.stderr.on("data", (d: Buffer) => {
            stderr.push(d);
            options.onStderr?.(d);
          });
          ch.on("exit", (code: number | null, signal?: string) => {
            sawExit = true;
            exitCode = typeof code === "number" ? code : null;
            exitSignal = signal ?? null;
          });
          ch.on("close", () => {
            // Closed without an exit status and not by us: the connection went away.
            if (!sawExit && !closedBy) onConnClose();
            else finish();
          });
        });
      } catch (err) {
        finish(new SshConnectError(`cannot run a command on ${endpoint.name}: ${(err as Error).message}`, { cause: err }));
      }
    });
  }
}

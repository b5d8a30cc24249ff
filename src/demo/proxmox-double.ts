// An SSH server double (ssh2's Server on loopback) that plays a Proxmox node,
// `pve1` by default, and its containers. It speaks real SSH: the client must
// authenticate with the generated key and pin the generated host key. Used
// by the tests (tests/helpers/ssh-test-host.ts re-exports it) and by
// `npm run demo`, which is why it lives in src/. It never runs what it is
// sent on the machine: every command is interpreted by the handlers below.
//
// What it understands:
// - the runner's wrapper (`printf 'nomos-pid:%s\n' "$$" >&2; exec timeout -k
//   K T bash -c '<cmd>'`), emulating `timeout` (exit 124) and the pid line;
// - `pct exec N -- bash -c '<...>'` / `bash -lc`, dispatching the inner
//   command with `vmid = N`;
// - Proxmox commands on its own state: `pvesh get /cluster/nextid`,
//   `pct create|start|stop|status|destroy|list|set|config`, and snapshots
//   (guest-snapshots.ts): `pct|qm snapshot|listsnapshot|rollback|delsnapshot`
//   with real state (a rollback restores the guest's files and options),
//   refused on a storage that cannot snapshot (`dir`, like Proxmox's `local`);
// - inside a container, a tiny filesystem: `echo ... > file`, `cat file`;
// - `kill -TERM <pid>` of a running command (exit 143), `sleep N`, `true`,
//   `false`, `exit N`, `echo`, `hostname`.
// Scriptable: `host.handle(match, handler)` puts a handler in front of the
// built-ins (latest first), so a test can make `apt-get install` fail, a
// command slow, print 50 MB, or drop the connection mid-command. Every
// command it receives is recorded in `host.log`.
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ssh2, { type Connection, type ParsedKey, type ServerChannel } from "ssh2";
import { parseShell } from "../risk/shell-words.js";
import type { SshEndpoint } from "../ssh/connection-pool.js";
import { sha256Fingerprint } from "../ssh/fingerprint.js";
import { type GuestSnapshotState, guestSnapshotCommand } from "./guest-snapshots.js";

export interface Container {
  vmid: number;
  hostname: string;
  status: "stopped" | "running";
  ostemplate: string;
  options: Record<string, string>;
  /** Files written inside it (`echo ... > path`), for snapshot and rollback tests. */
  files?: Map<string, string>;
  /** Its snapshots, by name (guest-snapshots.ts). */
  snapshots?: Map<string, GuestSnapshotState>;
}

export interface CommandContext {
  /** The innermost command, as the target's shell would see it. */
  command: string;
  /** Set when the command runs inside a container (`pct exec N`). */
  vmid: number | null;
  /** The timeout the wrapper asked for, if any. */
  timeoutS: number | null;
  node: string;
  host: SshTestHost;
  out(text: string | Buffer): void;
  err(text: string | Buffer): void;
  /** Aborted when the command is killed (timeout, `kill`) or its channel closes. */
  signal: AbortSignal;
  /** Cuts the TCP connection abruptly, as a crashed network would. */
  dropConnection(): void;
  /** Resolves after `ms`, or rejects when the command is killed. */
  sleep(ms: number): Promise<void>;
}

/** Returns the exit code (default 0). */
export type CommandHandler = (ctx: CommandContext, match: RegExpExecArray | null) => number | void | Promise<number | void>;
type Matcher = RegExp | string | ((command: string, vmid: number | null) => boolean);

export interface SshTestHostOptions {
  nodeName?: string;
  /** OpenSSH-format private host key; generated when absent. */
  hostKey?: string;
}

export interface LoggedCommand {
  raw: string;
  command: string;
  vmid: number | null;
}

// ssh2 is CommonJS: Node's ESM loader (tsx, `npm run demo`) finds only some
// of its named exports statically (Client, not Server or utils), so these
// come from the default export; under vitest both forms work.
const { Server, utils } = ssh2;
type Server = InstanceType<typeof Server>;

class Killed extends Error {}

export class SshTestHost {
  readonly node: string;
  readonly containers = new Map<number, Container>();
  /** QEMU VMs (qm), same shape; a test adds them. */
  readonly vms = new Map<number, Container>();
  /** Storages that cannot snapshot (a `dir` storage, as Proxmox's `local` is): snapshots of guests on them are refused. */
  readonly snapshotlessStorages = new Set<string>(["local"]);
  readonly log: LoggedCommand[] = [];
  /** Every `kill` of a running command: its pid, the signal sent and the command it ended (a Stop test checks the remote process was killed). */
  readonly kills: { pid: number; signal: string; command: string }[] = [];
  /** Authentication attempts seen (a refused host key must leave this at 0). */
  authAttempts = 0;
  connections = 0;
  port = 0;
  hostKeySha256 = "";
  clientKeyPath = "";

  #server: Server | undefined;
  #dir = "";
  #handlers: { match: Matcher; handler: CommandHandler }[] = [];
  #running = new Map<number, AbortController>();
  #commands = new Map<number, string>();
  #nextPid = 4000;
  #clients = new Set<Connection>();

  private constructor(node: string) {
    this.node = node;
  }

  static async start(options: SshTestHostOptions = {}): Promise<SshTestHost> {
    const host = new SshTestHost(options.nodeName ?? "pve1");
    await host.#listen(options);
    return host;
  }

  /** Connection details for the pool, pinned to this host's key. */
  endpoint(overrides: Partial<SshEndpoint> = {}): SshEndpoint {
    return {
      name: this.node,
      host: "127.0.0.1",
      port: this.port,
      username: "root",
      privateKeyPath: this.clientKeyPath,
      hostKeySha256: this.hostKeySha256,
      ...overrides,
    };
  }

  /** Targets-file entry for this node. */
  targetsFileEntry() {
    const e = this.endpoint();
    return {
      name: e.name,
      host: e.host,
      port: e.port,
      username: e.username,
      privateKeyPath: e.privateKeyPath,
      hostKeySha256: e.hostKeySha256,
      kind: "proxmox" as const,
    };
  }

  /** Puts a handler in front of the others; string matchers match the whole command. */
  handle(match: Matcher, handler: CommandHandler): this {
    this.#handlers.unshift({ match, handler });
    return this;
  }

  /** Removes the handlers added with handle(). */
  resetHandlers(): void {
    this.#handlers = [];
  }

  /** Client connections open now (a test can check none leaked). */
  get clientCount(): number {
    return this.#clients.size;
  }

  /** Commands running now. */
  get running(): number {
    return this.#running.size;
  }

  /** Cuts every client connection abruptly. */
  dropAll(): void {
    for (const c of this.#clients) destroySocket(c);
  }

  async stop(): Promise<void> {
    for (const ctl of this.#running.values()) ctl.abort();
    for (const c of this.#clients) c.end();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
    await rm(this.#dir, { recursive: true, force: true });
  }

  async #listen(options: SshTestHostOptions): Promise<void> {
    this.#dir = await mkdtemp(join(tmpdir(), "nomos-ssh-host-"));
    const hostKey = options.hostKey ?? generateOpenSshKey();
    const parsedHost = parse(hostKey);
    this.hostKeySha256 = sha256Fingerprint(parsedHost.getPublicSSH());
    const clientKey = generateOpenSshKey();
    const clientPublic = parse(clientKey);
    this.clientKeyPath = join(this.#dir, "id_ed25519");
    await writeFile(this.clientKeyPath, clientKey);
    await chmod(this.clientKeyPath, 0o600);

    this.#server = new Server({ hostKeys: [hostKey] }, (client) => {
      this.connections++;
      this.#clients.add(client);
      client.on("close", () => this.#clients.delete(client));
      client.on("error", () => {});
      client.on("authentication", (ctx) => {
        this.authAttempts++;
        if (ctx.method !== "publickey" || ctx.username !== "root") return ctx.reject(["publickey"]);
        const ok =
          ctx.key.algo === clientPublic.type &&
          ctx.key.data.equals(clientPublic.getPublicSSH()) &&
          (!ctx.signature || clientPublic.verify(ctx.blob as Buffer, ctx.signature, ctx.hashAlgo) === true);
        return ok ? ctx.accept() : ctx.reject(["publickey"]);
      });
      client.on("ready", () => {
        client.on("session", (acceptSession) => {
          const session = acceptSession();
          session.on("exec", (accept, _reject, info) => {
            const channel = accept();
            void this.#exec(client, channel, info.command);
          });
        });
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, "127.0.0.1", () => resolve()));
    this.port = (this.#server.address() as { port: number }).port;
  }

  async #exec(client: Connection, channel: ServerChannel, raw: string): Promise<void> {
    const unwrapped = unwrap(raw);
    this.log.push({ raw, command: unwrapped.command, vmid: unwrapped.vmid });
    const ctl = new AbortController();
    let pid: number | undefined;
    if (unwrapped.pidMarker) {
      pid = this.#nextPid++;
      this.#running.set(pid, ctl);
      this.#commands.set(pid, unwrapped.command);
      channel.stderr.write(`nomos-pid:${pid}\n`);
    }
    channel.on("close", () => ctl.abort());
    const open = () => !(channel as unknown as { destroyed?: boolean }).destroyed;
    const ctx: CommandContext = {
      command: unwrapped.command,
      vmid: unwrapped.vmid,
      timeoutS: unwrapped.timeoutS,
      node: this.node,
      host: this,
      out: (t) => {
        if (open()) channel.write(t);
      },
      err: (t) => {
        if (open()) channel.stderr.write(t);
      },
      signal: ctl.signal,
      dropConnection: () => destroySocket(client),
      sleep: (ms) =>
        new Promise<void>((resolve, reject) => {
          if (ctl.signal.aborted) return reject(new Killed());
          const timer = setTimeout(resolve, ms);
          ctl.signal.addEventListener(
            "abort",
            () => {
              clearTimeout(timer);
              reject(new Killed());
            },
            { once: true },
          );
        }),
    };
    let timedOut = false;
    const timer =
      unwrapped.timeoutS === null
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            ctl.abort();
          }, unwrapped.timeoutS * 1000);
    let code: number;
    try {
      code = (await this.#dispatch(ctx)) ?? 0;
    } catch (err) {
      if (err instanceof Killed || ctl.signal.aborted) code = timedOut ? 124 : 143;
      else {
        ctx.err(`double: ${(err as Error).message}\n`);
        code = 1;
      }
    } finally {
      if (timer) clearTimeout(timer);
      if (pid !== undefined) {
        this.#running.delete(pid);
        this.#commands.delete(pid);
      }
    }
    if (ctl.signal.aborted && !timedOut && code === 0) code = 143;
    if (open()) {
      try {
        channel.exit(code);
        channel.end();
      } catch {
        // The client went away.
      }
    }
  }

  async #dispatch(ctx: CommandContext): Promise<number | void> {
    for (const { match, handler } of this.#handlers) {
      const m = matches(match, ctx.command, ctx.vmid);
      if (m) return handler(ctx, m === true ? null : m);
    }
    return this.#builtin(ctx);
  }

  async #builtin(ctx: CommandContext): Promise<number | void> {
    let words: string[];
    try {
      words = parseShell(ctx.command).commands[0]?.words.map((w) => w.text) ?? [];
    } catch {
      ctx.err("bash: syntax error\n");
      return 2;
    }
    const [name, ...args] = words;
    const n = (s: string | undefined) => Number(s);
    switch (name) {
      case undefined:
      case "true":
        return 0;
      case "false":
        return 1;
      case "exit":
        return n(args[0] ?? "0");
      case "echo": {
        const redirect = parsedRedirect(ctx.command);
        const ct = ctx.vmid === null ? undefined : this.containers.get(ctx.vmid);
        if (redirect && ct) {
          ct.files ??= new Map();
          const before = redirect.append ? (ct.files.get(redirect.path) ?? "") : "";
          ct.files.set(redirect.path, `${before}${args.join(" ")}\n`);
          return 0;
        }
        ctx.out(`${args.join(" ")}\n`);
        return 0;
      }
      case "cat": {
        const ct = ctx.vmid === null ? undefined : this.containers.get(ctx.vmid);
        const text = ct?.files?.get(args[0] ?? "");
        if (text === undefined) {
          ctx.err(`cat: ${args[0] ?? ""}: No such file or directory\n`);
          return 1;
        }
        ctx.out(text);
        return 0;
      }
      case "qm":
        if (ctx.vmid === null) return guestSnapshotCommand(ctx, this, "qemu", args) ?? this.#unknown(ctx, "qm", args[0]);
        break;
      case "hostname":
        ctx.out(`${ctx.vmid === null ? this.node : (this.containers.get(ctx.vmid)?.hostname ?? "localhost")}\n`);
        return 0;
      case "sleep":
        await ctx.sleep(n(args[0]) * 1000);
        return 0;
      case "kill": {
        const pid = n(args[args.length - 1]);
        const target = this.#running.get(pid);
        if (!target) {
          ctx.err(`kill: (${args[args.length - 1]}) - No such process\n`);
          return 1;
        }
        const flag = args.length > 1 ? args[0]! : "-TERM";
        this.kills.push({ pid, signal: flag.replace(/^-(SIG)?/, ""), command: this.#commands.get(pid) ?? "" });
        target.abort();
        return 0;
      }
      case "pvesh":
        if (args[0] === "get" && args[1] === "/cluster/nextid") {
          let id = 100;
          while (this.containers.has(id)) id++;
          ctx.out(`${id}\n`);
          return 0;
        }
        break;
      case "pct":
        if (ctx.vmid === null) return this.#pct(ctx, args);
        break;
    }
    ctx.err(`bash: line 1: ${name}: command not found\n`);
    return 127;
  }

  #unknown(ctx: CommandContext, tool: string, sub: string | undefined): number {
    ctx.err(`${tool}: unknown command '${sub ?? ""}'\n`);
    return 255;
  }

  #pct(ctx: CommandContext, args: string[]): number {
    const snapshot = guestSnapshotCommand(ctx, this, "lxc", args);
    if (snapshot !== undefined) return snapshot;
    const [sub, idText, ...rest] = args;
    const vmid = Number(idText);
    const ct = this.containers.get(vmid);
    const missing = () => {
      ctx.err(`Configuration file 'nodes/${this.node}/lxc/${idText}.conf' does not exist\n`);
      return 255;
    };
    switch (sub) {
      case "list":
        ctx.out("VMID       Status     Lock         Name\n");
        for (const c of this.containers.values()) ctx.out(`${c.vmid}        ${c.status}                 ${c.hostname}\n`);
        return 0;
      case "create": {
        if (ct) {
          ctx.err(`unable to create CT ${vmid} - CT ${vmid} already exists on node '${this.node}'\n`);
          return 255;
        }
        const options: Record<string, string> = {};
        for (let i = 1; i < rest.length; i += 2) options[rest[i]!.replace(/^--?/, "")] = rest[i + 1] ?? "";
        this.containers.set(vmid, {
          vmid,
          hostname: options.hostname ?? `CT${vmid}`,
          status: "stopped",
          ostemplate: rest[0] ?? "",
          options,
        });
        ctx.out(`extracting archive '${rest[0]}'\nCreating SSH host keys\n`);
        return 0;
      }
      case "start":
        if (!ct) return missing();
        ct.status = "running";
        return 0;
      case "stop":
      case "shutdown":
        if (!ct) return missing();
        ct.status = "stopped";
        return 0;
      case "status":
        if (!ct) return missing();
        ctx.out(`status: ${ct.status}\n`);
        return 0;
      case "destroy":
        if (!ct) return missing();
        this.containers.delete(vmid);
        return 0;
      case "set":
        if (!ct) return missing();
        for (let i = 0; i < rest.length; i += 2) ct.options[rest[i]!.replace(/^--?/, "")] = rest[i + 1] ?? "";
        return 0;
      case "config":
        if (!ct) return missing();
        for (const [k, v] of Object.entries({ hostname: ct.hostname, ...ct.options })) ctx.out(`${k}: ${v}\n`);
        return 0;
    }
    ctx.err(`pct: unknown command '${sub}'\n`);
    return 255;
  }
}

/** The file an `echo` writes to (`> path` or `>> path`), if any. */
function parsedRedirect(command: string): { path: string; append: boolean } | undefined {
  try {
    const r = parseShell(command).commands[0]?.redirects.find((x) => x.op === ">" || x.op === ">>");
    return r ? { path: r.target.text, append: r.op === ">>" } : undefined;
  } catch {
    return undefined;
  }
}

function matches(match: Matcher, command: string, vmid: number | null): RegExpExecArray | true | null {
  if (typeof match === "string") return match === command ? true : null;
  if (match instanceof RegExp) return match.exec(command);
  return match(command, vmid) ? true : null;
}

interface Unwrapped {
  command: string;
  vmid: number | null;
  timeoutS: number | null;
  pidMarker: boolean;
}

/** Peels the runner's layers off a command: pct exec, the pid line, timeout, bash -c. */
export function unwrap(raw: string): Unwrapped {
  const result: Unwrapped = { command: raw, vmid: null, timeoutS: null, pidMarker: false };
  let text = raw;
  for (let depth = 0; depth < 4; depth++) {
    let parsed: ReturnType<typeof parseShell>;
    try {
      parsed = parseShell(text);
    } catch {
      break;
    }
    const cmds = parsed.commands.map((c) => c.words.map((w) => w.text));
    let words = cmds[0] ?? [];
    if (cmds.length === 2 && words[0] === "printf" && (words[1] ?? "").startsWith("nomos-pid:")) {
      result.pidMarker = true;
      words = cmds[1]!;
    } else if (cmds.length !== 1) break;
    if (words[0] === "exec") words = words.slice(1);
    if (words[0] === "timeout") {
      let i = 1;
      while (words[i]?.startsWith("-")) i += words[i] === "-k" || words[i] === "-s" ? 2 : 1;
      result.timeoutS = Number(words[i]);
      words = words.slice(i + 1);
    }
    if (words[0] === "pct" && words[1] === "exec") {
      result.vmid = Number(words[2]);
      const dd = words.indexOf("--");
      words = words.slice(dd + 1);
      if (!(words[0] === "bash" && (words[1] === "-c" || words[1] === "-lc"))) {
        result.command = words.join(" ");
        return result;
      }
    }
    if (words[0] === "bash" && (words[1] === "-c" || words[1] === "-lc") && words.length === 3) {
      text = words[2]!;
      result.command = text;
      continue;
    }
    break;
  }
  return result;
}

function parse(key: string): ParsedKey {
  const parsed = utils.parseKey(key);
  if (parsed instanceof Error) throw parsed;
  return Array.isArray(parsed) ? parsed[0]! : parsed;
}

function generateOpenSshKey(): string {
  // ssh2 1.17's own generator writes an ed25519 key its own parser refuses
  // ("Malformed OpenSSH private key") about 4 times in 1,000 (18 of 5,000
  // measured here), which made any test that starts a host fail at random.
  // Generate until the key reads back.
  for (;;) {
    const key = utils.generateKeyPairSync("ed25519").private;
    if (!(utils.parseKey(key) instanceof Error)) return key;
  }
}

/** ssh2's server connection keeps its socket private; a test double may reach for it. */
function destroySocket(client: Connection): void {
  (client as unknown as { _sock?: { destroy(): void } })._sock?.destroy();
}

// A TCP relay on loopback in front of the test PostgreSQL, for tests that
// need the network to fail on cue: cut every connection at once, or refuse
// new ones for a while (what a client sees while a server restarts).
//
//   const proxy = await PgProxy.start(t.url);
//   const db = connect(proxy.url);
//   proxy.cutAll();            // every open connection drops, as on a reset
//   proxy.refuse(true);        // new connections are closed on accept
//
// Invariant: it relays bytes unchanged and never holds one back; close()
// leaves no socket open.
import { createConnection, createServer, type Server, type Socket } from "node:net";

export class PgProxy {
  private refusing = false;
  private readonly open = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    /** The database URL with its host and port replaced by the proxy's. */
    readonly url: string,
  ) {}

  static async start(databaseUrl: string): Promise<PgProxy> {
    const target = new URL(databaseUrl);
    const targetPort = Number(target.port || 5432);
    const server = createServer();
    const proxy = await new Promise<PgProxy>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        const address = server.address();
        if (typeof address !== "object" || !address) return reject(new Error("the proxy got no port"));
        const url = new URL(databaseUrl);
        url.hostname = "127.0.0.1";
        url.port = String(address.port);
        resolve(new PgProxy(server, url.toString()));
      });
    });
    server.on("connection", (client) => proxy.relay(client, target.hostname, targetPort));
    return proxy;
  }

  /** Drop every relayed connection at once (both sides reset). */
  cutAll(): void {
    for (const socket of this.open) socket.resetAndDestroy();
    this.open.clear();
  }

  /** While on, a new connection is closed as soon as it is accepted. */
  refuse(on: boolean): void {
    this.refusing = on;
  }

  async close(): Promise<void> {
    this.cutAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private relay(client: Socket, host: string, port: number): void {
    if (this.refusing) {
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection({ host, port });
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.open.add(from);
      from.setNoDelay(true);
      from.pipe(to);
      from.on("error", () => to.destroy());
      from.on("close", () => {
        this.open.delete(from);
        to.destroy();
      });
    }
  }
}

import { mkdtemp, chmod } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql as ksql } from "kysely";
import { connect } from "../src/db/connect.js";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { createLogger } from "../src/log/logger.js";

const log = createLogger({ level: "silent" });
const dir = await mkdtemp(join(tmpdir(), "stress-")); await chmod(dir, 0o755);
let pg = await startEmbeddedPostgres({ dataDir: join(dir, "d"), log });
const port = Number(new URL(pg.url).port);
const db = connect(pg.url, { max: 10 });
let uncaught = 0; process.on("uncaughtException", (e) => { uncaught++; if (!/reading 'write'/.test(e.message)) console.log("uncaught", e); });
const pending = new Map<number, { kind: string; since: number }>();
let nextId = 0, done = 0, failed = 0;
async function op(kind: string, f: () => Promise<unknown>) {
  const id = nextId++; pending.set(id, { kind, since: Date.now() });
  try { await f(); done++; } catch { failed++; } finally { pending.delete(id); }
}
let running = true;
const workers = Array.from({ length: 24 }, async (_, w) => {
  while (running) {
    const r = (w + nextId) % 3;
    if (r === 0) await op("kysely-tx", () => db.kysely.transaction().execute(async (t) => { await ksql`select pg_sleep(0.01)`.execute(t); await ksql`select 1`.execute(t); }));
    else if (r === 1) await op("kysely", () => ksql`select pg_sleep(0.01)`.execute(db.kysely));
    else await op("postgresjs", () => db.sql`select pg_sleep(0.01)`);
    await new Promise((res) => setTimeout(res, 5));
  }
});
const rounds = Number(process.argv[2] ?? 5);
for (let i = 0; i < rounds; i++) {
  await new Promise((r) => setTimeout(r, 2000));
  await pg.stop();
  await new Promise((r) => setTimeout(r, 1500));
  pg = await startEmbeddedPostgres({ dataDir: join(dir, "d"), log, port });
  await new Promise((r) => setTimeout(r, 20000));
  const stuck = [...pending.values()].filter((p) => Date.now() - p.since > 15000);
  console.log(`round ${i + 1}: done ${done} failed ${failed} uncaught ${uncaught} stuck>15s ${stuck.length} ${JSON.stringify(stuck.map((s) => s.kind))}`);
}
running = false;
await Promise.race([Promise.all(workers), new Promise((r) => setTimeout(r, 5000))]);
await db.close().catch(() => {}); await pg.stop(); process.exit(0);

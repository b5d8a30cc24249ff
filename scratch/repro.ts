import net from "node:net";
import postgres from "postgres";
import { Kysely, sql as ksql } from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";

const URL_ = "postgres://postgres@127.0.0.1:5432/postgres";
const admin = postgres(URL_, { max: 1, onnotice: () => {} });
const timeout = <T>(p: Promise<T>, ms: number) => Promise.race([p.then((v) => ({ ok: v }), (e) => ({ err: String(e?.code ?? e) })), new Promise((r) => setTimeout(() => r("HANG"), ms))]);
process.on("uncaughtException", (e) => console.log("uncaught:", e.message));

// (a) write buffered when the socket closes
{
  let sock: net.Socket | undefined;
  const sql = postgres(URL_, { max: 1, connect_timeout: 3, onnotice: () => {}, socket: () => new Promise<net.Socket>((res) => { const s = net.connect(5432, "127.0.0.1"); s.once("connect", () => { sock = s; res(s); }); }) });
  await sql`select 1`;
  const q = sql`select 2`.execute();
  sock!.destroy();
  console.log("a: in-flight", await timeout(q, 2000));
  console.log("a: next query", await timeout(sql`select 3 as x`, 8000));
  await sql.end({ timeout: 0 });
}
// (b) kysely: backend killed between two statements of a transaction
{
  const sql = postgres(URL_, { max: 2, connect_timeout: 3, onnotice: () => {}, connection: { application_name: "repro-b" } });
  const k = new Kysely<any>({ dialect: new PostgresJSDialect({ postgres: sql }) });
  const tx = k.transaction().execute(async (trx) => {
    await ksql`select 1`.execute(trx);
    await admin`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'repro-b' and pid <> pg_backend_pid()`;
    await new Promise((r) => setTimeout(r, 200));
    await ksql`select 2`.execute(trx);
  });
  console.log("b: transaction", await timeout(tx, 5000));
  for (let i = 0; i < 4; i++) console.log(`b: later query ${i}`, await timeout(ksql`select ${i}::int as x`.execute(k), 5000));
  await sql.end({ timeout: 0 });
}
await admin.end();

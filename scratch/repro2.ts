import postgres from "postgres";
import { Kysely, sql as ksql } from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";

const URL_ = "postgres://postgres@127.0.0.1:5432/postgres";
const admin = postgres(URL_, { max: 1, onnotice: () => {} });
const timeout = <T>(p: Promise<T>, ms: number) => Promise.race([p.then((v) => "ok", (e) => ({ err: String(e?.code ?? e) })), new Promise((r) => setTimeout(() => r("HANG"), ms))]);
let uncaught = 0;
process.on("uncaughtException", (e) => { uncaught++; });
const max = Number(process.argv[2] ?? 1);
const sql = postgres(URL_, { max, connect_timeout: 3, onnotice: () => {}, connection: { application_name: "repro-c" } });
const k = new Kysely<any>({ dialect: new PostgresJSDialect({ postgres: sql }) });
const kill = () => admin`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'repro-c'`;
// in-flight statements inside transactions and outside, killed mid-way
const work = [] as Promise<unknown>[];
for (let i = 0; i < 6; i++) {
  work.push(timeout(k.transaction().execute(async (trx) => { await ksql`select pg_sleep(0.3)`.execute(trx); await ksql`select 1`.execute(trx); }), 6000));
  work.push(timeout(ksql`select pg_sleep(0.3)`.execute(k), 6000));
  work.push(timeout(sql`select pg_sleep(0.3)`, 6000));
}
await new Promise((r) => setTimeout(r, 100));
await kill();
console.log("in flight:", JSON.stringify(await Promise.all(work)));
const after = [] as Promise<unknown>[];
for (let i = 0; i < 6; i++) { after.push(timeout(ksql`select 1`.execute(k), 8000)); after.push(timeout(sql`select 1`, 8000)); after.push(timeout(k.transaction().execute((t) => ksql`select 1`.execute(t)), 8000)); }
console.log("after:", JSON.stringify(await Promise.all(after)), "uncaught", uncaught);
await sql.end({ timeout: 0 }); await admin.end();

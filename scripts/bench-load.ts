// npm run bench:load — the load scenario at full length: 200 sessions whose
// executions finish at random moments for 60 s, the real service as two
// processes on one database (tests/helpers/load-scenario.ts). Prints the
// checks (exactly-once, no overlapping turns, nothing pending) and the
// numbers (dispatch latency p50/p99, memory of both processes) as Markdown
// for docs/reliability.md. Environment: LOAD_SESSIONS, LOAD_SECONDS,
// LOAD_PER_SESSION.
import os from "node:os";
import { runLoad } from "../tests/helpers/load-scenario.js";
import { withBenchDatabase } from "./lib/bench-database.js";

const sessions = Number(process.env.LOAD_SESSIONS ?? 200);
const seconds = Number(process.env.LOAD_SECONDS ?? 60);
const perSession = Number(process.env.LOAD_PER_SESSION ?? 6);

const r = await withBenchDatabase((db, url) => runLoad(db, url, { sessions, seconds, perSession, drainSeconds: 60 }));
const ok = r.notDeliveredOnce.length === 0 && r.overlapping.length === 0 && r.pendingAtEnd === 0 && r.continued === r.executions;
console.log(`## bench:load (${os.cpus().length} cores, ${sessions} sessions, ${r.executions} executions over ${seconds} s, 2 processes)\n`);
console.log("| measure | value |\n|---|---|");
console.log(`| executions finished / continued | ${r.executions} / ${r.continued} |`);
console.log(`| continued other than exactly once | ${r.notDeliveredOnce.length} |`);
console.log(`| sessions with overlapping turns | ${r.overlapping.length} |`);
console.log(`| left pending at the end | ${r.pendingAtEnd} |`);
console.log(`| turns (not completed) | ${r.turns} (${r.turnsNotCompleted}) |`);
console.log(`| turns per process | ${Object.values(r.byProcess).join(" / ")} |`);
console.log(
  `| dispatch latency (commit → turn queued) p50 / p99 / max | ${r.dispatchMs.p50} / ${r.dispatchMs.p99} / ${r.dispatchMs.max} ms |`,
);
console.log(`| commit → agent running the turn p50 / p99 / max | ${r.toAgentMs.p50} / ${r.toAgentMs.p99} / ${r.toAgentMs.max} ms |`);
console.log(`| RSS per process, start → end | ${r.rssMb.start.map((s, i) => `${s} → ${r.rssMb.end[i]} MB`).join(", ")} |`);
console.log(`| wall time | ${r.wallSeconds} s |`);
if (!ok) {
  console.error(
    "FAILED: a guarantee did not hold",
    JSON.stringify({ notDeliveredOnce: r.notDeliveredOnce.slice(0, 10), overlapping: r.overlapping.slice(0, 10) }),
  );
  process.exit(1);
}

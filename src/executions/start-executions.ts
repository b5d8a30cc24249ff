// Starts the executions side of a process: the targets (file and database),
// the SSH pool, the runner, and the port the agent and the approvals use
// (executions-port.ts). main.ts calls it once. Invariant: the returned stop
// is idempotent and runs in reverse: the runner lets commands in flight end
// or abort, then the SSH pool closes.
import type { Config } from "../config/env.js";
import type { Db, Sql } from "../db/connect.js";
import type { Logger } from "../log/logger.js";
import { pctCreate } from "../pct/pct-create.js";
import { SshPool } from "../ssh/connection-pool.js";
import { sshHostKeyRefusalRecord } from "../ssh/host-key-refusals.js";
import { makeRedactor } from "../ssh/redact.js";
import { TargetRegistry } from "../targets/registry.js";
import { loadTargetsFile } from "../targets/targets-file.js";
import { type ExecutionsPort, executionsPortFrom } from "./executions-port.js";
import { ExecutionRunner } from "./runner.js";

export interface StartedExecutions {
  port: ExecutionsPort;
  runner: ExecutionRunner;
  stop(): Promise<void>;
}

export async function startExecutions(p: {
  config: Pick<Config, "targetsFile" | "executions" | "sweepSeconds">;
  db: Db;
  /** The process's LISTEN connection (the runner's ready and cancel channels). */
  listen: Sql;
  log: Logger;
  owner: string;
}): Promise<StartedExecutions> {
  const { config, db, log } = p;
  // A bad targets file throws here and stops start-up, naming entry and field.
  const fileTargets = config.targetsFile ? await loadTargetsFile(config.targetsFile) : [];
  const registry = new TargetRegistry({ db: db.kysely, fileTargets });
  await registry.sync();
  const redact = makeRedactor(config.executions.secrets);
  const sshPool = new SshPool({
    log: log.child({ component: "ssh" }),
    connectTimeoutMs: config.executions.connectTimeoutS * 1000,
    onHostKeyRefused: (refusal) => sshHostKeyRefusalRecord(db.kysely, "system:runner", refusal),
  });
  const runner = new ExecutionRunner({
    db,
    listen: p.listen,
    registry,
    pool: sshPool,
    log: log.child({ component: "runner" }),
    redact,
    owner: p.owner,
    sweepEveryMs: config.sweepSeconds * 1000,
    outputCapBytes: config.executions.outputCapBytes,
    maxTimeoutS: config.executions.maxTimeoutS,
  });
  try {
    await runner.start();
  } catch (err) {
    await sshPool.stop();
    throw err;
  }
  log.info({ targets: fileTargets.map((t) => t.name) }, "execution runner started");
  const port = executionsPortFrom({
    runner,
    registry,
    pctCreate: (input, ctx) =>
      pctCreate({ db: db.kysely, registry, pool: sshPool, redact, log: log.child({ component: "pct" }) }, input, ctx),
  });
  let stopping: Promise<void> | undefined;
  return {
    port,
    runner,
    stop() {
      stopping ??= (async () => {
        try {
          await runner.stop();
        } finally {
          await sshPool.stop();
        }
      })();
      return stopping;
    },
  };
}

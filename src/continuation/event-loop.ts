// Starts the event loop of a process: NOTIFY -> listener -> dispatcher ->
// continuation turn, with the reconciliation sweep as the backstop. The
// dispatcher is built by main.ts before the agent (the agent reports decided
// approvals to it) and starts dispatching here, once the agent that runs
// its turns exists. Invariant: stop() is idempotent and runs in reverse of
// start: stop listening, stop the sweep, then let dispatches in flight end.
import type { Db, Sql } from "../db/connect.js";
import type { Logger } from "../log/logger.js";
import type { ContinuationDispatcher, ContinuationQueued, StartContinuationTurn } from "./dispatcher.js";
import { ExecutionFinishedListener, type ListenerState } from "./listener.js";
import { ReconciliationSweep, type SweepState } from "./sweep.js";

export interface StartedEventLoop {
  /** For /healthz. */
  listenerState(): ListenerState;
  sweepState(): SweepState;
  stop(): Promise<void>;
}

export async function startEventLoop(p: {
  db: Db;
  /** The process's LISTEN connection. */
  listen: Sql;
  log: Logger;
  owner: string;
  dispatcher: ContinuationDispatcher;
  startTurn: StartContinuationTurn;
  /** Runs a turn the dispatcher queued in its one statement (with it, claim and queue are one round trip). */
  turnQueued?: ContinuationQueued;
  sweepSeconds: number;
}): Promise<StartedEventLoop> {
  const { db, log, owner, dispatcher } = p;
  dispatcher.start(p.startTurn, p.turnQueued);
  const sweep = new ReconciliationSweep({
    db,
    log: log.child({ component: "sweep" }),
    dispatcher,
    owner,
    intervalSeconds: p.sweepSeconds,
  });
  const listener = new ExecutionFinishedListener({
    sql: p.listen,
    log: log.child({ component: "listener" }),
    onFinished: (executionId) => {
      dispatcher.notify(executionId).catch((err: unknown) => log.error({ err, executionId }, "notify failed"));
    },
    onConnected: () => void sweep.runNow(),
  });
  // Reverse of start; each step runs even if one before it failed.
  const stopAll = async () => {
    try {
      await listener.stop();
    } finally {
      try {
        await sweep.stop();
      } finally {
        await dispatcher.stop();
      }
    }
  };
  sweep.start();
  try {
    await listener.start();
  } catch (err) {
    await stopAll().catch(() => {});
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return {
    listenerState: () => listener.state(),
    sweepState: () => sweep.state(),
    stop() {
      stopping ??= stopAll();
      return stopping;
    },
  };
}

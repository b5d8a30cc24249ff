// The process's one shutdown: SIGINT, SIGTERM, a crash and a failed start
// all end here (main.ts). What it owns: running every stop once, newest
// first (the HTTP server before the database it uses), and the exit code.
// Invariants: the stops run once, however many reasons arrive; a failure
// reported while they run (a stop that throws, or a crash during the
// drain) turns the exit code non-zero, so a process manager never reads a
// clean exit over a fatal line.
import type { Logger } from "./log/logger.js";

export type Stop = () => Promise<void>;

export function shutdownOnce(log: Logger, stops: Stop[], exit: (code: number) => void = (code) => process.exit(code)) {
  let started = false;
  let exitCode = 0;
  return async (reason: string, code = 0): Promise<void> => {
    exitCode ||= code;
    if (started) {
      if (code !== 0) log.warn({ reason, code }, "a failure while shutting down: the process will exit with a non-zero code");
      return;
    }
    started = true;
    log.info({ reason }, "shutting down");
    for (const stop of [...stops].reverse()) {
      try {
        await stop();
      } catch (err) {
        log.error({ err }, "error while shutting down");
        exitCode ||= 1;
      }
    }
    log.info("stopped");
    exit(exitCode);
  };
}

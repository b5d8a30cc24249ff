// The timeout of one execution: the caller's timeout_s if given, else the
// configured default, never above the configured maximum. Invariant: a
// request over the maximum is an error naming both numbers, never silently
// shortened (the agent must know how long its command may run).

export class TimeoutOutOfRangeError extends Error {
  override name = "TimeoutOutOfRangeError";
}

export function executionTimeout(requested: number | undefined, limits: { defaultTimeoutS: number; maxTimeoutS: number }): number {
  if (requested === undefined) return Math.min(limits.defaultTimeoutS, limits.maxTimeoutS);
  if (!Number.isInteger(requested) || requested < 1) {
    throw new TimeoutOutOfRangeError(`timeout_s must be a whole number of seconds from 1 to ${limits.maxTimeoutS}, got ${requested}`);
  }
  if (requested > limits.maxTimeoutS) {
    throw new TimeoutOutOfRangeError(`timeout_s ${requested} is over the maximum of ${limits.maxTimeoutS} s (NOMOS_EXEC_MAX_TIMEOUT_S)`);
  }
  return requested;
}

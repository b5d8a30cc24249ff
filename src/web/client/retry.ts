// Backoff for every load of the page (who am I, the session list, a
// session, its event stream): a load that fails because Nomos cannot be
// reached waits 0.5, 1, 2, 4, then 8 s between tries, for as long as the
// page is open, and retries at once when the browser comes back online or
// the operator presses "Retry now". Invariant: only an unreachable server
// is retried; an answer (404, 401, 400) is final and goes to the caller.
import { unreachable } from "./api.js";

const STEPS_MS = [500, 1000, 2000, 4000, 8000];

export const backoffMs = (attempt: number) => STEPS_MS[Math.min(attempt, STEPS_MS.length - 1)]!;

/** A wait that "Retry now" (or coming back online) cuts short. */
export class RetryClock {
  private wake: (() => void) | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly onOnline = () => this.now();

  constructor() {
    addEventListener("online", this.onOnline);
  }

  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(resolve, ms);
    });
  }

  /** Ends the current wait: the next try starts now. */
  now(): void {
    clearTimeout(this.timer);
    this.wake?.();
  }

  close(): void {
    removeEventListener("online", this.onOnline);
    this.now();
  }
}

/**
 * Runs `load` until it succeeds or fails with an answer; between tries it
 * reports the attempt (1, 2, …) so the page can say "reconnecting" or
 * "offline". Gives up silently (undefined) once `cancelled()` is true.
 */
export async function loadWithRetry<T>(
  load: () => Promise<T>,
  p: { clock: RetryClock; cancelled(): boolean; onRetry(attempt: number): void },
): Promise<T | undefined> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await load();
    } catch (err) {
      if (!unreachable(err) || p.cancelled()) throw err;
      p.onRetry(attempt + 1);
      await p.clock.wait(backoffMs(attempt));
      if (p.cancelled()) return undefined;
    }
  }
}

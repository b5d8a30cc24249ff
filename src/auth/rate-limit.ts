// Login rate limiting: at most `max` failed attempts per key (client address
// and, separately, username) in a sliding window; a success clears the
// client's count. In memory, per process: with several replicas an attacker
// gets `max` per replica, which still turns a password guess into years.
export class LoginRateLimiter {
  private failures = new Map<string, number[]>();

  constructor(
    private readonly max = 10,
    private readonly windowMs = 15 * 60 * 1000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until a blocked key may try again; 0 when it may try now. */
  retryAfter(keys: string[]): number {
    const t = this.now();
    let wait = 0;
    for (const key of keys) {
      const recent = this.recent(key, t);
      if (recent.length >= this.max) wait = Math.max(wait, Math.ceil((recent[0]! + this.windowMs - t) / 1000));
    }
    return wait;
  }

  fail(keys: string[]): void {
    const t = this.now();
    for (const key of keys) this.failures.set(key, [...this.recent(key, t), t]);
    if (this.failures.size > 10_000) this.prune(t);
  }

  succeed(keys: string[]): void {
    for (const key of keys) this.failures.delete(key);
  }

  private recent(key: string, t: number): number[] {
    return (this.failures.get(key) ?? []).filter((at) => at > t - this.windowMs);
  }

  private prune(t: number): void {
    for (const [key] of this.failures) if (this.recent(key, t).length === 0) this.failures.delete(key);
  }
}

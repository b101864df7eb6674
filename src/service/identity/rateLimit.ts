// Brute-force protection (semantics I8): counts failures per key (an email, a client id, an address)
// in a fixed window; once a key reaches its limit, attempts are refused until its window ends. Memory
// is bounded: at most `maxKeys` keys are counted, the oldest window dropped first. Per process: a
// replica counts its own failures (documented; an attacker spread over replicas gets at most
// replicas × limit tries per window).

/** Options of a FailureLimiter. */
export interface FailureLimits {
  /** Failures allowed per key in one window. */
  readonly limit: number;
  /** The window's length, ms. */
  readonly windowMs: number;
  /** Keys counted at most at once (default 100,000). */
  readonly maxKeys?: number;
  readonly now?: () => number;
}

/** Counts failures per key. */
export class FailureLimiter {
  readonly #limits: FailureLimits;
  readonly #now: () => number;
  // Insertion order is window-start order: a key is re-inserted when its window restarts.
  readonly #counts = new Map<string, { start: number; failures: number }>();

  constructor(limits: FailureLimits) {
    this.#limits = limits;
    this.#now = limits.now ?? Date.now;
  }

  #entry(key: string): { start: number; failures: number } | undefined {
    const e = this.#counts.get(key);
    if (e !== undefined && this.#now() - e.start >= this.#limits.windowMs) {
      this.#counts.delete(key);
      return undefined;
    }
    return e;
  }

  /** Seconds until `key` may try again, or 0 when it may now. */
  retryAfter(key: string): number {
    const e = this.#entry(key);
    if (e === undefined || e.failures < this.#limits.limit) return 0;
    return Math.max(1, Math.ceil((e.start + this.#limits.windowMs - this.#now()) / 1000));
  }

  /** Counts one failure of `key`. */
  fail(key: string): void {
    const e = this.#entry(key);
    if (e !== undefined) {
      e.failures++;
      return;
    }
    this.#counts.set(key, { start: this.#now(), failures: 1 });
    const max = this.#limits.maxKeys ?? 100_000;
    while (this.#counts.size > max) this.#counts.delete(this.#counts.keys().next().value!);
  }

  /** Forgets `key`'s failures (a success). */
  succeed(key: string): void {
    this.#counts.delete(key);
  }
}

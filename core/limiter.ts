/**
 * At most `max` requests under way per key (per marketplace), the rest wait in order: one
 * visitor's browser opens a handful of connections to a site, not hundreds.
 */
export class KeyedLimiter {
  private readonly active = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(private readonly max: number) {
    if (!Number.isInteger(max) || max < 1) {
      throw new RangeError(
        `Cannot limit concurrency as 'max' must be a positive integer: current value is ${max}`,
      );
    }
  }

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    if ((this.active.get(key) ?? 0) >= this.max) {
      await new Promise<void>((resolve) => {
        const q = this.waiting.get(key) ?? [];
        q.push(resolve);
        this.waiting.set(key, q);
      });
    } else {
      this.active.set(key, (this.active.get(key) ?? 0) + 1);
    }
    try {
      return await work();
    } finally {
      // Hand the slot straight to the next waiter, or give it back.
      const next = this.waiting.get(key)?.shift();
      if (next) next();
      else this.active.set(key, (this.active.get(key) ?? 1) - 1);
    }
  }
}

/**
 * Identical concurrent requests share one upstream fetch: while a fetch for a key is under way,
 * later callers get the same promise instead of starting another.
 */
export class SingleFlight<T> {
  private readonly running = new Map<string, Promise<T>>();

  run(key: string, work: () => Promise<T>): Promise<T> {
    const existing = this.running.get(key);
    if (existing) return existing;
    const p = work().finally(() => this.running.delete(key));
    this.running.set(key, p);
    return p;
  }
}

/**
 * A count of events per key within the current wall-clock second, kept in memory (so per
 * process), for limits on free requests whose cost is the serving thread's time: an account's
 * watch lists, its dashboard pages. At most `maxKeys` keys are remembered, the oldest forgotten.
 */
import { setBounded } from "./bounded_map.ts";

export class PerSecond {
  readonly #seen = new Map<string, { sec: number; count: number }>();

  constructor(readonly limit: number, private readonly maxKeys = 10_000) {}

  /** Counts one event of `key`; false when `key` has had `limit` this second already. */
  take(key: string, now = Date.now()): boolean {
    const sec = Math.floor(now / 1000);
    const seen = this.#seen.get(key);
    const count = seen?.sec === sec ? seen.count + 1 : 1;
    if (count > this.limit) return false;
    setBounded(this.#seen, key, { sec, count }, this.maxKeys);
    return true;
  }
}

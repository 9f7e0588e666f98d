/** Milliseconds since the epoch. Injected so that tests can move time (period rollover, windows). */
export interface Clock {
  now(): number;
}

/**
 * The wall clock, except that it never goes back while the process runs: after a step back (a
 * bad NTP source at boot, an operator's `date`), it goes on from the time it had reached at the
 * pace of the monotonic clock, until the wall clock catches up. Rate windows only move forward
 * (meter.ts), so on the stepped clock every key's window stood in the future: each key got one
 * window's calls and then 429s until the wall clock came back to that second, an hour for a step
 * of an hour, on every key at once (probe FI). Steps forward are followed at once.
 */
export class SteadyClock implements Clock {
  readonly #wall: () => number;
  readonly #monotonic: () => number;
  /** The wall time last followed, and the monotonic time it was read at. */
  #anchor = -Infinity;
  #anchorMonotonic = 0;

  constructor(wall = () => Date.now(), monotonic = () => performance.now()) {
    this.#wall = wall;
    this.#monotonic = monotonic;
  }

  now(): number {
    const wall = this.#wall();
    const monotonic = this.#monotonic();
    // From the anchor, not from the last reading: adding each call's gap of a few hundred
    // nanoseconds to a number near 1.8e12 rounded up often enough that the clock ran ahead of
    // the wall clock by 15 ms every million calls, never to come back (probe GH).
    const carried = this.#anchor + (monotonic - this.#anchorMonotonic);
    if (wall >= carried) {
      this.#anchor = wall;
      this.#anchorMonotonic = monotonic;
      return wall;
    }
    return Math.floor(carried);
  }
}

export const systemClock: Clock = new SteadyClock();

/** A clock that stands still until moved: `clock.set(t)`, `clock.advance(ms)`. */
export class ManualClock implements Clock {
  #t: number;
  constructor(start = Date.now()) {
    this.#t = start;
  }
  now(): number {
    return this.#t;
  }
  set(t: number): void {
    this.#t = t;
  }
  advance(ms: number): void {
    this.#t += ms;
  }
}

/** Milliseconds since the epoch. Injected so that tests can move time (period rollover, windows). */
export interface Clock {
  now(): number;
}

/**
 * The wall clock, except that it never goes back while the process runs. After a step back (a
 * bad NTP source at boot, an operator's `date`) it goes on from the time it had reached at half
 * the monotonic clock's pace, and meets the wall clock again twice the step later. Rate windows
 * only move forward (meter.ts), so on the stepped clock every key's window stood in the future:
 * each key got one window's calls and then 429s until the wall clock came back to that second, an
 * hour for a step of an hour, on every key at once (probe FI). Carried on at full pace, it never
 * met the wall clock again: a process that booted two hours ahead, and that NTP then set right,
 * stayed two hours ahead of the others for good, its rate windows and credit periods with it
 * (probe GF). At half pace a rate window lasts two seconds until they meet: the calls a step
 * back of an hour costs are spread over two hours at half the rate instead of a stop. Steps
 * forward are followed at once.
 */
export class SteadyClock implements Clock {
  readonly #wall: () => number;
  readonly #monotonic: () => number;
  /** The time last given, and the monotonic time it was read at. */
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
    const carried = this.#anchor + (monotonic - this.#anchorMonotonic) * CARRIED_PACE;
    if (wall >= carried) {
      this.#anchor = wall;
      this.#anchorMonotonic = monotonic;
      return wall;
    }
    return Math.floor(carried);
  }
}

/** How fast the clock goes on after a step back, against real time (see SteadyClock). */
const CARRIED_PACE = 0.5;

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

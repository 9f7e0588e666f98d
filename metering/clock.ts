/** Milliseconds since the epoch. Injected so that tests can move time (period rollover, windows). */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

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

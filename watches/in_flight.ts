/**
 * The work a loop's passes started and did not wait for (watch refreshes, webhook attempts),
 * counted per account: at most `max` at once, and at most `perAccount` of one account, so that
 * one account's slow or hanging work takes only its own few slots and never holds up a pass
 * (each pass claims only what fits, starts it and returns; a finished item wakes the loop).
 *
 * The last quarter of the slots is kept for accounts with nothing under way, one each: without
 * it, 13 accounts whose receivers hang filled all 50 webhook slots, and five with many watches
 * all 20 refresh slots, and every other account waited behind them (probe BF). An account the
 * loop marks `limited` (its webhook receiver keeps failing slowly) gets one slot and none of the
 * kept ones: 22 accounts whose receivers hang took the kept slots too (probe BJ).
 */
export class InFlight {
  readonly #byAccount = new Map<string, number>();
  readonly #running = new Set<Promise<void>>();

  /** Slots only an account with nothing under way may take, one each. */
  readonly reserve: number;

  constructor(readonly max: number, readonly perAccount: number) {
    this.reserve = Math.floor(max / 4);
  }

  get size(): number {
    return this.#running.size;
  }

  full(): boolean {
    return this.#running.size >= this.max;
  }

  /** Items of `accountId` under way. */
  held(accountId: string): number {
    return this.#byAccount.get(accountId) ?? 0;
  }

  /** How many more items of `accountId` may start now. */
  free(accountId: string, limited = false): number {
    const held = this.held(accountId);
    const own = (limited ? Math.min(1, this.perAccount) : this.perAccount) - held;
    const open = this.max - this.reserve - this.#running.size;
    if (open > 0) return Math.max(0, Math.min(own, open));
    return !limited && held === 0 && this.#running.size < this.max && own > 0 ? 1 : 0;
  }

  /**
   * Starts `work` (which must not reject: it logs its own failures) in one of `accountId`'s
   * slots; `done` is told when it has ended.
   */
  run(accountId: string, work: () => Promise<void>, done: () => void): void {
    this.#byAccount.set(accountId, (this.#byAccount.get(accountId) ?? 0) + 1);
    const p: Promise<void> = work().finally(() => {
      const n = (this.#byAccount.get(accountId) ?? 1) - 1;
      if (n > 0) this.#byAccount.set(accountId, n);
      else this.#byAccount.delete(accountId);
      this.#running.delete(p);
      done();
    });
    this.#running.add(p);
  }

  /** Resolves once nothing is running (work started meanwhile included). */
  async idle(): Promise<void> {
    while (this.#running.size) await Promise.allSettled([...this.#running]);
  }
}

/**
 * One caller at a time per key, within this process: callers of a key wait for the one before
 * them to finish, in arrival order. For store records that every request of a burst would
 * otherwise read and commit at once, with a version check: through SQLite's one writer each
 * commit that got through cost about as many that failed their check and were retried, and every
 * other call that wrote to the store waited behind them (probe Y, probe Z). Other processes on the
 * store are not seen here; their conflicts are still retried by the caller.
 */
export class KeyTurns {
  /** Per key, the end of the chain of callers waiting for it. */
  readonly #tails = new Map<string, Promise<void>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.#tails.get(key);
    let done!: () => void;
    const mine = new Promise<void>((r) => (done = r));
    const tail = before ? before.then(() => mine) : mine;
    this.#tails.set(key, tail);
    try {
      await before;
      return await work();
    } finally {
      done();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}

/**
 * A commit to a KV file whose SQLite write lock another process holds throws ("database is
 * locked"); processes on one file take turns with it, so a throw is no proof that the store
 * refuses writes. One policy for every place that commits: try again after a back-off doubling
 * from 2 ms to 250 ms, jittered so that processes refused by one holder do not retry in step, up
 * to LOCKED_TRIES commits in a row (about 3 s in all).
 */
export const LOCKED_TRIES = 16;

/** The wait after the `n`th commit in a row that threw (n from 1). */
export function afterLocked(n: number): Promise<void> {
  const ms = Math.min(250, 2 ** n);
  return new Promise((r) => setTimeout(r, ms / 2 + Math.random() * ms / 2));
}

/** `op` (one write), tried again after each throw as above, up to LOCKED_TRIES times. */
export async function whileLocked<T>(op: () => Promise<T>): Promise<T> {
  for (let tries = 1;; tries++) {
    try {
      return await op();
    } catch (e) {
      if (tries >= LOCKED_TRIES) throw e;
      await afterLocked(tries);
    }
  }
}

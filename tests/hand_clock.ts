/**
 * setTimeout and clearTimeout replaced by a clock a test moves by hand, until disposed: code under
 * test that reads them from the global scope then waits no real time. Ids stay far from real
 * timers' so that a late clearTimeout of one never clears a real timer.
 */
export const realSetTimeout = globalThis.setTimeout;
export const realClearTimeout = globalThis.clearTimeout;

export function handClock() {
  let now = 0;
  let nextId = 1 << 30;
  const due = new Map<number, { at: number; fn: () => void }>();
  (globalThis as { setTimeout: unknown }).setTimeout = (fn: () => void, ms = 0) => {
    const id = nextId++;
    due.set(id, { at: now + ms, fn });
    return id;
  };
  (globalThis as { clearTimeout: unknown }).clearTimeout = (id?: number) => {
    if (id !== undefined && !due.delete(id)) realClearTimeout(id);
  };
  return {
    /** Timers set on this clock and not yet fired or cleared. */
    get pending() {
      return due.size;
    },
    advance(ms: number) {
      now += ms;
      for (const [id, t] of [...due]) {
        if (t.at > now) continue;
        due.delete(id);
        t.fn();
      }
    },
    [Symbol.dispose]() {
      globalThis.setTimeout = realSetTimeout;
      globalThis.clearTimeout = realClearTimeout;
    },
  };
}

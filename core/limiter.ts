/**
 * At most `max` requests under way per key (per marketplace), the rest wait: one visitor's
 * browser opens a handful of connections to a site, not hundreds.
 *
 * Waiters belong to an owner (an account; none given is the owner ""). A freed slot goes to the
 * next owner in round-robin order among those with someone waiting, that owner's oldest waiter
 * first, so one owner's long queue delays another owner's call by about one slot turnover, not by
 * the whole queue. An owner may have at most `maxWaiting` waiters per key: past it `run` fails at
 * once with LimiterFull. A waiter whose `signal` aborts leaves the queue and fails with the
 * signal's reason.
 */
export class LimiterFull extends Error {
  constructor(readonly key: string, readonly owner: string) {
    super(`Too many requests of '${owner}' are waiting for '${key}'.`);
    this.name = "LimiterFull";
  }
}

export interface RunOptions {
  owner?: string;
  /** Aborting it takes a waiter out of the queue (work already started is not stopped here). */
  signal?: AbortSignal;
}

interface Lane {
  active: number;
  /** Owner → its waiters, oldest first; the map's order is the round-robin turn. */
  waiting: Map<string, (() => void)[]>;
}

export class KeyedLimiter {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly max: number, private readonly maxWaiting = Infinity) {
    if (!Number.isInteger(max) || max < 1) {
      throw new RangeError(
        `Cannot limit concurrency as 'max' must be a positive integer: current value is ${max}`,
      );
    }
  }

  async run<T>(key: string, work: () => Promise<T>, opts: RunOptions = {}): Promise<T> {
    await this.acquire(key, opts.owner ?? "", opts.signal);
    try {
      return await work();
    } finally {
      this.release(key);
    }
  }

  private acquire(key: string, owner: string, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    let lane = this.lanes.get(key);
    if (!lane) this.lanes.set(key, lane = { active: 0, waiting: new Map() });
    // Someone waits only while every slot is taken (a freed slot goes straight to a waiter).
    if (lane.active < this.max) {
      lane.active++;
      return Promise.resolve();
    }
    const queue = lane.waiting.get(owner) ?? [];
    if (queue.length >= this.maxWaiting) return Promise.reject(new LimiterFull(key, owner));
    if (!queue.length) lane.waiting.set(owner, queue); // joins the turn at its end
    const l = lane;
    return new Promise<void>((resolve, reject) => {
      const leave = () => {
        const at = queue.indexOf(start);
        if (at < 0) return; // handed its slot already
        queue.splice(at, 1);
        if (!queue.length && l.waiting.get(owner) === queue) l.waiting.delete(owner);
        reject(signal!.reason);
      };
      const start = () => {
        signal?.removeEventListener("abort", leave);
        resolve();
      };
      queue.push(start);
      signal?.addEventListener("abort", leave, { once: true });
    });
  }

  /** Hands the slot straight to the next owner's oldest waiter, or gives it back. */
  private release(key: string): void {
    const lane = this.lanes.get(key)!;
    const turn = lane.waiting.entries().next();
    if (!turn.done) {
      const [owner, queue] = turn.value;
      const next = queue.shift()!;
      lane.waiting.delete(owner);
      if (queue.length) lane.waiting.set(owner, queue); // to the back of the turn
      next();
      return;
    }
    if (--lane.active === 0) this.lanes.delete(key);
  }
}

/**
 * At most `max` requests under way per key (per marketplace), the rest wait: one visitor's
 * browser opens a handful of connections to a site, not hundreds.
 *
 * Waiters belong to an owner (an account; none given is the owner ""). A freed slot goes to the
 * next owner in round-robin order among those with someone waiting, that owner's oldest waiter
 * first, so one owner's long queue delays another owner's call by about one slot turnover, not by
 * the whole queue. An owner may have at most `maxWaiting` waiters per key: past it `run` fails at
 * once with LimiterFull. A waiter whose `signal` aborts leaves the queue and fails with the
 * signal's reason. An owner may hold at most `maxActivePerOwner` slots of a key at once: a slot
 * can be held for the whole 30 s deadline of a page the marketplace answers slowly, so an owner
 * holding every slot made everyone else wait that long, at no cost to it (timeouts are refunded).
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
  /** Slots held per owner. */
  held: Map<string, number>;
  /** Owner → its waiters, oldest first; the map's order is the round-robin turn. */
  waiting: Map<string, (() => void)[]>;
}

export class KeyedLimiter {
  private readonly lanes = new Map<string, Lane>();

  constructor(
    private readonly max: number,
    private readonly maxWaiting = Infinity,
    private readonly maxActivePerOwner = max,
  ) {
    if (!Number.isInteger(max) || max < 1) {
      throw new RangeError(
        `Cannot limit concurrency as 'max' must be a positive integer: current value is ${max}`,
      );
    }
  }

  /**
   * Runs `work` in a slot of `key`. Work that must wait for a while (a retry's back-off) does so
   * through `pause`, which gives the slot to the next owner in turn meanwhile and then waits for
   * one again, in its owner's turn and past `maxWaiting` (it held one): sleeping in a slot kept
   * other accounts' calls waiting behind a failing one's back-off.
   */
  async run<T>(
    key: string,
    work: (pause: <P>(wait: () => Promise<P>) => Promise<P>) => Promise<T>,
    opts: RunOptions = {},
  ): Promise<T> {
    const owner = opts.owner ?? "";
    await this.acquire(key, owner, opts.signal);
    let held = true;
    const pause = async <P>(wait: () => Promise<P>): Promise<P> => {
      this.release(key, owner);
      held = false;
      try {
        return await wait();
      } finally {
        await this.acquire(key, owner, opts.signal, true); // throws when the signal aborted
        held = true;
      }
    };
    try {
      return await work(pause);
    } finally {
      if (held) this.release(key, owner);
    }
  }

  /** Waiters `owner` has for `key` now. */
  waitingOf(key: string, owner: string): number {
    return this.lanes.get(key)?.waiting.get(owner)?.length ?? 0;
  }

  private mayTake(lane: Lane, owner: string): boolean {
    return lane.active < this.max && (lane.held.get(owner) ?? 0) < this.maxActivePerOwner;
  }

  private take(lane: Lane, owner: string): void {
    lane.active++;
    lane.held.set(owner, (lane.held.get(owner) ?? 0) + 1);
  }

  private acquire(key: string, owner: string, signal?: AbortSignal, held = false): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    let lane = this.lanes.get(key);
    if (!lane) this.lanes.set(key, lane = { active: 0, held: new Map(), waiting: new Map() });
    // An owner waits only while it may take no slot (a freed slot goes straight to a waiter).
    if (!lane.waiting.has(owner) && this.mayTake(lane, owner)) {
      this.take(lane, owner);
      return Promise.resolve();
    }
    const queue = lane.waiting.get(owner) ?? [];
    if (queue.length >= this.maxWaiting && !held) {
      return Promise.reject(new LimiterFull(key, owner));
    }
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

  /** Gives the slot back, then hands free slots to the next owners in turn that may take one. */
  private release(key: string, owner: string): void {
    const lane = this.lanes.get(key)!;
    lane.active--;
    const held = lane.held.get(owner)! - 1;
    if (held) lane.held.set(owner, held);
    else lane.held.delete(owner);
    for (const [next, queue] of lane.waiting) {
      if (lane.active >= this.max) break;
      if (!this.mayTake(lane, next)) continue;
      const start = queue.shift()!;
      lane.waiting.delete(next);
      if (queue.length) lane.waiting.set(next, queue); // to the back of the turn
      this.take(lane, next);
      start();
    }
    if (lane.active === 0 && !lane.waiting.size) this.lanes.delete(key);
  }
}

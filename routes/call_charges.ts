/**
 * The credits one call was charged, by the period and moment each part was taken in (its own
 * credit at admission, then a search's further pages), so that each refund goes back where its
 * credits came from. Addressed to the admission's period, the refund of pages charged after a
 * period rollover was dropped (they stayed charged to the new period), and a refund after
 * midnight came off the new day's tally while the old day kept the charge. While the call runs its
 * credits count as held (metering/credits_in_flight.ts), from each charge to its refund or the
 * call's end.
 */
import type { Meter, RefundResult, Snapshot } from "../metering/meter.ts";
import type { UsageTag } from "../metering/account_state.ts";
import { hold, release } from "../metering/credits_in_flight.ts";

interface Part {
  periodStart: number;
  at: number;
  credits: number;
}

export class CallCharges {
  readonly #parts: Part[] = [];
  /** The call failed (refundAll) or ended: a charge that lands now is given back at once. */
  #closed = false;
  /**
   * The account as the last refund of the last refundLast/refundAll left it (null when none
   * landed): an answer after refunds tells what is left from it. Adding the credits to the
   * admission's count told a period that had ended, and a refund its end had dropped (probe DC).
   */
  after: Snapshot | null = null;

  constructor(
    private readonly meter: Meter,
    private readonly accountId: string,
    private readonly tag: UsageTag,
    private readonly log: (message: string, e?: unknown) => void,
  ) {}

  /** Notes `credits` charged by the decision `snapshot` describes. */
  add(snapshot: Snapshot, credits: number): void {
    if (credits <= 0) return;
    const part = { periodStart: snapshot.periodStart, at: snapshot.at, credits };
    hold(this.accountId, credits);
    // A page charge that lands after the call failed or was answered (charges sent together that
    // the meter split between two commits, the first refused) is no part of it (probe CJ): kept,
    // it stayed charged to a call that cost nothing, and held for the rest of the process's life.
    if (this.#closed) void this.#refund(part);
    else this.#parts.push(part);
  }

  /** The call has ended: the credits it still holds are spent (or given back already). */
  end(): void {
    this.#closed = true;
    release(this.accountId, this.total);
    this.#parts.length = 0;
  }

  get total(): number {
    return this.#parts.reduce((sum, p) => sum + p.credits, 0);
  }

  /**
   * Gives back the last `n` credits charged after admission (a search's pages that failed), the
   * call's own credit never; how many were given back now (the rest are put off: refundSurely,
   * or dropped, their period over).
   */
  async refundLast(n: number): Promise<number> {
    const taken: Part[] = [];
    let given = 0;
    while (given < n && this.#parts.length > 1) {
      const last = this.#parts.at(-1)!;
      const credits = Math.min(last.credits, n - given);
      taken.push({ ...last, credits });
      last.credits -= credits;
      if (last.credits === 0) this.#parts.pop();
      given += credits;
    }
    return await this.#refundEach(taken);
  }

  /** Gives back every credit charged (the call failed); how many were given back now. */
  async refundAll(): Promise<number> {
    this.#closed = true;
    return await this.#refundEach(this.#parts.splice(0));
  }

  /**
   * All parts at once: one after another, each waited out a store another process held (about
   * 3 s a part), and a stop named only the parts begun by then (probe CH: 2 of 5 credits).
   */
  async #refundEach(parts: Part[]): Promise<number> {
    // One account's commits land one after another, so the last to settle saw the others.
    let last: Snapshot | null = null;
    const given = await Promise.all(parts.map(async (p) => {
      const r = await this.#refund(p);
      if (r) last = r.snapshot;
      return r?.applied ? p.credits : 0;
    }));
    this.after = last;
    return given.reduce((sum, credits) => sum + credits, 0);
  }

  #refund(p: Part): Promise<RefundResult | null> {
    release(this.accountId, p.credits);
    return this.meter.refundSurely(
      this.accountId,
      p.periodStart,
      p.credits,
      this.tag,
      this.log,
      p.at,
    );
  }
}

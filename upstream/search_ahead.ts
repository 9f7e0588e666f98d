/**
 * Search `limit`: how many further pages a call may fetch together with its first page, before
 * that page has shown they are needed (issue 15.5: `limit=200` in about one page's time, not two).
 *
 * Such pages are paid only when their items are in the answer. Those that are not (the first page
 * failed, the results ended sooner, the pages were shorter than guessed) are given back, so they
 * moved upstream pages for nothing: fetching ahead unbounded let one key move 830 free pages in
 * 10 s with failing first pages. Each account therefore has a small allowance of pages fetched
 * ahead and not used, refilled slowly; once it is spent, the account's searches read their first
 * page alone before asking for more (one page's latency more), which is what every search did
 * before. Honest searches over full pages give every page back to the allowance.
 *
 * How many items a page holds, which says how many pages a limit needs, is what the account's own
 * last full page of that marketplace and listing held: learned from every account's pages, one
 * account's cheap search of a listing with small pages made other accounts' limit searches of
 * larger pages fetch up to three pages each that they did not use, spending their allowances and
 * the operator's traffic (probe GD: 12 unused pages for 8 calls, with 8 credits of another key).
 * An account with none seen guesses the largest page, which fetches the fewest pages ahead.
 *
 * Both are per process and forget the least recently seen accounts past MAX_ACCOUNTS (an account
 * forgotten starts full again), so their memory is bounded.
 */

import { setBounded } from "../core/bounded_map.ts";

/** Pages fetched ahead and not used that an account may have outstanding. */
export const AHEAD_ALLOWANCE = 12;
/** One page of allowance comes back every REFILL_MS. */
export const REFILL_MS = 10_000;
const MAX_ACCOUNTS = 10_000;
/** Amazon's largest search pages hold 60 items; a guess never fetches more than those need. */
const LARGEST_PAGE = 60;

interface Bucket {
  pages: number;
  at: number;
}

export class SearchAhead {
  readonly #buckets = new Map<string, Bucket>();
  /** Items on the last full page an account saw, per marketplace and listing. */
  readonly #perPage = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Pages (at most `most`) that `owner`'s call may fetch with its first page towards `limit`
   * items, taken from the allowance: hand back the ones not wasted with `settle`.
   */
  grant(owner: string, listing: string, limit: number, most: number): number {
    if (limit <= 0 || most <= 0) return 0;
    const perPage = this.#perPage.get(`${owner}\n${listing}`) ?? LARGEST_PAGE;
    const wanted = Math.min(most, Math.ceil(limit / perPage) - 1);
    if (wanted <= 0) return 0;
    const bucket = this.#bucket(owner);
    const granted = Math.min(wanted, Math.floor(bucket.pages));
    bucket.pages -= granted;
    return granted;
  }

  /** The call has ended: of `granted` pages, `wasted` were fetched and not used. */
  settle(owner: string, granted: number, wasted: number): void {
    const given = granted - wasted;
    if (given <= 0) return;
    const bucket = this.#bucket(owner);
    bucket.pages = Math.min(AHEAD_ALLOWANCE, bucket.pages + given);
  }

  /** A page of `listing` that `owner`'s call read, and that has a next page, held `items` results. */
  sawFullPage(owner: string, listing: string, items: number): void {
    if (items <= 0) return;
    const perPage = Math.min(items, LARGEST_PAGE);
    setBounded(this.#perPage, `${owner}\n${listing}`, perPage, MAX_ACCOUNTS);
  }

  #bucket(owner: string): Bucket {
    const t = this.now();
    let bucket = this.#buckets.get(owner);
    if (bucket) {
      bucket.pages = Math.min(AHEAD_ALLOWANCE, bucket.pages + (t - bucket.at) / REFILL_MS);
      bucket.at = t;
    } else {
      bucket = { pages: AHEAD_ALLOWANCE, at: t };
    }
    // Written again, it goes last: the least recently seen accounts are forgotten first.
    setBounded(this.#buckets, owner, bucket, MAX_ACCOUNTS);
    return bucket;
  }
}

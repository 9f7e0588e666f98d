/**
 * Search `limit`: collects up to N items over successive result pages.
 *
 * The first page goes out with the further pages the caller grants (`ahead`, search_ahead.ts:
 * what the limit needs, within the account's allowance of pages left unused); those are paid only
 * if their items are in the answer. Fetching ahead from the start without a bound let calls whose
 * first page fails (a page past the last, a query the marketplace refuses) move 4 pages each and be
 * refunded in full (SPEC: failed calls are never charged): 830 free pages in 10 s from one key.
 * Further pages are then requested ahead, concurrently, on what the pages seen held, at most
 * PAGES_AHEAD not yet read at once (over 16-item pages `limit=200` planned 13 at once, and two such
 * calls of one account overran its waiting room at the marketplace).
 *
 * A page is fetched only once it is paid for (issue 13.11): the first by the call itself, every
 * further one by `chargePage()` just before its request, and a call pays exactly the upstream
 * pages it fetched (SPEC: "1 credit per upstream page fetched"), pages fetched ahead past the last
 * page or past the items asked for included, but for those sent with the first page; a page the
 * marketplace says does not exist (404) was fetched too. A further page that fails otherwise (blocked, timed out, unreadable) is given back
 * with `refundPages()`, and ends the call with the items so far and `has_next_page` true, as when
 * `chargePage()` refuses: failing the whole call threw away items paid for, and refunded pages
 * the marketplace had answered. The pages fetched ahead of it are given back too: their items
 * are not in the answer.
 */
import type { SearchPage } from "../schemas/pages.ts";
import type { ProductItem } from "../schemas/resources.ts";
import { ApiError } from "../core/api_error.ts";

export interface Collected {
  /** The page the first page states it is (a request past the last page is answered page 1). */
  page: number;
  results: ProductItem[];
  has_next_page: boolean;
  total_results: number;
  /** Upstream pages whose items are in the answer. */
  pages: number;
}

export interface CollectOptions<Raw> {
  firstPage: number;
  /** 0: just the first page. */
  limit: number;
  /** When (ms since the epoch) the call stops asking for further pages and answers what it has. */
  morePagesUntil?: number;
  fetchPage(page: number): Promise<Raw>;
  /** Parses a fetched page; run only on pages that are used, so a page fetched ahead costs no CPU. */
  read(raw: Raw): SearchPage;
  chargePage(): Promise<boolean>;
  /**
   * Gives back the credits of `n` pages charged with `chargePage()` that the call does not pay
   * for: their fetch or reading failed, or they came after a page that failed.
   */
  refundPages(n: number): Promise<void>;
  keep(item: ProductItem): boolean;
  /** The currency a result's price shows, "" when it tells none; the one the parser named if unset. */
  currencyOf?(item: ProductItem): string;
  /**
   * Further pages to fetch together with the first, before it has shown they are needed
   * (search_ahead.ts); those whose items end up outside the answer are given back and counted in
   * `wasted` (at most `pages`), which is called once the call has settled.
   */
  ahead?: { pages: number; wasted(pages: number): void };
}

// Pages of Amazon's search stop existing somewhere past 7 for most queries and never pass 400.
const MAX_PAGE = 400;
/** Pages in a row holding results, none of them kept, after which a search ends. */
const PAGES_KEEPING_NONE = 3;
/** Amazon's 48–60-item pages need 4 after the first for `limit=200`, so they go at once. */
export const PAGES_AHEAD = 4;

export async function collectSearch<Raw>(o: CollectOptions<Raw>): Promise<Collected> {
  const fetched = new Map<number, Promise<Raw>>();
  const refunded = new Set<number>();
  // `failedAt`: the further page that failed, if one did; `used`: pages from the first whose items
  // are in the answer; `ahead`: pages fetched with the first.
  const progress = { failedAt: Infinity, used: 0, ahead: 0 };
  try {
    return await collect(o, fetched, refunded, progress);
  } finally {
    // Pages fetched ahead of the first page's answer are paid only if their items are used:
    // the call did not know it needed them (search_ahead.ts bounds how many go unused).
    let wasted = 0;
    for (let i = 1; i <= progress.ahead; i++) {
      const page = o.firstPage + i;
      if (fetched.has(page) && i >= progress.used) {
        wasted++;
        refunded.add(page);
      }
    }
    o.ahead?.wasted(wasted);
    // Pages fetched ahead and not read are paid for once they have come; those that fail are not,
    // nor those after a further page that failed, found or not: the answer ends before them, and
    // their items would have to be bought again from the page that failed (probe AJ). Waiting for
    // them costs a call nothing it would not wait for anyway: they went out with the pages it
    // read, at most PAGES_AHEAD at once.
    await Promise.all(
      [...fetched].map(([page, p]) =>
        // The first page is the call's own credit: the route refunds it if the call fails.
        page === o.firstPage ? undefined : p.then(
          () => void (page > progress.failedAt && refunded.add(page)),
          (e) => void ((page > progress.failedAt || !pageMissing(e)) && refunded.add(page)),
        )
      ),
    );
    if (refunded.size > 0) await o.refundPages(refunded.size);
  }
}

async function collect<Raw>(
  o: CollectOptions<Raw>,
  fetched: Map<number, Promise<Raw>>,
  refunded: Set<number>,
  progress: { failedAt: number; used: number; ahead: number },
): Promise<Collected> {
  let unpaid = false;
  const request = async (page: number) => {
    if (page > MAX_PAGE || fetched.has(page) || unpaid) return;
    if (page !== o.firstPage && Date.now() > (o.morePagesUntil ?? Infinity)) {
      unpaid = true; // out of time: ends as when out of credits
      return;
    }
    if (page !== o.firstPage && !(await o.chargePage())) {
      unpaid = true;
      return;
    }
    const p = o.fetchPage(page);
    p.catch(() => {}); // a page fetched ahead is observed once the call settles (collectSearch)
    fetched.set(page, p);
  };
  /**
   * The last page the latest page read names (SearchPage.last_page): pages past it are asked for
   * one at a time, and only while a page read still links a next one. Planned on what the limit
   * needs alone, `limit=200` over a listing of three pages fetched and paid for two past its end
   * (probe FQ: 12 credits for 8 pages).
   */
  let lastShown = Infinity;
  const plan = (from: number, missing: number, perPage: number) => {
    const wanted = Math.max(1, Math.ceil(missing / Math.max(1, perPage)));
    const pages = Math.max(1, Math.min(wanted, PAGES_AHEAD, lastShown - from + 1));
    // Charged together (the meter commits them in one batch, in order), then fetched at once.
    return Promise.all(Array.from({ length: pages }, (_, i) => request(from + i)));
  };

  await request(o.firstPage);
  if (o.ahead && o.ahead.pages > 0) {
    progress.ahead = Math.min(o.ahead.pages, PAGES_AHEAD);
    await Promise.all(
      Array.from({ length: progress.ahead }, (_, i) => request(o.firstPage + 1 + i)),
    );
  }
  const results: ProductItem[] = [];
  /**
   * The items of the pages read so far, an ASIN as an ad apart from it as a result: a product
   * advertised on one page is a result on another (probe CT), which is no repeat.
   */
  const seen = new Set<string>();
  const itemKey = (r: ProductItem) => `${r.sponsored ? "ad" : "result"} ${r.asin}`;
  let total = 0;
  let seenPerPage = 0;
  let first: SearchPage | null = null;
  let keptNone = 0;
  const done = (results: ProductItem[], hasNext: boolean, pages: number) =>
    answer(first?.page_stated ? first.page : o.firstPage, results, hasNext, total, pages);
  for (let page = o.firstPage, used = 0;; page++) {
    if (!fetched.has(page)) await request(page);
    const pending = fetched.get(page);
    if (!pending) return done(results, true, used); // the credits or the time ran out
    let got: SearchPage;
    try {
      got = o.read(await pending);
    } catch (e) {
      if (used === 0) throw e; // the first page: the call fails
      if (pageMissing(e)) return done(results, false, used); // the results ended before it
      refunded.add(page);
      progress.failedAt = page;
      return done(results, true, used);
    }
    const fresh = got.results.filter((r) => !r.asin || !seen.has(itemKey(r)));
    const other = first && otherPage(first, got, page, fresh, o.currencyOf);
    if (other) {
      // Not the page asked for: given back, and the answer ends before it. An earlier page (a
      // redirect to the first, a page past the last) ends the results; another search's or
      // marketplace's page says nothing of whether this one goes on.
      refunded.add(page);
      progress.failedAt = page;
      return done(results, other === "another", used);
    }
    first ??= got;
    lastShown = got.last_page ?? Infinity;
    for (const r of got.results) if (r.asin) seen.add(itemKey(r));
    progress.used = ++used;
    if (used === 1) total = got.total_results;
    seenPerPage = Math.max(seenPerPage, got.results.length);
    const kept = fresh.filter(o.keep);
    results.push(...kept);
    // Pages whose results are all left out (a price range or Prime a marketplace's pages ignore):
    // after a few in a row the search ends, as further pages are likely the same. It bought page
    // after page for an empty answer, 34 credits (probe EN).
    keptNone = kept.length === 0 && got.results.length > 0 ? keptNone + 1 : 0;
    const limit = o.limit || Infinity;
    // A first page that states another page than the one asked for (page 1, past the last) is
    // the answer: the pages after the one asked for are not its next ones (probe EB: page 8
    // after page 1 ended the results with has_next_page false).
    const answeredOther = used === 1 && got.page_stated && got.page !== o.firstPage;
    if (answeredOther || o.limit === 0 || results.length >= limit) {
      return done(results.slice(0, limit), results.length > limit || got.has_next_page, used);
    }
    if (!got.has_next_page || got.results.length === 0 || page >= MAX_PAGE) {
      return done(results, false, used);
    }
    if (keptNone >= PAGES_KEEPING_NONE) return done(results, true, used);
    // After a page keeping none, one page at a time: pages asked for together with it were paid
    // for and never read when the search then ended (probe EO).
    await plan(page + 1, keptNone > 0 ? 1 : o.limit - results.length, seenPerPage);
  }
}

/** The marketplace's own "no such page": an answer, not a failure to get one. */
function pageMissing(e: unknown): boolean {
  return e instanceof ApiError && e.status === 404;
}

/**
 * Why a further page fetched as `page` is not that page of the listing the first page began, or
 * null when it is: `earlier` when it is an earlier page again, `another` when it is another
 * search's or marketplace's page or a later one.
 * - Its pagination links search other words than the first page's (probe DY: another query's
 *   page was merged into the answer and charged), or all its prices are in currencies the first
 *   page showed none of (another marketplace's page).
 * - It states another page number: page 1 again past the last page (probe DY).
 * - Its items are all items already read: the marketplace answered an earlier page again (probe
 *   CS: `limit=100` charged 7 pages for 16 items, each repeated). Only its results count when it
 *   has any: a search page's ads change on every load, and page 1 again with one new ad was paid
 *   for as a new page, up to the 400-page cap (probe DY: 64 credits for 16 items).
 */
function otherPage(
  first: SearchPage,
  got: SearchPage,
  page: number,
  fresh: ProductItem[],
  currencyOf = (r: ProductItem) => r.price?.currency ?? "",
): "earlier" | "another" | null {
  // Another search's page first: its own page 1 says nothing of where this search ends (probe EF).
  const words = (p: SearchPage) => p.links_query?.toLowerCase();
  if (first.links_query && got.links_query && words(first) !== words(got)) {
    return "another";
  }
  const shown = (p: SearchPage) => new Set(p.results.map(currencyOf).filter(Boolean));
  const was = shown(first);
  const now = shown(got);
  if (was.size > 0 && now.size > 0 && ![...now].some((c) => was.has(c))) return "another";
  if (got.page_stated && got.page !== page) return got.page < page ? "earlier" : "another";
  if (got.results.length > 0) {
    const results = got.results.some((r) => !r.sponsored);
    if (!fresh.some((r) => !results || !r.sponsored)) return "earlier";
  }
  return null;
}

function answer(
  page: number,
  results: ProductItem[],
  hasNext: boolean,
  total: number,
  pages: number,
): Collected {
  // Positions count the whole answer, so that page 2's first item follows page 1's last.
  const numbered = results.map((r, i) => ({ ...r, position: i + 1 }));
  return {
    page,
    results: numbered,
    has_next_page: hasNext,
    total_results: Math.max(total, numbered.length),
    pages,
  };
}

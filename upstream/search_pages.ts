/**
 * Search `limit`: collects up to N items over successive result pages.
 *
 * Pages are requested ahead, concurrently, on a guess of how many items a page holds (Amazon's
 * desktop grid shows 48–60); after each page the guess is corrected from what the pages really
 * held. A page is fetched only once it is paid for (issue 13.11): the first by the call itself,
 * every further one by `chargePage()` just before its request, so a call pays exactly the upstream
 * pages it fetches (SPEC: "1 credit per upstream page fetched"). That includes pages fetched ahead
 * that turn out to lie past the last page: giving those back, as this module once did, let a
 * nonsense query with `limit=200` move 4 pages for 1 credit at will. When `chargePage()` refuses,
 * the items so far are returned with `has_next_page` true. A failed page that is needed fails
 * the whole call (which the route refunds). At most PAGES_AHEAD pages of a call are requested and not yet read at once: over small
 * pages (16 items) `limit=200` planned 13 at once, two such calls of one account overran its
 * waiting room at the marketplace (503 `upstream_busy`), and a call that failed left that many
 * pages being fetched for nothing.
 */
import type { SearchPage } from "../schemas/pages.ts";
import type { ProductItem } from "../schemas/resources.ts";

export interface Collected {
  results: ProductItem[];
  has_next_page: boolean;
  total_results: number;
  /** Upstream pages whose items are in the answer (pages fetched ahead and unused not counted). */
  pages: number;
}

export interface CollectOptions<Raw> {
  firstPage: number;
  /** 0: just the first page. */
  limit: number;
  fetchPage(page: number): Promise<Raw>;
  /** Parses a fetched page; run only on pages that are used, so a page fetched ahead costs no CPU. */
  read(raw: Raw): SearchPage;
  chargePage(): Promise<boolean>;
  keep(item: ProductItem): boolean;
  /** Items expected on a page before one has been seen. */
  perPageGuess?: number;
}

// Pages of Amazon's search stop existing somewhere past 7 for most queries and never pass 400.
const MAX_PAGE = 400;
/** Amazon's 48–60-item pages need 4 for `limit=200`, so a full-size limit still goes at once. */
export const PAGES_AHEAD = 4;

export async function collectSearch<Raw>(o: CollectOptions<Raw>): Promise<Collected> {
  const fetched = new Map<number, Promise<Raw>>();
  let unpaid = false;
  const request = async (page: number) => {
    if (page > MAX_PAGE || fetched.has(page) || unpaid) return;
    if (page !== o.firstPage) {
      if (!(await o.chargePage())) {
        unpaid = true;
        return;
      }
    }
    const p = o.fetchPage(page);
    p.catch(() => {}); // a page fetched ahead whose call failed earlier may fail unobserved
    fetched.set(page, p);
  };
  const plan = (from: number, missing: number, perPage: number) => {
    const wanted = o.limit > 0 ? Math.max(1, Math.ceil(missing / Math.max(1, perPage))) : 1;
    const pages = Math.min(wanted, PAGES_AHEAD);
    // Charged together (the meter commits them in one batch, in order), then fetched at once.
    return Promise.all(Array.from({ length: pages }, (_, i) => request(from + i)));
  };

  await plan(o.firstPage, o.limit, o.perPageGuess ?? 60);
  const results: ProductItem[] = [];
  let total = 0;
  let seenPerPage = 0;
  for (let page = o.firstPage, used = 0;; page++) {
    if (!fetched.has(page)) await request(page);
    const pending = fetched.get(page);
    if (!pending) return done(results, true, total, used); // the credits ran out
    const got = o.read(await pending);
    used++;
    if (used === 1) total = got.total_results;
    seenPerPage = Math.max(seenPerPage, got.results.length);
    results.push(...got.results.filter(o.keep));
    const limit = o.limit || Infinity;
    if (o.limit === 0 || results.length >= limit) {
      return done(
        results.slice(0, limit),
        results.length > limit || got.has_next_page,
        total,
        used,
      );
    }
    if (!got.has_next_page || got.results.length === 0 || page >= MAX_PAGE) {
      return done(results, false, total, used);
    }
    await plan(page + 1, o.limit - results.length, seenPerPage);
  }
}

function done(results: ProductItem[], hasNext: boolean, total: number, pages: number): Collected {
  // Positions count the whole answer, so that page 2's first item follows page 1's last.
  const numbered = results.map((r, i) => ({ ...r, position: i + 1 }));
  return {
    results: numbered,
    has_next_page: hasNext,
    total_results: Math.max(total, numbered.length),
    pages,
  };
}

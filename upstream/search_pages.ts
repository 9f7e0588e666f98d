/**
 * Search `limit`: collects up to N items over successive result pages.
 *
 * Pages are requested ahead, concurrently, on a guess of how many items a page holds (Amazon's
 * desktop grid shows 48–60); after each page the guess is corrected from what the pages really
 * held. Credits follow the pages used, not the pages requested: before a further page's items are
 * taken, `chargePage()` charges one credit, and when it refuses the items so far are returned
 * with `has_next_page` true. A page fetched ahead but not needed is not charged. A failed page
 * that is needed fails the whole call (which the route refunds).
 */
import type { SearchPage } from "../schemas/pages.ts";
import type { ProductItem } from "../schemas/resources.ts";

export interface Collected {
  results: ProductItem[];
  has_next_page: boolean;
  total_results: number;
  /** Upstream pages whose items are in the answer (each one charged). */
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

export async function collectSearch<Raw>(o: CollectOptions<Raw>): Promise<Collected> {
  const ahead = new Map<number, Promise<Raw>>();
  const request = (page: number) => {
    if (page > MAX_PAGE || ahead.has(page)) return;
    const p = o.fetchPage(page);
    p.catch(() => {}); // a page fetched ahead that is never needed may fail unobserved
    ahead.set(page, p);
  };
  const plan = (from: number, missing: number, perPage: number) => {
    const pages = o.limit > 0 ? Math.max(1, Math.ceil(missing / Math.max(1, perPage))) : 1;
    for (let i = 0; i < pages; i++) request(from + i);
  };

  plan(o.firstPage, o.limit, o.perPageGuess ?? 48);
  const results: ProductItem[] = [];
  let total = 0;
  let seenPerPage = 0;
  for (let page = o.firstPage, used = 0;; page++) {
    request(page);
    const got = o.read(await ahead.get(page)!);
    if (used > 0 && !(await o.chargePage())) {
      return done(results, true, total, used);
    }
    used++;
    if (used === 1) total = got.total_results;
    seenPerPage = Math.max(seenPerPage, got.results.length);
    results.push(...got.results.filter(o.keep));
    const limit = o.limit || Infinity;
    if (o.limit === 0 || results.length >= limit) {
      return done(results.slice(0, limit), results.length > limit || got.has_next_page, total, used);
    }
    if (!got.has_next_page || got.results.length === 0 || page >= MAX_PAGE) {
      return done(results, false, total, used);
    }
    plan(page + 1, o.limit - results.length, seenPerPage);
  }
}

function done(results: ProductItem[], hasNext: boolean, total: number, pages: number): Collected {
  // Positions count the whole answer, so that page 2's first item follows page 1's last.
  const numbered = results.map((r, i) => ({ ...r, position: i + 1 }));
  return { results: numbered, has_next_page: hasNext, total_results: Math.max(total, numbered.length), pages };
}

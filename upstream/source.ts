/**
 * The DataSource of a real upstream: endpoint → upstream URL (urls.ts) → transport → page checks
 * and parser (fetch_page.ts) → the endpoint's exact response, with the request-level fields
 * (`marketplace`, `query`, `count`, …) the page does not carry.
 */
import type { DataRequest, DataSource } from "./data_source.ts";
import type { Transport } from "./transport.ts";
import { type FetchedPage, fetchPage, parsed } from "./fetch_page.ts";
import { collectSearch, PAGES_AHEAD } from "./search_pages.ts";
import { SearchAhead } from "./search_ahead.ts";
import { envelope, type Out, type Params } from "./envelopes.ts";
import { mismatch } from "./delivery_location.ts";
import { marketplace } from "../schemas/marketplaces.ts";
import { lookUpGtin } from "./gtin_lookup.ts";
import { scrape } from "./scrape.ts";
import {
  categoryUrl,
  endpointUrl,
  productPageUrl,
  SEARCH_SORTS,
  searchUrl,
  sellerProductsUrl,
} from "./urls.ts";
import type { parseProduct } from "../parsers/product.ts";
import type { parseIdentifiers } from "../parsers/identifiers.ts";
import type { JobParser } from "./page_read.ts";
import { inlineReader, type PageReader } from "./page_pool.ts";
import type { ProductItem } from "../schemas/resources.ts";
import type { SearchPage } from "../schemas/pages.ts";
import { ApiError } from "../core/api_error.ts";
import { shownCurrency } from "../parsers/price.ts";
import { assertListing, assertSearchOf, type Listing, listingShown } from "./listing_shown.ts";

// Amazon's Prime refinement is put in the search URL for these marketplaces (urls.ts); elsewhere
// `prime_only` is applied to the parsed results.
const PRIME_IN_URL = new Set(["US"]);

type Get = (url: string, parser: JobParser) => Promise<FetchedPage>;

/**
 * How long one data call may take in all, and how long a search with `limit` goes on asking for
 * further pages (it then answers what it has, `has_next_page` true). Each upstream request has its
 * own deadline (30 s), and a `limit` search asks for page after page: a proxy in front that gave up
 * first (nginx's 120 s, deploy/nginx.conf) answered a timeout for a call Shelf then charged (probe
 * EB).
 */
export const CALL_TIMES = { deadlineMs: 100_000, morePagesMs: 60_000 };

export class UpstreamSource implements DataSource {
  /** Which accounts' `limit` searches may fetch pages with their first one. */
  readonly #ahead = new SearchAhead();

  constructor(
    private readonly transport: Transport,
    /** Where pages are read: inline, or on the page workers (PARSE_WORKERS). */
    readonly reader: PageReader = inlineReader,
    private readonly times = CALL_TIMES,
  ) {}

  fetch(req: DataRequest): Promise<unknown> {
    req.watchHangUp?.();
    const p = req.params;
    const mp = String(p.marketplace ?? "US");
    const deadline = AbortSignal.timeout(this.times.deadlineMs);
    const signal = req.signal ? AbortSignal.any([req.signal, deadline]) : deadline;
    return this.#answer({ ...req, signal }).then((answer) => {
      // Every price of the answer, whatever the endpoint: offers, best sellers, deals and a
      // gtin-to-asin match answered a page in another currency for a postcode (probe EE).
      if (p.zip) shownForZip(p, mp, currenciesIn(answer, mp));
      return answer;
    }).catch((e) => {
      if (!deadline.aborted || req.signal?.aborted) throw e;
      throw new ApiError(
        504,
        "upstream_timeout",
        `The call did not finish within ${this.times.deadlineMs / 1000} s.`,
      );
    });
  }

  #answer(req: DataRequest): Promise<unknown> {
    const p = req.params;
    const mp = String(p.marketplace ?? "US");
    const get: Get = (url, parser) =>
      fetchPage(this.transport, this.reader, {
        url,
        marketplace: mp,
        zip: p.zip as string | undefined,
        signal: req.signal,
        owner: req.owner,
        parser,
        reviewId: p.review_id === undefined ? undefined : String(p.review_id),
      });
    const first = (parser: JobParser) => get(endpointUrl(req.endpoint.name, p), parser);

    switch (req.endpoint.name) {
      case "search":
        return this.listing(req, (url) => get(url, "search"), (page) => searchUrl(mp, p, page), {
          query: p.query,
          sort: (p.sort as string | undefined) ?? null,
        });
      case "category":
        return this.listing(
          req,
          (url) => get(url, "category"),
          (page) => categoryUrl(mp, String(p.category_id), page, p.sort as string),
          { category_id: p.category_id },
        );
      case "seller_products":
        return this.listing(
          req,
          (url) => get(url, "search"),
          (page) => sellerProductsUrl(mp, String(p.seller_id), page),
          {
            seller_id: p.seller_id,
          },
        );
      case "details":
        return first("product").then((page) =>
          envelope.details(p, mp, page, parsed<Out<typeof parseProduct>>(page))
        );
      case "offers":
        return first("offers").then((page) => envelope.offers(p, mp, page, parsed(page)));
      case "reviews":
        return first("reviews").then((page) => envelope.reviews(p, mp, page, parsed(page)));
      case "reviews_top":
        return first("review_summary").then((page) =>
          envelope.reviews_top(p, mp, page, parsed(page))
        );
      case "review_details":
        return first("review").then((page) => envelope.review_details(p, mp, page, parsed(page)));
      case "bestsellers":
        return first("bestsellers").then((page) => envelope.bestsellers(p, mp, page, parsed(page)));
      case "categories":
        return first("categories").then((page) => envelope.categories(p, mp, page, parsed(page)));
      case "seller_profile":
        return first("seller_profile").then((page) =>
          envelope.seller_profile(p, mp, page, parsed(page))
        );
      case "deals":
        return first("deals").then((page) => envelope.deals(p, mp, page, parsed(page)));
      case "deal_products":
        return first("deal_products").then((page) =>
          envelope.deal_products(p, mp, page, parsed(page))
        );
      case "promotion":
        return first("promotion").then((page) => envelope.promotion(p, mp, page, parsed(page)));
      case "asin_to_gtin":
        return first("identifiers").then((page) =>
          envelope.asin_to_gtin(p, mp, page, parsed(page))
        );
      case "gtin_to_asin":
        return this.gtinToAsin(get, mp, String(p.gtin));
      case "scrape":
        return scrape(
          String(p.url),
          (url, code) =>
            fetchPage(this.transport, this.reader, {
              url,
              marketplace: code,
              signal: req.signal,
              owner: req.owner,
              parser: "auto",
              clientUrl: true,
            }),
        );
      default:
        return Promise.reject(new RangeError(`no upstream page for endpoint ${req.endpoint.name}`));
    }
  }

  /** Search, category and seller storefront: one grid, `limit` pagination on search only. */
  private async listing(
    req: DataRequest,
    get: (url: string) => Promise<FetchedPage>,
    urlOf: (page: number) => string,
    extra: Record<string, unknown>,
  ): Promise<unknown> {
    /** The first page read: what labels the answer. */
    let shown: SearchPage | undefined;
    const kind = req.endpoint.name as Listing;
    const p = req.params;
    const mp = String(p.marketplace ?? "US");
    const keepSponsored = p.include_sponsored !== false;
    const filterPrime = !!p.prime_only && !PRIME_IN_URL.has(mp);
    const inRange = priceRange(p, mp);
    const currencyOf = (r: ProductItem) => r.price ? shownCurrency(r.price, mp) : "";
    const limit = Number(p.limit ?? 0);
    const owner = req.owner ?? "";
    const listing = `${req.endpoint.name} ${mp}`;
    const ahead = this.#ahead.grant(owner, listing, limit, PAGES_AHEAD);
    const got = await collectSearch({
      firstPage: Number(p.page ?? 1),
      limit,
      morePagesUntil: Date.now() + this.times.morePagesMs,
      ahead: { pages: ahead, wasted: (n) => this.#ahead.settle(owner, ahead, n) },
      fetchPage: (n) => get(urlOf(n)),
      // Each page is checked as it is read: checked once all were fetched, a first page showing
      // another currency failed the whole call, its further pages refunded with it, for free.
      read: (page) => {
        const read = parsed<SearchPage>(page);
        shownForZip(p, mp, read.results.map(currencyOf));
        // Applied here, on the Prime marks of the cards: a page that marks none cannot be told
        // apart from one without Prime items, and answered an empty list, charged (probe EM).
        if (filterPrime && read.results.length > 0 && !read.results.some((r) => r.prime)) {
          throw new ApiError(
            502,
            "upstream_error",
            "The marketplace's page marks no result as Prime, so prime_only cannot be applied.",
          );
        }
        // Every page, not only the first: a further page that pages through another kind of
        // listing (a storefront's, which names no search words) was merged into the answer and
        // charged (probe HW). Thrown here, it is given back and ends the answer, as another
        // search's page does.
        assertListing(kind, read);
        shown ??= read;
        if (read.has_next_page) this.#ahead.sawFullPage(owner, listing, read.results.length);
        return read;
      },
      chargePage: () => req.chargePage(),
      refundPages: (n) => req.refundPages?.(n) ?? Promise.resolve(),
      keep: (item) =>
        (keepSponsored || !item.sponsored) && (!filterPrime || item.prime) && inRange(item),
      currencyOf,
    });
    return envelope.listing(p, mp, got, {
      ...extra,
      ...(extra.sort !== undefined ? { sort: sortAnswered(p.sort, shown?.sort_shown) } : {}),
      // A category's answer carries the department path its page shows.
      ...(kind === "category" ? { breadcrumb: shown?.breadcrumb ?? [] } : {}),
      ...listingShown(kind, p, shown),
    });
  }

  private async gtinToAsin(get: Get, mp: string, gtin: string) {
    const page = parsed<SearchPage>(await get(searchUrl(mp, { query: gtin }, 1), "search"));
    assertSearchOf(page, gtin, gtinWords);
    const results: ProductItem[] = page.results;
    const found = await lookUpGtin(gtin, results, async (asin) => {
      const page = await get(productPageUrl(mp, asin), "identifiers");
      return parsed<Out<typeof parseIdentifiers>>(page);
    });
    return {
      asin: found.asin,
      gtin,
      note: found.note,
      match: found.match,
      marketplace: mp,
      other_matches: found.other_matches,
    };
  }
}

/**
 * Search words as a GTIN: its digits, leading zeros aside, the same however the links write it
 * (spaces, dashes); words with anything else are another search, kept as they are (probe FI: the
 * digits of "laptop case 12345678", and the none of "laptop", passed for a GTIN).
 */
function gtinWords(words: string): string {
  return /^[\d\s-]+$/.test(words) ? words.replace(/\D/g, "").replace(/^0+/, "") : `words: ${words}`;
}

/**
 * Whether an item's price is within `min_price`–`max_price`, where the page shows one: the range
 * is asked of the marketplace in its URL, and a page that ignored it answered items at ¥300 and
 * ¥24,800 for at most ¥10 (probe EM). An item showing no price, or one read in another currency,
 * is kept, as nothing tells; one whose currency is not read is taken in the marketplace's (probe
 * EO: an unread yen sign let every JP result past `max_price`).
 */
function priceRange(p: Params, mp: string): (item: ProductItem) => boolean {
  const min = p.min_price === undefined ? -Infinity : Number(p.min_price);
  const max = p.max_price === undefined ? Infinity : Number(p.max_price);
  const own = marketplace(mp).currency;
  return (item) => {
    const price = item.price;
    if (!price) return true;
    // Only in the marketplace's own money, which the range is in: amazon.com shown in Egyptian
    // pounds kept 3 of its 33 results for at most $2,000 (probe EN). A currency not read is the
    // marketplace's only where the price shows no code or mark of another (probe EO: a garbled
    // yen sign; probe EP: KRW or HKD, which the parser does not name, were held to dollars).
    const currency = shownCurrency(price, mp);
    if (currency && currency !== own) return true;
    return price.amount >= min && price.amount <= max;
  };
}

/** Amazon's sort keys, by the SPEC's sort names; the old relevance key too. */
const SORT_NAMES: Record<string, string> = {
  ...Object.fromEntries(Object.entries(SEARCH_SORTS).map(([name, key]) => [key, name])),
  relevancerank: "relevance",
};

/**
 * The order a search's answer is in: the sort asked for, unless the page's sort menu shows
 * another, which is then named (null for one the SPEC has no name for). A page in relevance order
 * answered `sort: price_asc` (probe EM).
 */
function sortAnswered(asked: unknown, shown: string | null | undefined): string | null {
  const wanted = asked === undefined ? null : String(asked);
  if (wanted === null || !shown || SEARCH_SORTS[wanted] === shown) return wanted;
  return SORT_NAMES[shown] ?? null;
}

/**
 * The currency of every price in an answer: an object with `currency` and `display`, as the
 * price schema has them. Not any key named `currency`: product facts, variant dimensions and
 * business details are keyed by the page's own labels, and one labelled so refused an honest
 * answer for a postcode (probe EG). A price whose currency is not read ("") is told by its
 * display: a bare `$` or `kr` where the marketplace's money is written otherwise is another
 * currency (probe EG: "$6.37" on amazon.de was charged).
 */
function currenciesIn(value: unknown, mp: string, found: string[] = []): string[] {
  if (Array.isArray(value)) {
    for (const v of value) currenciesIn(v, mp, found);
  } else if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    if (typeof o.currency === "string" && typeof o.display === "string") {
      found.push(shownCurrency({ currency: o.currency, display: o.display }, mp));
    }
    for (const v of Object.values(o)) if (v && typeof v === "object") currenciesIn(v, mp, found);
  }
  return found;
}

/**
 * With a postcode asked for, prices must be in the marketplace's own currency: another one means
 * the page was rendered for a shopper elsewhere, the same uncharged location mismatch as a page
 * showing another delivery location (issue 16.3). A currency the page did not show ("") proves
 * nothing either way.
 */
function shownForZip(p: Params, mp: string, currencies: (string | undefined)[]): void {
  if (!p.zip) return;
  const own = marketplace(mp).currency;
  const other = currencies.find((c) => c && c !== own);
  if (other) {
    throw mismatch(
      `the page shows prices in ${other} instead of ${own} for postcode '${p.zip}'.`,
    );
  }
}

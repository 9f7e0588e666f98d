/**
 * The DataSource of a real upstream: endpoint → upstream URL (urls.ts) → transport → page checks
 * and parser (fetch_page.ts) → the endpoint's exact response, with the request-level fields
 * (`marketplace`, `query`, `count`, …) the page does not carry.
 */
import type { DataRequest, DataSource } from "./data_source.ts";
import type { Transport } from "./transport.ts";
import { type FetchedPage, fetchPage, parsed } from "./fetch_page.ts";
import { collectSearch } from "./search_pages.ts";
import { lookUpGtin } from "./gtin_lookup.ts";
import { judgeReviews } from "./reviews_answer.ts";
import { scrape } from "./scrape.ts";
import { categoryUrl, endpointUrl, productPageUrl, searchUrl, sellerProductsUrl } from "./urls.ts";
import { parseSearch } from "../parsers/search.ts";
import { parseProduct } from "../parsers/product.ts";
import { parseIdentifiers } from "../parsers/identifiers.ts";
import { parseOffers } from "../parsers/offers.ts";
import { parseReviews, parseReviewSummary } from "../parsers/reviews.ts";
import { parseReview } from "../parsers/review.ts";
import { parseBestsellers } from "../parsers/bestsellers.ts";
import { parseCategories } from "../parsers/categories.ts";
import { parseDeals } from "../parsers/deals.ts";
import { parseDealProducts } from "../parsers/deal_products.ts";
import { parseSellerProfile } from "../parsers/seller_profile.ts";
import { parsePromotion } from "../parsers/promotion.ts";
import type { ProductItem } from "../schemas/resources.ts";
import type { SearchPage } from "../schemas/pages.ts";

type Params = Record<string, unknown>;

// Primary identifier for `gtin`, most general first.
const GTIN_ORDER = ["GLOBAL_TRADE_IDENTIFICATION_NUMBER", "EAN", "UPC", "JAN", "ISBN_13"];
// Amazon's Prime refinement is put in the search URL for these marketplaces (urls.ts); elsewhere
// `prime_only` is applied to the parsed results.
const PRIME_IN_URL = new Set(["US"]);

export class UpstreamSource implements DataSource {
  constructor(private readonly transport: Transport) {}

  fetch(req: DataRequest): Promise<unknown> {
    const p = req.params;
    const mp = String(p.marketplace ?? "US");
    const get = (url: string) =>
      fetchPage(this.transport, {
        url,
        marketplace: mp,
        zip: p.zip as string | undefined,
        signal: req.signal,
      });
    const opts = (page: FetchedPage) => ({ marketplace: mp, url: page.url });
    const first = () => get(endpointUrl(req.endpoint.name, p));

    switch (req.endpoint.name) {
      case "search":
        return this.listing(req, get, (page) => searchUrl(mp, p, page), {
          query: p.query,
          sort: (p.sort as string | undefined) ?? null,
        });
      case "category":
        return this.listing(
          req,
          get,
          (page) => categoryUrl(mp, String(p.category_id), page, p.sort as string),
          {
            category_id: p.category_id,
          },
        );
      case "seller_products":
        return this.listing(req, get, (page) => sellerProductsUrl(mp, String(p.seller_id), page), {
          seller_id: p.seller_id,
        });
      case "details":
        return first().then((page) => parsed(page, (h) => parseProduct(h, opts(page))));
      case "offers":
        return first().then((page) => {
          const o = parsed(page, (h) => parseOffers(h, opts(page)));
          const asin = o.asin || String(p.asin);
          return { url: productPageUrl(mp, asin), asin, count: o.offers.length, offers: o.offers };
        });
      case "reviews":
        return first().then((page) => {
          const r = parsed(page, (h) => parseReviews(h, opts(page)));
          const verdict = judgeReviews(p, r.reviews, page.url, page.authenticated);
          return {
            url: page.url,
            asin: r.asin || String(p.asin),
            note: verdict.note,
            page: verdict.page,
            count: r.reviews.length,
            reviews: r.reviews,
            summary: r.summary,
            authenticated: page.authenticated,
            has_next_page: r.has_next_page,
            filters_applied: verdict.filters_applied,
          };
        });
      case "reviews_top":
        return first().then((page) => ({
          url: page.url,
          asin: String(p.asin),
          summary: parsed(page, (h) => parseReviewSummary(h, opts(page))),
          marketplace: mp,
        }));
      case "review_details":
        return first().then((page) => {
          const r = parsed(
            page,
            (h) => parseReview(h, { ...opts(page), reviewId: String(p.review_id) }),
          );
          return {
            url: page.url,
            asin: r.asin || String(p.asin),
            review: r.review,
            review_id: String(p.review_id),
          };
        });
      case "bestsellers":
        return first().then((page) => {
          const b = parsed(page, (h) => parseBestsellers(h, opts(page)));
          const category = b.category || (p.category as string | undefined) || "";
          return {
            page: b.page,
            count: b.results.length,
            results: b.results,
            category,
            marketplace: mp,
          };
        });
      case "categories":
        return first().then((page) => {
          const c = parsed(page, (h) => parseCategories(h, opts(page)));
          return { count: c.categories.length, categories: c.categories, marketplace: mp };
        });
      case "seller_profile":
        return first().then((page) => parsed(page, (h) => parseSellerProfile(h, opts(page))));
      case "deals":
        return first().then((page) => {
          const d = parsed(page, (h) => parseDeals(h, opts(page)));
          return { count: d.results.length, results: d.results, marketplace: mp };
        });
      case "deal_products":
        return first().then((page) => {
          const d = parsed(page, (h) => parseDealProducts(h, opts(page)));
          return {
            count: d.results.length,
            deal_id: String(p.deal_id),
            results: d.results,
            marketplace: mp,
          };
        });
      case "promotion":
        return first().then((page) => parsed(page, (h) => parsePromotion(h, opts(page))));
      case "asin_to_gtin":
        return first().then((page) => {
          const ids = parsed(page, (h) => parseIdentifiers(h, opts(page))).identifiers;
          const key = GTIN_ORDER.find((k) => ids[k]) ?? Object.keys(ids)[0];
          return {
            asin: String(p.asin),
            gtin: key ? ids[key] : "",
            note: key ? null : "The product page lists no UPC, EAN or GTIN for this ASIN.",
            identifiers: ids,
            marketplace: mp,
          };
        });
      case "gtin_to_asin":
        return this.gtinToAsin(get, mp, String(p.gtin));
      case "scrape":
        return scrape(
          String(p.url),
          (url, code) => fetchPage(this.transport, { url, marketplace: code, signal: req.signal }),
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
    const p = req.params;
    const mp = String(p.marketplace ?? "US");
    const keepSponsored = p.include_sponsored !== false;
    const filterPrime = !!p.prime_only && !PRIME_IN_URL.has(mp);
    const got = await collectSearch({
      firstPage: Number(p.page ?? 1),
      limit: Number(p.limit ?? 0),
      fetchPage: (n) => get(urlOf(n)),
      read: (page) => parsed(page, (h) => parseSearch(h, { marketplace: mp, url: page.url })),
      chargePage: () => req.chargePage(),
      keep: (item) => (keepSponsored || !item.sponsored) && (!filterPrime || item.prime),
    });
    return {
      page: Number(p.page ?? 1),
      count: got.results.length,
      results: got.results,
      marketplace: mp,
      has_next_page: got.has_next_page,
      total_results: got.total_results,
      ...extra,
    };
  }

  private async gtinToAsin(get: (url: string) => Promise<FetchedPage>, mp: string, gtin: string) {
    const results: ProductItem[] =
      (await searchPage(get, searchUrl(mp, { query: gtin }, 1), mp)).results;
    const found = await lookUpGtin(gtin, results, async (asin) => {
      const page = await get(productPageUrl(mp, asin));
      return parsed(page, (h) => parseIdentifiers(h, { marketplace: mp, url: page.url }))
        .identifiers;
    });
    return {
      asin: found.match.asin,
      gtin,
      note: found.note,
      match: found.match,
      marketplace: mp,
      other_matches: found.other_matches,
    };
  }
}

async function searchPage(
  get: (url: string) => Promise<FetchedPage>,
  url: string,
  mp: string,
): Promise<SearchPage> {
  const page = await get(url);
  return parsed(page, (h) => parseSearch(h, { marketplace: mp, url: page.url }));
}

/**
 * Each endpoint's answer around what its page's parser read (issue 16.4): the request-level
 * fields (`marketplace`, `count`, `query`, …) the page does not carry. The one place that builds
 * them, for the HTTP endpoints (source.ts) and for `deno task parse` (cli/parse.ts).
 */
import type { parseProduct } from "../parsers/product.ts";
import type { parseIdentifiers } from "../parsers/identifiers.ts";
import type { parseOffers } from "../parsers/offers.ts";
import type { parseReviews, parseReviewSummaryPage } from "../parsers/reviews.ts";
import type { parseReview } from "../parsers/review.ts";
import type { parseBestsellers } from "../parsers/bestsellers.ts";
import type { parseCategories } from "../parsers/categories.ts";
import type { parseDeals } from "../parsers/deals.ts";
import type { parseDealProducts } from "../parsers/deal_products.ts";
import type { parseSellerProfile } from "../parsers/seller_profile.ts";
import type { parsePromotion } from "../parsers/promotion.ts";
import type { ProductItem } from "../schemas/resources.ts";
import type { PageType } from "../schemas/pages.ts";
import { judgeReviews } from "./reviews_answer.ts";
import { productPageUrl } from "./urls.ts";
import { isEmptyValue } from "../core/empty_value.ts";

export type Params = Record<string, unknown>;
/** What a parser returns, for typing a reading passed around as plain data. */
export type Out<F extends (...a: never[]) => unknown> = ReturnType<F>;

/** What the page that answered says about itself. */
export interface Answered {
  url: string;
  authenticated: boolean;
}

/** A listing's items gathered over one or more pages (search_pages.ts). */
export interface Listing {
  /** The page the marketplace's page states it is. */
  page?: number;
  results: ProductItem[];
  has_next_page: boolean;
  total_results: number;
}

// Primary identifier for `gtin`, most general first.
const GTIN_ORDER = ["GLOBAL_TRADE_IDENTIFICATION_NUMBER", "EAN", "UPC", "JAN", "ISBN_13"];

/** The object with `missing`: which of `fields` came back empty, that is, were not shown. */
function withMissing<T extends object>(value: T, fields: (keyof T)[]): T & { missing: string[] } {
  const missing = fields.filter((f) => isEmptyValue(value[f])).map(String);
  return { ...value, missing };
}

const PRODUCT_FIELDS = [
  "brand",
  "price",
  "title",
  "images",
  "rating",
  "merchant",
  "variations",
  "availability",
  "product_facts",
  "reviews_count",
  "feature_bullets",
  "variants",
  "bestsellers_rank",
] as const;

/**
 * A details answer's in_stock, or null where the page showed nothing of its stock (the answer
 * lists it in `missing`, and its false is only a default): what the price history and watches
 * take as an observation.
 */
export function inStockRead(answer: { in_stock: boolean; missing?: string[] }): boolean | null {
  return answer.missing?.includes("in_stock") ? null : answer.in_stock;
}

export const envelope = {
  details: (_p: Params, _mp: string, _a: Answered, reading: Out<typeof parseProduct>) => {
    const { no_reviews_stated, stock_unread, ...product } = reading;
    // A 0 the page states ("No customer reviews") is shown, not missing.
    const fields = PRODUCT_FIELDS.filter((f) => !(no_reviews_stated && f === "reviews_count"));
    const answer = withMissing(product, [...fields]);
    // in_stock's false is not an empty value, but on a page that shows no stock at all it is
    // only the default (probe BM).
    if (stock_unread) answer.missing.push("in_stock");
    return answer;
  },

  offers: (p: Params, mp: string, _a: Answered, o: Out<typeof parseOffers>) => {
    const asin = o.asin || String(p.asin ?? "");
    return { url: productPageUrl(mp, asin), asin, count: o.offers.length, offers: o.offers };
  },

  reviews: (p: Params, _mp: string, a: Answered, r: Out<typeof parseReviews>) => {
    const verdict = judgeReviews(
      p,
      r.reviews,
      a.url,
      a.authenticated,
      r.page_number,
      r.sort_shown ?? null,
    );
    return {
      url: a.url,
      asin: r.asin || String(p.asin ?? ""),
      note: verdict.note,
      page: verdict.page,
      count: r.reviews.length,
      reviews: r.reviews,
      summary: r.summary,
      authenticated: a.authenticated,
      has_next_page: r.has_next_page,
      filters_applied: verdict.filters_applied,
    };
  },

  reviews_top: (p: Params, mp: string, a: Answered, s: Out<typeof parseReviewSummaryPage>) => ({
    url: a.url,
    // The product the page is for: a redirect to another ASIN (a merged product, a variation) is
    // that product's summary, labelled as such, as details and reviews do (probes CN, CO).
    asin: s.asin || String(p.asin ?? ""),
    summary: s.summary,
    marketplace: mp,
  }),

  review_details: (p: Params, _mp: string, a: Answered, r: Out<typeof parseReview>) => ({
    url: a.url,
    // The product the page names, or none: the review's address names no product, and the one
    // asked for was put on a page that did not say it (probe EH).
    asin: r.asin,
    review: r.review,
    review_id: p.review_id === undefined ? r.review.id : String(p.review_id),
  }),

  bestsellers: (p: Params, mp: string, _a: Answered, b: Out<typeof parseBestsellers>) => ({
    page: b.page,
    count: b.results.length,
    results: b.results,
    category: b.category || (p.category as string | undefined) || "",
    marketplace: mp,
  }),

  categories: (_p: Params, mp: string, _a: Answered, c: Out<typeof parseCategories>) => ({
    count: c.categories.length,
    categories: c.categories,
    marketplace: mp,
  }),

  seller_profile: (
    _p: Params,
    _mp: string,
    _a: Answered,
    profile: Out<typeof parseSellerProfile>,
  ) =>
    withMissing(profile, [
      "logo",
      "name",
      "about",
      "rating",
      "positive_pct",
      "ratings_count",
      "business_details",
    ]),

  deals: (_p: Params, mp: string, _a: Answered, d: Out<typeof parseDeals>) => ({
    count: d.results.length,
    results: d.results,
    marketplace: mp,
  }),

  deal_products: (p: Params, mp: string, _a: Answered, d: Out<typeof parseDealProducts>) => ({
    count: d.results.length,
    deal_id: d.deal_id || String(p.deal_id ?? ""),
    results: d.results,
    marketplace: mp,
  }),

  promotion: (_p: Params, _mp: string, _a: Answered, promotion: Out<typeof parsePromotion>) =>
    withMissing(promotion, [
      "terms",
      "title",
      "ends_at",
      "discount",
      "starts_at",
      "eligible_items",
    ]),

  asin_to_gtin: (p: Params, mp: string, _a: Answered, i: Out<typeof parseIdentifiers>) => {
    const ids = i.identifiers;
    const key = GTIN_ORDER.find((k) => ids[k]) ?? Object.keys(ids)[0];
    const asked = String(p.asin ?? "");
    // The identifiers are those of the product the page shows, and are labelled with its ASIN:
    // labelled with the one asked for, a redirect made them another product's (probe CN).
    const asin = i.asin || asked;
    const notes = [
      ...(asked && asin !== asked ? [`The marketplace shows ASIN ${asked} as ${asin}.`] : []),
      ...(key ? [] : ["The product page lists no UPC, EAN or GTIN for this ASIN."]),
    ];
    return {
      asin,
      gtin: key ? ids[key] : "",
      note: notes.length ? notes.join(" ") : null,
      identifiers: ids,
      marketplace: mp,
    };
  },

  /** Search, category and seller storefront: the grid with the request's own fields. */
  listing: (p: Params, mp: string, got: Listing, extra: Params) => ({
    page: got.page ?? Number(p.page ?? 1),
    count: got.results.length,
    results: got.results,
    marketplace: mp,
    has_next_page: got.has_next_page,
    total_results: got.total_results,
    ...extra,
  }),
};

/** The endpoint whose answer a page of each type feeds (`deno task parse`). */
export const PAGE_ENDPOINT: Record<PageType, string> = {
  search: "search",
  seller_products: "seller_products",
  product: "details",
  offers: "offers",
  reviews: "reviews",
  review: "review_details",
  bestsellers: "bestsellers",
  categories: "categories",
  deals: "deals",
  deal_products: "deal_products",
  seller_profile: "seller_profile",
  promotion: "promotion",
};

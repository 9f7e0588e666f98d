/**
 * Every endpoint of SPEC.md: path, endpoint group (INTERFACE.md's plans), credit cost, query
 * parameters and response schema. Routes, the endpoint index, the OpenAPI document and the
 * validation of both directions all read this one table.
 */
import { z } from "zod";
import { asin, bool, int, num, oneOf, page, type Param, shared, str } from "./params.ts";
import {
  BestSellerItem,
  Category,
  DealItem,
  DealProductItem,
  Identifiers,
  Offer,
  PriceWithList,
  ProductItem,
  Promotion,
  Review,
  ReviewSummary,
  SellerProfile,
  SingleReview,
  UsageRecord,
} from "./resources.ts";
import { BestsellersRank, Crumb, Missing, ProductPage } from "./pages.ts";
import { isMarketplaceUrl } from "./marketplace_url.ts";

/** One observation of price history (upstream/price_history.ts stores only those that fit). */
export const HistoryPoint = z.object({
  observed_at: z.string().describe("When the page was fetched (UTC, ISO 8601)"),
  price: PriceWithList.nullable(),
  in_stock: z.boolean().nullable().describe(
    "null where the page showed nothing of its stock (the details answer listed in_stock in missing)",
  ),
  rating: z.number(),
  reviews_count: z.int(),
  bestsellers_rank: z.array(BestsellersRank),
});

export type Group = "products" | "reviews" | "sellers" | "merchandising" | "utility" | "scrape";
export const GROUPS: readonly Group[] = [
  "products",
  "reviews",
  "sellers",
  "merchandising",
  "utility",
  "scrape",
];

export interface Endpoint {
  /** Stable name, used by the data source to pick an upstream page. */
  name: string;
  path: string;
  group: Group | null;
  cost: number;
  summary: string;
  params: Record<string, Param>;
  response: z.ZodType;
}

const listing = {
  page: z.int(),
  count: z.int(),
  results: z.array(ProductItem),
  marketplace: z.string(),
  has_next_page: z.boolean(),
  total_results: z.int(),
};

const SORTS = ["relevance", "price_asc", "price_desc", "rating", "newest", "bestseller"] as const;
const STARS = ["all", "five", "four", "three", "two", "one"] as const;

// /v1/scrape fetches only marketplace pages; any other URL fails validation (422, uncharged).
const scrapeUrl = str("Absolute URL of a page on a marketplace host", {
  required: true,
  max: 2000,
});
const marketplaceUrl: Param = {
  ...scrapeUrl,
  schema: (scrapeUrl.schema as z.ZodString).refine(
    isMarketplaceUrl,
    "URL should be on a marketplace host",
  ),
};

const dataEndpoints: Endpoint[] = [
  {
    name: "search",
    path: "/v1/products/search",
    group: "products",
    cost: 1,
    summary: "Product search; `limit` auto-paginates and costs 1 credit per upstream page fetched",
    params: {
      query: str("Search keywords", { required: true, max: 300 }),
      page,
      limit: int(
        "0 returns one page; N>0 collects N items over successive pages (after the first, up " +
          "to 4 at once); every page fetched costs 1 credit",
        0,
        200,
        0,
      ),
      sort: oneOf("Result order", SORTS),
      department: str("Department slug", { pattern: /^[a-z0-9-]+$/, max: 60 }),
      min_price: {
        ...num("Lowest price, in marketplace currency; at most max_price", 0, 1e9),
        atMost: "max_price",
      },
      max_price: num("Highest price, in marketplace currency", 0, 1e9),
      prime_only: bool("Only Prime-eligible items", false),
      include_sponsored: bool("Keep sponsored placements", true),
      ...shared,
    },
    response: z.object({ ...listing, sort: z.string().nullable(), query: z.string() }),
  },
  {
    name: "offers",
    path: "/v1/products/offers",
    group: "products",
    cost: 1,
    summary: "Offers: the Buy Box and competing sellers",
    params: { asin, ...shared },
    response: z.object({
      url: z.string(),
      asin: z.string(),
      count: z.int(),
      offers: z.array(Offer),
    }),
  },
  {
    name: "details",
    path: "/v1/products/details",
    group: "products",
    cost: 1,
    summary: "Product details",
    params: { asin, ...shared },
    response: ProductPage.extend({ missing: Missing }),
  },
  {
    name: "bestsellers",
    path: "/v1/bestsellers",
    group: "merchandising",
    cost: 1,
    summary: "Best-seller grid of a category",
    params: {
      // A department's slug, or a tree node under it as /v1/utility/categories lists them.
      category: str("Category slug (`hi`), or `slug/node` (`hi/552684`)", {
        pattern: /^[a-z0-9-]+(?:\/\d{1,20})?$/,
        max: 80,
      }),
      page,
      ...shared,
    },
    response: z.object({
      page: z.int(),
      count: z.int(),
      results: z.array(BestSellerItem),
      category: z.string(),
      marketplace: z.string(),
    }),
  },
  {
    name: "category",
    path: "/v1/products/category",
    group: "products",
    cost: 1,
    summary: "Category browsing by browse node id or slug",
    params: {
      category_id: str("Browse node id or slug", {
        required: true,
        pattern: /^[A-Za-z0-9_-]+$/,
        max: 80,
      }),
      page,
      sort: str("Upstream sort key", { pattern: /^[a-z0-9_-]+$/, max: 40 }),
      ...shared,
    },
    response: z.object({
      ...listing,
      category_id: z.string(),
      breadcrumb: z.array(Crumb).describe(
        "The department path the page shows, top level first, ending at this category ([] when not shown)",
      ),
    }),
  },
  {
    name: "seller_products",
    path: "/v1/sellers/products",
    group: "sellers",
    cost: 1,
    summary: "A seller's storefront listings",
    params: {
      seller_id: str("Merchant token", {
        required: true,
        pattern: /^[A-Z0-9]{8,20}$/,
        upper: true,
      }),
      page,
      ...shared,
    },
    response: z.object({ ...listing, seller_id: z.string() }),
  },
  {
    name: "seller_profile",
    path: "/v1/sellers/profile",
    group: "sellers",
    cost: 1,
    summary: "A seller's profile",
    params: {
      seller_id: str("Merchant token", {
        required: true,
        pattern: /^[A-Z0-9]{8,20}$/,
        upper: true,
      }),
      ...shared,
    },
    response: SellerProfile.extend({ missing: Missing }),
  },
  {
    name: "deals",
    path: "/v1/deals",
    group: "merchandising",
    cost: 1,
    summary: "Current deals",
    params: { ...shared },
    response: z.object({ count: z.int(), results: z.array(DealItem), marketplace: z.string() }),
  },
  {
    name: "deal_products",
    path: "/v1/deals/products",
    group: "merchandising",
    cost: 1,
    summary: "Products of one deal",
    params: {
      deal_id: str("Deal id from /v1/deals", {
        required: true,
        pattern: /^[A-Za-z0-9_-]+$/,
        max: 64,
      }),
      ...shared,
    },
    response: z.object({
      count: z.int(),
      deal_id: z.string(),
      results: z.array(DealProductItem),
      marketplace: z.string(),
    }),
  },
  {
    name: "reviews",
    path: "/v1/products/reviews",
    group: "reviews",
    cost: 1,
    summary: "Product reviews",
    params: {
      asin,
      page,
      star: oneOf("Star filter", STARS),
      sort: oneOf("Review order", ["helpful", "recent"]),
      verified_only: bool("Only verified purchases", false),
      ...shared,
    },
    response: z.object({
      url: z.string(),
      asin: z.string(),
      note: z.string().nullable(),
      page: z.int(),
      count: z.int(),
      reviews: z.array(Review),
      summary: ReviewSummary,
      authenticated: z.boolean(),
      has_next_page: z.boolean(),
      filters_applied: z.boolean(),
    }),
  },
  {
    name: "reviews_top",
    path: "/v1/products/reviews/top",
    group: "reviews",
    cost: 1,
    summary: "Rating summary of a product (the cheaper call: one upstream page, no review bodies)",
    params: { asin, ...shared },
    response: z.object({
      url: z.string(),
      asin: z.string(),
      summary: ReviewSummary,
      marketplace: z.string(),
    }),
  },
  {
    name: "review_details",
    path: "/v1/products/reviews/details",
    group: "reviews",
    cost: 1,
    summary: "One review, untruncated",
    params: {
      asin,
      review_id: str("Review id from /v1/products/reviews", {
        required: true,
        pattern: /^[A-Z0-9]{6,24}$/,
        upper: true,
      }),
      ...shared,
    },
    response: z.object({
      url: z.string(),
      asin: z.string(),
      review: SingleReview,
      review_id: z.string(),
    }),
  },
  {
    name: "history",
    path: "/v1/products/history",
    group: "products",
    cost: 1,
    summary:
      "Price history: what every details fetch this deployment made saw, newest first (not with HISTORY=off)",
    params: { asin, marketplace: shared.marketplace },
    response: z.object({
      asin: z.string(),
      marketplace: z.string(),
      points: z.array(HistoryPoint).max(1000).describe(
        "Newest first, at most 1,000; [] for a product never fetched",
      ),
    }),
  },
  {
    name: "gtin_to_asin",
    path: "/v1/utility/gtin-to-asin",
    group: "utility",
    cost: 1,
    summary: "Find the ASIN of a UPC, EAN or GTIN",
    params: {
      gtin: str("UPC, EAN or GTIN", { required: true, pattern: /^(\d{8}|\d{12,14})$/ }),
      ...shared,
    },
    response: z.object({
      asin: z.string(),
      gtin: z.string(),
      note: z.string().nullable(),
      match: ProductItem,
      marketplace: z.string(),
      other_matches: z.array(z.string()),
    }),
  },
  {
    name: "asin_to_gtin",
    path: "/v1/utility/asin-to-gtin",
    group: "utility",
    cost: 1,
    summary: "The GTINs (UPC, EAN) of an ASIN",
    params: { asin, ...shared },
    response: z.object({
      asin: z.string().describe(
        "The ASIN of the product page read: another than the one asked for where the marketplace " +
          "redirects it (a merged product), which `note` then says",
      ),
      gtin: z.string(),
      note: z.string().nullable(),
      identifiers: Identifiers,
      marketplace: z.string(),
    }),
  },
  {
    name: "categories",
    path: "/v1/utility/categories",
    group: "utility",
    cost: 1,
    summary: "Category list (best-seller slugs)",
    params: { ...shared },
    response: z.object({ count: z.int(), categories: z.array(Category), marketplace: z.string() }),
  },
  {
    name: "promotion",
    path: "/v1/promotions",
    group: "merchandising",
    cost: 1,
    summary: "A promotion and its eligible items",
    params: {
      promo_id: str("Promotion id", { required: true, pattern: /^[A-Z0-9]{6,24}$/, upper: true }),
      ...shared,
    },
    response: Promotion.extend({ missing: Missing }),
  },
  {
    name: "scrape",
    path: "/v1/scrape",
    group: "scrape",
    cost: 2,
    summary: "Any marketplace page: detects its type, then parses it (2 credits)",
    params: {
      url: marketplaceUrl,
    },
    response: z.object({
      url: z.string(),
      type: z.string(),
      marketplace: z.string(),
      data: z.record(z.string(), z.unknown()),
    }),
  },
];

/** Endpoints that cost credits and go to the data source. */
export const DATA_ENDPOINTS: readonly Endpoint[] = dataEndpoints;

/** Product details, which watch refreshes are charged and validated as. */
export const DETAILS_ENDPOINT: Endpoint = dataEndpoints.find((e) => e.name === "details")!;

export const USAGE_ENDPOINT: Endpoint = {
  name: "usage",
  path: "/v1/usage",
  group: null,
  cost: 0,
  summary: "Usage record of the key's account (free to poll)",
  params: {},
  response: UsageRecord,
};

export const INDEX_ENDPOINT: Endpoint = {
  name: "index",
  path: "/v1/",
  group: null,
  cost: 0,
  summary: "Endpoint index (no key needed)",
  params: {},
  response: z.object({
    version: z.string(),
    endpoints: z.array(
      z.object({
        path: z.string(),
        method: z.string(),
        cost: z.int(),
        group: z.string().nullable(),
        summary: z.string(),
      }),
    ),
  }),
};

export const ALL_ENDPOINTS: readonly Endpoint[] = [
  INDEX_ENDPOINT,
  USAGE_ENDPOINT,
  ...dataEndpoints,
];

/**
 * The upstream URL of every endpoint, on every marketplace: the one place that knows Amazon's
 * paths and query parameters (listed in upstream/README.md). `page` is only sent past page 1 so
 * that the URL is the one a visitor's browser shows (and the one a recording holds).
 */
import { marketplace } from "../schemas/marketplaces.ts";
import { upstreamUrl } from "../schemas/marketplace_url.ts";

type Params = Record<string, unknown>;

/** SPEC sort names → Amazon's `s=` keys. */
export const SEARCH_SORTS: Record<string, string> = {
  relevance: "relevanceblender",
  price_asc: "price-asc-rank",
  price_desc: "price-desc-rank",
  rating: "review-rank",
  newest: "date-desc-rank",
  bestseller: "exact-aware-popularity-rank",
};

/** SPEC star filter → Amazon's `filterByStar=`. */
export const REVIEW_STARS: Record<string, string> = {
  all: "all_stars",
  five: "five_star",
  four: "four_star",
  three: "three_star",
  two: "two_star",
  one: "one_star",
};

/** SPEC review order → Amazon's `sortBy=`. */
export const REVIEW_SORTS: Record<string, string> = { helpful: "helpful", recent: "recent" };

// Amazon's "Prime eligible" refinement exists under this id on amazon.com only; elsewhere the
// results are filtered after parsing (see upstream/assemble.ts).
const PRIME_REFINEMENT: Record<string, string> = { US: "p_85:2470955011" };

export function originOf(code: string): string {
  return `https://${marketplace(code).host}`;
}

function build(
  code: string,
  path: string,
  query: Record<string, string | number | undefined> = {},
): string {
  // The path is set, not resolved: a path can never name another host.
  const url = new URL(originOf(code));
  url.pathname = path;
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined && v !== "") url.searchParams.set(k, String(v));
  }
  return upstreamUrl(url).url.href;
}

const pageParam = (page: unknown) => (typeof page === "number" && page > 1 ? page : undefined);

/** The search-results URL for keywords (also used for GTIN lookups), one page of it. */
export function searchUrl(code: string, p: Params, page: number): string {
  const rh: string[] = [];
  if (p.min_price !== undefined || p.max_price !== undefined) {
    // p_36 takes prices in the currency's hundredths: "1000-5000" is 10.00 to 50.00.
    const cents = (v: unknown) => (v === undefined ? "" : String(Math.round(Number(v) * 100)));
    rh.push(`p_36:${cents(p.min_price)}-${cents(p.max_price)}`);
  }
  if (p.prime_only && PRIME_REFINEMENT[code]) rh.push(PRIME_REFINEMENT[code]);
  return build(code, "/s", {
    k: String(p.query),
    i: p.department as string | undefined,
    rh: rh.length ? rh.join(",") : undefined,
    s: p.sort ? SEARCH_SORTS[p.sort as string] : undefined,
    page: pageParam(page),
  });
}

export function productPageUrl(code: string, asin: string): string {
  return build(code, `/dp/${asin}`);
}

/** The all-offers display (AOD) fragment the product page loads when "See all offers" opens. */
export function offersUrl(code: string, asin: string): string {
  return build(code, "/gp/product/ajax/", { asin, pc: "dp", experienceId: "aodAjaxMain" });
}

export function reviewsUrl(code: string, asin: string, p: Params = {}): string {
  return build(code, `/product-reviews/${asin}`, {
    filterByStar: p.star ? REVIEW_STARS[p.star as string] : undefined,
    sortBy: p.sort ? REVIEW_SORTS[p.sort as string] : undefined,
    reviewerType: p.verified_only ? "avp_only_reviews" : undefined,
    pageNumber: pageParam(p.page),
  });
}

export function reviewUrl(code: string, reviewId: string): string {
  return build(code, `/gp/customer-reviews/${reviewId}`);
}

export function bestsellersUrl(code: string, category: string | undefined, page: number): string {
  return build(code, category ? `/gp/bestsellers/${category}` : "/gp/bestsellers", {
    pg: pageParam(page),
  });
}

/** A numeric id is a browse node (`rh=n:`); a slug is a search alias (`i=`). */
export function categoryUrl(code: string, categoryId: string, page: number, sort?: string): string {
  const byNode = /^\d+$/.test(categoryId);
  return build(code, "/s", {
    rh: byNode ? `n:${categoryId}` : undefined,
    i: byNode ? undefined : categoryId,
    s: sort,
    page: pageParam(page),
  });
}

export function sellerProductsUrl(code: string, sellerId: string, page: number): string {
  return build(code, "/s", { me: sellerId, page: pageParam(page) });
}

export function sellerProfileUrl(code: string, sellerId: string): string {
  return build(code, "/sp", { seller: sellerId });
}

export function dealsUrl(code: string): string {
  return build(code, "/deals");
}

export function dealUrl(code: string, dealId: string): string {
  return build(code, `/deal/${dealId}`);
}

export function promotionUrl(code: string, promoId: string): string {
  return build(code, `/promotion/psp/${promoId}`);
}

export function categoriesUrl(code: string): string {
  return build(code, "/gp/bestsellers");
}

export function homeUrl(code: string): string {
  return build(code, "/");
}

/** The location-change flow's endpoint (the "Deliver to" pop-over posts here). */
export function addressChangeUrl(code: string): string {
  return build(code, "/portal-migration/hz/glow/address-change", { actionSource: "glow" });
}

/** The first upstream URL an endpoint requests with these (validated) parameters. */
export function endpointUrl(endpoint: string, p: Params): string {
  const code = String(p.marketplace ?? "US");
  const page = Number(p.page ?? 1);
  switch (endpoint) {
    case "search":
      return searchUrl(code, p, page);
    case "details":
    case "asin_to_gtin":
      return productPageUrl(code, String(p.asin));
    case "offers":
      return offersUrl(code, String(p.asin));
    case "reviews":
      return reviewsUrl(code, String(p.asin), p);
    case "reviews_top":
      return reviewsUrl(code, String(p.asin));
    case "review_details":
      return reviewUrl(code, String(p.review_id));
    case "bestsellers":
      return bestsellersUrl(code, p.category as string | undefined, page);
    case "category":
      return categoryUrl(code, String(p.category_id), page, p.sort as string | undefined);
    case "seller_products":
      return sellerProductsUrl(code, String(p.seller_id), page);
    case "seller_profile":
      return sellerProfileUrl(code, String(p.seller_id));
    case "deals":
      return dealsUrl(code);
    case "deal_products":
      return dealUrl(code, String(p.deal_id));
    case "promotion":
      return promotionUrl(code, String(p.promo_id));
    case "gtin_to_asin":
      return searchUrl(code, { query: p.gtin }, 1);
    case "categories":
      return categoriesUrl(code);
    case "scrape":
      return String(p.url);
    default:
      throw new RangeError(
        `Cannot build an upstream URL as 'endpoint' is unknown: current value is ${endpoint}`,
      );
  }
}

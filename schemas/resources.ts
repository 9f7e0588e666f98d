/**
 * Response resources of SPEC.md, one zod schema each. Routes validate their output against these,
 * parsers return values of these types, and the OpenAPI document is generated from them.
 *
 * Where SPEC.md says "Without a zip, many listings come back with no price or images", the
 * listing's `price` and `image` are nullable; every other field is nullable only where the
 * spec says so. A string field the page lacks is "" (never a value taken from another element).
 */
import { z } from "zod";

/** Price without `list_price`: offers, best sellers, deals. */
export const Price = z.object({
  amount: z.number(),
  display: z.string(),
  currency: z.string(),
});
export type Price = z.infer<typeof Price>;

/** Price with `list_price`: search, category, seller products, details, GTIN match, deal products. */
export const PriceWithList = Price.extend({ list_price: z.number().nullable() });
export type PriceWithList = z.infer<typeof PriceWithList>;

export const ProductItem = z.object({
  url: z.string(),
  asin: z.string(),
  badge: z.string().nullable(),
  image: z.string().nullable(),
  price: PriceWithList.nullable(),
  prime: z.boolean(),
  title: z.string(),
  rating: z.number(),
  delivery: z.string(),
  position: z.int(),
  sponsored: z.boolean(),
  reviews_count: z.int(),
  bought_past_month: z.string().nullable(),
});
export type ProductItem = z.infer<typeof ProductItem>;

export const BestSellerItem = z.object({
  url: z.string(),
  asin: z.string(),
  rank: z.int().min(1),
  image: z.string().nullable(),
  price: Price.nullable(),
  title: z.string(),
  rating: z.number(),
  reviews_count: z.int(),
  /**
   * Beyond the spec: on a page of several ranked lists (the all-departments page, one carousel per
   * department, each from #1), the heading of the item's list ("Bestsellers in Beauty").
   */
  list_title: z.string().optional(),
});
export type BestSellerItem = z.infer<typeof BestSellerItem>;

export const DealItem = z.object({
  url: z.string(),
  asin: z.string(),
  badge: z.string().nullable(),
  image: z.string().nullable(),
  price: Price.nullable(),
  title: z.string().nullable(),
  deal_id: z.string().nullable(),
  discount: z.string(),
});
export type DealItem = z.infer<typeof DealItem>;

export const DealProductItem = z.object({
  url: z.string(),
  asin: z.string(),
  image: z.string().nullable(),
  price: PriceWithList.nullable(),
  title: z.string(),
  rating: z.number(),
  reviews_count: z.int(),
});
export type DealProductItem = z.infer<typeof DealProductItem>;

export const Offer = z.object({
  price: Price.nullable(),
  is_fba: z.boolean(),
  seller: z.object({ id: z.string().nullable(), name: z.string() }),
  is_prime: z.boolean(),
  position: z.int(),
  shipping: z.string(),
  condition: z.string(),
  /** Positive-feedback percentage shown next to the seller, when the page shows one. */
  seller_rating: z.number().nullable(),
});
export type Offer = z.infer<typeof Offer>;

export const Image = z.object({
  url: z.string(),
  width: z.int().nullable(),
  height: z.int().nullable(),
  thumbnail: z.string(),
});
export type Image = z.infer<typeof Image>;

export const Review = z.object({
  id: z.string(),
  url: z.string(),
  body: z.string(),
  date: z.string(),
  title: z.string(),
  author: z.string().nullable(),
  images: z.array(z.string()),
  rating: z.number(),
  country: z.string(),
  variant: z.string(),
  author_id: z.string().nullable(),
  helpful_votes: z.int(),
  verified_purchase: z.boolean(),
});
export type Review = z.infer<typeof Review>;

export const SingleReview = z.object({
  id: z.string(),
  body: z.string(),
  date: z.string(),
  title: z.string(),
  images: z.array(z.string()),
  rating: z.number(),
  country: z.string(),
  variant: z.string(),
  helpful_votes: z.int(),
  verified_purchase: z.boolean(),
});
export type SingleReview = z.infer<typeof SingleReview>;

/** `breakdown` maps a star count ("5" … "1") to the percentage of ratings the page shows for it. */
export const ReviewSummary = z.object({
  rating: z.number(),
  breakdown: z.record(z.string(), z.number()),
  total_ratings: z.int(),
});
export type ReviewSummary = z.infer<typeof ReviewSummary>;

export const Category = z.object({
  id: z.string(),
  url: z.string(),
  name: z.string(),
  type: z.string().describe(
    "bestsellers_slug (the best sellers tree) or search_alias (the search bar's departments)",
  ),
  node: z.string().nullable().describe("The browse node id, where the page names one"),
});
export type Category = z.infer<typeof Category>;

export const SellerProfile = z.object({
  url: z.string(),
  logo: z.string(),
  name: z.string(),
  about: z.string(),
  rating: z.number(),
  seller_id: z.string(),
  positive_pct: z.int(),
  ratings_count: z.int(),
  business_details: z.record(z.string(), z.string()),
});
export type SellerProfile = z.infer<typeof SellerProfile>;

export const Promotion = z.object({
  url: z.string(),
  terms: z.string(),
  title: z.string(),
  ends_at: z.string().nullable(),
  discount: z.string(),
  promo_id: z.string(),
  starts_at: z.string().nullable(),
  marketplace: z.string(),
  eligible_items: z.array(z.string()),
});
export type Promotion = z.infer<typeof Promotion>;

/** Keyed by identifier type (UPC, EAN, GLOBAL_TRADE_IDENTIFICATION_NUMBER, …); digit strings. */
export const Identifiers = z.record(z.string(), z.string().regex(/^\d+$/));
export type Identifiers = z.infer<typeof Identifiers>;

export const UsageRecord = z.object({
  plan: z.string(),
  interval: z.string(),
  status: z.string(),
  included_requests: z.int(),
  requests_used: z.int(),
  requests_remaining: z.int(),
  overage_requests: z.int(),
  rate_limit_per_sec: z.int(),
  period_start: z.string(),
  period_end: z.string(),
});
export type UsageRecord = z.infer<typeof UsageRecord>;

export const ErrorBody = z.object({
  error: z.object({ code: z.string(), message: z.string(), status: z.int() }),
});

export const ValidationErrorBody = z.object({
  detail: z.array(z.object({
    loc: z.tuple([z.literal("query"), z.string()]),
    msg: z.string(),
    type: z.string(),
    input: z.unknown(),
  })),
});

/** A request body's 422 (POST /v1/watches): `loc` is "body" and the path to the field. */
export const BodyValidationErrorBody = z.object({
  detail: z.array(z.object({
    loc: z.tuple([z.literal("body")], z.union([z.string(), z.int()])),
    msg: z.string(),
    type: z.string(),
    input: z.unknown(),
  })),
});

/**
 * What each page parser returns: the part of an endpoint's response that comes from the page.
 * Request-level fields (`marketplace`, `query`, `sort`, `count`, …) are added by the route.
 */
import { z } from "zod";
import {
  BestSellerItem,
  Category,
  DealItem,
  DealProductItem,
  Identifiers,
  Image,
  Offer,
  PriceWithList,
  ProductItem,
  Promotion,
  Review,
  ReviewSummary,
  SellerProfile,
  SingleReview,
} from "./resources.ts";

/** Search results; also category browse, seller storefront listings and GTIN lookups. */
/** One step of a category listing's department path (node id and name, as the page shows). */
export const Crumb = z.object({ id: z.string(), name: z.string() });

export const SearchPage = z.object({
  /** The page the pagination marks as current, 1 when it marks none (`page_stated` false). */
  page: z.int().min(1),
  page_stated: z.boolean(),
  /**
   * The search words (`k`) the page's own pagination links carry, spaces collapsed and as they
   * spell them, null without such links: what tells a further page of a `limit` search from
   * another search's page (compared in lower case).
   */
  links_query: z.string().nullable(),
  /**
   * What else the pagination links carry: the seller (`me`) of a storefront, the alias (`i`) and
   * node path (`rh`) of a category listing. A keyword search's page answered as a storefront or a
   * category was charged, labelled with the seller or node asked for (probe ES).
   */
  links_seller: z.string().nullable().optional(),
  links_alias: z.string().nullable().optional(),
  links_node: z.string().nullable().optional(),
  /** Amazon's sort key the page's sort menu has selected (`price-asc-rank`), null without one. */
  sort_shown: z.string().nullable().optional(),
  results: z.array(ProductItem),
  breadcrumb: z.array(Crumb).optional(),
  has_next_page: z.boolean(),
  /**
   * The highest page number the pagination shows (its links, or the last page it names after an
   * ellipsis), null without one: a `limit` search asks for no page past it ahead of need.
   */
  last_page: z.int().min(1).nullable().optional(),
  total_results: z.int(),
});
export type SearchPage = z.infer<typeof SearchPage>;

/** Honest nulls (issue 16.6): which fields the page did not show, as opposed to ones not read. */
export const Missing = z.array(z.string()).describe(
  'Fields the page did not show: their values are the empty ones (null, "", [], {} or 0). ' +
    "A field not listed was read from the page.",
);

/** One variation of a product (issue 17.1). */
export const Variant = z.object({
  asin: z.string(),
  dimensions: z.record(z.string(), z.string()).describe(
    'The dimension names and values as the page shows them, e.g. {"Color": "Graphite"}',
  ),
  is_current: z.boolean().describe("True for the variation this page shows"),
});

/** One best-seller rank entry (issue 17.2). */
export const BestsellersRank = z.object({
  rank: z.int().min(1),
  category: z.string(),
});

export const ProductPage = z.object({
  url: z.string(),
  asin: z.string(),
  brand: z.string(),
  price: PriceWithList.nullable(),
  title: z.string(),
  images: z.array(Image),
  rating: z.number(),
  in_stock: z.boolean(),
  merchant: z.string(),
  variations: z.object({ parent_asin: z.string() }),
  availability: z.string(),
  product_facts: z.record(z.string(), z.string()),
  reviews_count: z.int(),
  feature_bullets: z.array(z.string()),
  variants: z.array(Variant).describe("Every variation the page lists ([] when none)"),
  bestsellers_rank: z.array(BestsellersRank).describe(
    "Every best-seller rank the page shows, top-level category first when shown ([] when none)",
  ),
});
export type ProductPage = z.infer<typeof ProductPage>;

export const IdentifiersPage = z.object({
  asin: z.string(),
  identifiers: Identifiers,
  /** Codes an identifier row lists after its first (parsers/identifiers.ts), for confirming. */
  also: z.array(z.string().regex(/^\d+$/)).optional(),
});
export type IdentifiersPage = z.infer<typeof IdentifiersPage>;

export const OffersPage = z.object({ asin: z.string(), offers: z.array(Offer) });
export type OffersPage = z.infer<typeof OffersPage>;

export const ReviewsPage = z.object({
  asin: z.string(),
  reviews: z.array(Review),
  summary: ReviewSummary,
  has_next_page: z.boolean(),
  /** The page number the page states (its canonical link's pageNumber); null where it states none. */
  page_number: z.number().int().positive().nullable(),
  /** The sort key (`helpful`, `recent`) the page's sort menu shows; null without one. */
  sort_shown: z.string().nullable().optional(),
});
export type ReviewsPage = z.infer<typeof ReviewsPage>;

export const SingleReviewPage = z.object({ asin: z.string(), review: SingleReview });
export type SingleReviewPage = z.infer<typeof SingleReviewPage>;

export const BestsellersPage = z.object({
  page: z.int().min(1),
  category: z.string(),
  results: z.array(BestSellerItem),
});
export type BestsellersPage = z.infer<typeof BestsellersPage>;

export const CategoriesPage = z.object({ categories: z.array(Category) });
export type CategoriesPage = z.infer<typeof CategoriesPage>;

export const DealsPage = z.object({ results: z.array(DealItem) });
export type DealsPage = z.infer<typeof DealsPage>;

export const DealProductsPage = z.object({
  deal_id: z.string(),
  results: z.array(DealProductItem),
});
export type DealProductsPage = z.infer<typeof DealProductsPage>;

export const SellerProfilePage = SellerProfile;
export type SellerProfilePage = z.infer<typeof SellerProfilePage>;

export const PromotionPage = Promotion;
export type PromotionPage = z.infer<typeof PromotionPage>;

/** Page types the detector can name; `blocked` pages are never parsed into data. */
export const PAGE_TYPES = [
  "search",
  "product",
  "offers",
  "reviews",
  "review",
  "bestsellers",
  "categories",
  "deals",
  "deal_products",
  "seller_profile",
  "seller_products",
  "promotion",
] as const;
export type PageType = typeof PAGE_TYPES[number];

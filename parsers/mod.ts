/**
 * The parser registry: one parser per page type the detector names, so that `/scrape` and
 * `deno task parse` can go from detected type to data without a switch of their own.
 */
import type { PageType } from "../schemas/pages.ts";
import { parseBestsellers } from "./bestsellers.ts";
import { parseCategories } from "./categories.ts";
import { parseDeals } from "./deals.ts";
import { parseDealProducts } from "./deal_products.ts";
import { parseOffers } from "./offers.ts";
import { parseProduct } from "./product.ts";
import { parsePromotion } from "./promotion.ts";
import { parseReview } from "./review.ts";
import { parseReviews } from "./reviews.ts";
import { parseSearch } from "./search.ts";
import { parseSellerProfile } from "./seller_profile.ts";

export type PageParser = (html: string, opts: { marketplace: string; url?: string }) => unknown;

export const PARSERS: Record<PageType, PageParser> = {
  search: parseSearch,
  seller_products: parseSearch, // a storefront is a search restricted to one merchant
  product: parseProduct,
  offers: parseOffers,
  reviews: parseReviews,
  review: parseReview,
  bestsellers: parseBestsellers,
  categories: parseCategories,
  deals: parseDeals,
  deal_products: parseDealProducts,
  seller_profile: parseSellerProfile,
  promotion: parsePromotion,
};

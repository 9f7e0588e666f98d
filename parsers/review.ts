/**
 * The single review page (/gp/customer-reviews/<id>) to a SingleReviewPage.
 *
 * NOT YET VERIFIED ON A REAL SINGLE-REVIEW PAGE: the corpus holds none in the current layout.
 * Public scrapers document that this page renders the review in the same
 * `div[data-hook=review]` markup as the product-reviews list, with the body shown in full, so
 * it is read by the list parser's own `readReview`; its test wraps a review element cut from a
 * real corpus reviews page in a minimal page. (reviews/amazon.com__weih-… is a 2016 single
 * review page in a layout without data-hook attributes; it is not read here.)
 */
import { all, attr, type Element, parseHtml } from "./dom.ts";
import { ParseError } from "./parse_error.ts";
import { asinFromUrl, guarded, queryParam, rejectBlockedPage, rejectEmpty } from "./page_text.ts";
import { readReview } from "./reviews.ts";
import { marketplaceOrParseError } from "./page_common.ts";
import type { Review, SingleReview } from "../schemas/resources.ts";
import type { SingleReviewPage } from "../schemas/pages.ts";

export interface SingleReviewOptions {
  marketplace: string;
  url?: string;
  reviewId?: string;
}

export function parseReview(html: string, opts: SingleReviewOptions): SingleReviewPage {
  return guarded("review", () => {
    rejectEmpty(html, "review");
    const host = marketplaceOrParseError(opts.marketplace).host;
    const found = all(parseHtml(html), "[data-hook=review], [data-hook=product-link]");
    const reviews = found.filter((el) => el.attribs["data-hook"] === "review")
      .map((el) => ({ el, review: readReview(el, host) }))
      .filter((r): r is { el: Element; review: Review } => r.review !== null);
    if (reviews.length === 0) {
      rejectBlockedPage(html);
      throw new ParseError("unrecognised", "Cannot read the review page: it shows no review");
    }
    const wanted = opts.reviewId ? reviews.find((r) => r.review.id === opts.reviewId) : reviews[0];
    if (!wanted) {
      throw new ParseError("not_found", `Cannot find review '${opts.reviewId}' on the review page`);
    }
    const productLink = found.find((el) => el.attribs["data-hook"] === "product-link");
    return {
      asin: asinFromUrl(attr(productLink, "href")) || titleLinkAsin(wanted.el) ||
        asinFromUrl(opts.url),
      review: toSingle(wanted.review),
    };
  });
}

/** The review's own title link carries `ASIN=` when the page has no product link. */
function titleLinkAsin(el: Element): string {
  for (const a of all(el, "a[href*='ASIN=']")) {
    const asin = queryParam(attr(a, "href"), "ASIN");
    if (/^[A-Z0-9]{10}$/.test(asin)) return asin;
  }
  return "";
}

/** The single-review resource is the list review without url, author and author_id. */
function toSingle(r: Review): SingleReview {
  return {
    id: r.id,
    body: r.body,
    date: r.date,
    title: r.title,
    images: r.images,
    rating: r.rating,
    country: r.country,
    variant: r.variant,
    helpful_votes: r.helpful_votes,
    verified_purchase: r.verified_purchase,
  };
}

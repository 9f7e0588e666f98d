/**
 * The single review page (/gp/customer-reviews/<id>) to a SingleReviewPage.
 *
 * Two layouts:
 * - current (not yet seen on a real single-review page): public scrapers document that the page
 *   renders the review in the same `div[data-hook=review]` markup as the product-reviews list,
 *   with the body in full, so the list parser's own `readReview` reads it; its test wraps a
 *   review element cut from a real corpus reviews page in a minimal page;
 * - legacy (verified on the corpus's 2016 page, reviews/amazon.com__weih-…): no data-hook
 *   attributes; the review sits after `<a name="R…">` with its helpful count ("18 of 18 people
 *   found the following review helpful"), a star image whose alt is the rating, the title in
 *   `<b>`, the date in `<nobr>`, a verified stripe, and the body in `div.reviewText`.
 */
import { all, attr, type Element, imageUrl, one, parseHtml, ratingFrom, text } from "./dom.ts";
import { ParseError } from "./parse_error.ts";
import {
  asinFromUrl,
  guarded,
  queryParam,
  rejectBlockedPage,
  rejectEmpty,
  visibleText,
} from "./page_text.ts";
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
      const legacy = legacyReview(html);
      // Another review than the one asked for is no answer to the call (probe CF), as below.
      if (legacy && opts.reviewId && legacy.review.id !== opts.reviewId) {
        throw new ParseError(
          "not_found",
          `Cannot find review '${opts.reviewId}' on the review page`,
        );
      }
      if (legacy) return legacy;
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

/** The 2016 layout (see the top of this file), or null when the page is not in it. */
function legacyReview(html: string): SingleReviewPage | null {
  const body = html.indexOf('class="reviewText"');
  if (body < 0) return null;
  const anchor = html.lastIndexOf('<a name="R', body);
  if (anchor < 0) return null;
  const end = html.indexOf("reviews-voting-stripe", body);
  const doc = parseHtml(html.slice(anchor, end > 0 ? end : body + 20_000));
  const id = attr(one(doc, "a[name]"), "name");
  if (!/^R[A-Z0-9]+$/.test(id)) return null;
  // The page's own lines only: the reviewer's name (a link), title and body are theirs to write,
  // and a body saying "9,999 of 10,000 people found …" gave an unvoted review 9,999 votes (probes
  // AY, BB).
  const block = visibleText(
    doc,
    (e) => e.name === "b" || e.name === "a" || /\breviewText\b/.test(e.attribs.class ?? ""),
  );
  const stars = one(doc, 'img[alt*="out of 5"]');
  // Bounded counts: `\d[\d,]*` would be tried from every digit of a long run (quadratic).
  const helpful = /(\d[\d,]{0,15}) of [\d,]{1,16} people found the following review helpful/.exec(
    block,
  );
  const review: SingleReview = {
    id,
    body: text(one(doc, ".reviewText")),
    date: text(one(doc, "nobr")),
    title: text(one(doc, "b")),
    images: all(doc, "img.review-image-thumbnail").map((img) =>
      imageUrl(attr(img, "large-image-url")) || imageUrl(attr(img, "src"))
    ).filter(Boolean),
    rating: ratingFrom(attr(stars, "alt")) ?? 0,
    country: "",
    variant: "",
    helpful_votes: helpful ? Number(helpful[1].replace(/,/g, "")) : 0,
    verified_purchase: !!one(doc, ".crVerifiedStripe"),
  };
  const asin = /\/product-reviews\/([A-Z0-9]{10})/.exec(html)?.[1] ??
    /class="asinReviewsSummary" name="([A-Z0-9]{10})"/.exec(html)?.[1] ?? "";
  return { asin, review };
}

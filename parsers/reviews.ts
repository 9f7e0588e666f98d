/**
 * The product-reviews page (/product-reviews/<asin>) to a ReviewsPage, and the rating summary
 * of that page or of a product page. Reviews are read by their `data-hook` attributes, which
 * Amazon keeps across locales and redesigns (2018–2025 in the corpus); visible wording is only
 * used where no attribute carries the value (the date line, the helpful-vote sentence).
 */
import {
  all,
  allWhere,
  attr,
  type AttributeReader,
  type Element,
  imageUrl,
  intFrom,
  one,
  parseRegions,
  ratingFrom,
  type RegionChoice,
  text,
} from "./dom.ts";
import { outermost } from "./dom_tree.ts";
import { ParseError } from "./parse_error.ts";
import {
  asinFromUrl,
  asinInput,
  guarded,
  menuChoice,
  rejectBlockedPage,
  rejectEmpty,
  startTagWhere,
  visibleText,
} from "./page_text.ts";
import { marketplaceOrParseError } from "./page_common.ts";
import type { Review, ReviewSummary } from "../schemas/resources.ts";
import type { ReviewsPage } from "../schemas/pages.ts";

export interface ReviewOptions {
  marketplace: string;
  url?: string;
}

/** Everything the reviews page is read from, found in one pass over the document. */
interface ReviewsParts {
  reviews: Element[];
  productLinks: Element[];
  averageText: Element | null;
  totalText: Element | null;
  histograms: Element[];
  pagination: Element | null;
  reviewList: Element | null;
  productAverage: Element | null;
  productTotal: Element | null;
  /** The mobile product page's rating link: stars ("5つ星のうち4.1") and count ("(201)"). */
  mobileRating: Element | null;
}

// The parts read (PARTS): [data-hook=review], [data-hook=product-link],
// [data-hook=rating-out-of-text], [data-hook=average-star-rating], [data-hook=total-review-count],
// #histogramTable, ul.a-pagination, #cm_cr-review_list, #acrPopover, #acrCustomerReviewText,
// #acrCustomerReviewLink (mobile).

export function parseReviews(html: string, opts: ReviewOptions): ReviewsPage {
  return guarded("reviews", () => {
    rejectEmpty(html, "reviews");
    const host = marketplaceOrParseError(opts.marketplace).host;
    const parts = findParts(html);
    if (parts.reviews.length === 0 && !parts.reviewList && !parts.totalText) {
      rejectBlockedPage(html);
      throw new ParseError("unrecognised", "Cannot read the reviews page: it has no review list");
    }
    const reviews = parts.reviews.map((el) => readReview(el, host)).filter((r): r is Review =>
      r !== null
    );
    return {
      asin: pageAsin(parts) || asinInput(html) || asinFromUrl(opts.url),
      reviews,
      summary: readSummary(parts),
      has_next_page: hasNextPage(parts.pagination),
      page_number: statedPage(html),
      // The order its sort menu shows; with none marked, the first, as a browser shows it.
      sort_shown: menuChoice(html, "sort-order-dropdown", true),
    };
  });
}

/**
 * The `pageNumber` of the page's canonical link (`…/product-reviews/ASIN?pageNumber=10`), and 1
 * for a reviews canonical link without one, as the corpus's first pages have it: read as stating
 * nothing, a first page answered for page 3 was labelled 3, applied (probe EH).
 */
function statedPage(html: string): number | null {
  const canonical = startTagWhere(html, "link", /rel=["']?canonical["']?/i);
  const n = Number(/[?&;]pageNumber=(\d{1,4})\b/.exec(canonical)?.[1] ?? NaN);
  if (n >= 1) return n;
  return /\/product-reviews\/[A-Z0-9]{10}(?:[/?"'#]|$)/.test(canonical) ? 1 : null;
}

/** The rating summary of a reviews page or of a product page (#averageCustomerReviews, histogram). */
export function parseReviewSummary(html: string, opts: ReviewOptions): ReviewSummary {
  return parseReviewSummaryPage(html, opts).summary;
}

/**
 * The rating summary with the ASIN of the product it is for: the reviewed product's link on a
 * reviews page, as parseReviews reads it, else a product page's own `input#ASIN`, else the ASIN
 * of the URL that answered.
 */
export function parseReviewSummaryPage(
  html: string,
  opts: ReviewOptions,
): { asin: string; summary: ReviewSummary } {
  return guarded("review summary", () => {
    rejectEmpty(html, "review summary");
    marketplaceOrParseError(opts.marketplace).host;
    const parts = findParts(html);
    if (
      !parts.averageText && !parts.totalText && parts.histograms.length === 0 &&
      !parts.productAverage && !parts.productTotal && !parts.mobileRating
    ) {
      rejectBlockedPage(html);
      throw new ParseError("unrecognised", "Cannot read the rating summary: the page shows none");
    }
    const asin = pageAsin(parts) || asinInput(html) || asinFromUrl(opts.url);
    return { asin, summary: readSummary(parts) };
  });
}

const PART_HOOKS = new Set([
  "review",
  "product-link",
  "rating-out-of-text",
  "average-star-rating",
  "total-review-count",
]);
const PART_IDS = new Set([
  "histogramTable",
  "cm_cr-review_list",
  "acrPopover",
  "acrCustomerReviewText",
  "acrCustomerReviewLink",
]);
const PAGINATION_CLASS = /(?:^|\s)a-pagination(?:\s|$)/;
// Where reading starts (see parseRegions): the first part PARTS names.
const PARTS_START =
  /data-hook="(?:review|product-link|rating-out-of-text|average-star-rating|total-review-count)"|id="(?:histogramTable|cm_cr-review_list|acrPopover|acrCustomerReviewText|acrCustomerReviewLink)"|a-pagination/;

function findParts(html: string): ReviewsParts {
  const parts: ReviewsParts = {
    reviews: [],
    productLinks: [],
    averageText: null,
    totalText: null,
    histograms: [],
    pagination: null,
    reviewList: null,
    productAverage: null,
    productTotal: null,
    mobileRating: null,
  };
  // Only the parts PARTS names are built as DOM; reading ends at the page footer.
  let kept = false;
  const chooseRegion = (name: string, attr: AttributeReader): RegionChoice => {
    if (isPart(name, attr)) {
      kept = true;
      return "keep";
    }
    if (kept && attr("id") === "navFooter") return "stop";
  };
  const doc = parseRegions(html, chooseRegion, { from: PARTS_START });
  for (const el of allWhere(doc.children, isPart)) sortPart(el, parts);
  // A review nested inside another would be read again at every level, each time finding the
  // same innermost body: a page nesting them 128 deep repeated one text 128 times.
  parts.reviews = outermost(parts.reviews);
  return parts;
}

/** True for an element PARTS names, read without a selector engine. */
function isPart(name: string, attr: AttributeReader): boolean {
  const hook = attr("data-hook");
  if (hook !== undefined && PART_HOOKS.has(hook)) return true;
  const id = attr("id");
  if (id !== undefined && PART_IDS.has(id)) return true;
  return name === "ul" && PAGINATION_CLASS.test(attr("class") ?? "");
}

function sortPart(el: Element, parts: ReviewsParts): void {
  const hook = el.attribs["data-hook"];
  const id = el.attribs.id;
  if (hook === "review") parts.reviews.push(el);
  else if (hook === "product-link") parts.productLinks.push(el);
  else if (hook === "rating-out-of-text" || hook === "average-star-rating") {
    parts.averageText ??= el;
  } else if (hook === "total-review-count") parts.totalText ??= el;
  else if (id === "histogramTable") parts.histograms.push(el);
  else if (id === "cm_cr-review_list") parts.reviewList ??= el;
  else if (id === "acrPopover") parts.productAverage ??= el;
  else if (id === "acrCustomerReviewText") parts.productTotal ??= el;
  else if (id === "acrCustomerReviewLink") parts.mobileRating ??= el;
  else if (el.name === "ul") parts.pagination = el; // the last one sits under the review list
}

function pageAsin(parts: ReviewsParts): string {
  // The reviewed product is the "product_top" link; the others are similar-item suggestions.
  const top = parts.productLinks.find((a) => attr(a, "href").includes("product_top")) ??
    parts.productLinks[0];
  return asinFromUrl(attr(top, "href"));
}

/**
 * A product page answered for its reviews holds no review pagination, but may hold a carousel's
 * hidden one, whose "next" is a script link (`javascript:void(0)`, class
 * carousel-prevnext-disabled): read as a next page of reviews, it sent clients paging on.
 */
function hasNextPage(pagination: Element | null): boolean {
  if (!pagination) return false;
  const last = one(pagination, "li.a-last");
  const link = last && one(last, "a[href]");
  return !!link && !/\ba-disabled\b|\bcarousel-prevnext-disabled\b/.test(attr(last, "class")) &&
    !/^\s*javascript:/i.test(attr(link, "href"));
}

// ---------------------------------------------------------------------------------------------
// Summary

function readSummary(parts: ReviewsParts): ReviewSummary {
  return {
    rating: averageRating(parts),
    breakdown: readHistogram(parts.histograms),
    total_ratings: intFrom(visibleText(parts.totalText ?? parts.productTotal)) ??
      intFrom(text(one(parts.mobileRating ?? [], ".cm-cr-review-stars-text-sm"))) ?? 0,
  };
}

function averageRating(parts: ReviewsParts): number {
  const fromText = ratingFrom(visibleText(parts.averageText));
  if (fromText !== null) return fromText;
  const popover = parts.productAverage;
  return ratingFrom(attr(popover, "title")) ?? ratingFrom(visibleText(popover)) ??
    ratingFrom(text(one(parts.mobileRating ?? [], ".a-icon-alt"))) ?? 0;
}

const STAR_WORDS: Record<string, string> = { five: "5", four: "4", three: "3", two: "2", one: "1" };

/** "5".."1" to the percentage shown; rows that show no percentage (pages without ratings) are left out. */
function readHistogram(histograms: Element[]): Record<string, number> {
  const breakdown: Record<string, number> = {};
  // Pages nest two elements with this id, and browser-saved copies may leave the outer one empty.
  // Rows nested in a row would read the enclosing row's text again at every level.
  const rows = histograms.length ? outermost(all(histograms, "tr.a-histogram-row, li")) : [];
  for (const row of rows) {
    const star = rowStar(row);
    const pct = rowPercent(row);
    if (star && pct !== null && !(star in breakdown)) breakdown[star] = pct;
  }
  return breakdown;
}

function rowStar(row: Element): string {
  const link = one(row, "a[href*=filterByStar]");
  const word = /filterByStar=(\w+?)_star/.exec(attr(link, "href"))?.[1];
  if (word && STAR_WORDS[word]) return STAR_WORDS[word];
  // Rows start with their own label ("4 star", "4 stelle", "星4つ"): its digit is the star count.
  return /([1-5])/.exec(rowText(row))?.[1] ?? "";
}

// 2024+ rows repeat every row's label and percentage in hidden "histogram-column-space" spans.
function rowText(row: Element): string {
  return visibleText(row, (e) => /histogram-column-space/.test(e.attribs.class ?? ""));
}

function rowPercent(row: Element): number | null {
  const meter = attr(one(row, ".a-meter[aria-valuenow]"), "aria-valuenow");
  if (/^\d+%?$/.test(meter)) return parseInt(meter, 10);
  // Older tables show the percentage only as the row's last cell.
  const m = /(\d{1,3})\s*%\s*$/.exec(rowText(row));
  return m ? parseInt(m[1], 10) : null;
}

// ---------------------------------------------------------------------------------------------
// One review: shared by this list parser and parsers/review.ts

/**
 * Reads one `div[data-hook=review]` (the list page's and the single review page's markup).
 * Returns null for an element without a review id, which is a template rather than a review.
 */
export function readReview(el: Element, host: string): Review | null {
  const id = reviewId(el);
  if (!id) return null;
  // Older pages (2012–2019) name the author in a "By <a data-hook=review-author>" byline.
  const profile = one(
    el,
    "a.a-profile, [data-hook=genome-widget] a[href*=profile], a[data-hook=review-author]",
  );
  const { country, date } = splitDateLine(visibleText(one(el, "[data-hook=review-date]")));
  return {
    id,
    url: `https://${host}/gp/customer-reviews/${id}`,
    body: reviewBody(el),
    date,
    title: reviewTitle(el),
    author: visibleText(one(el, ".a-profile-name, a[data-hook=review-author]")) || null,
    images: reviewImages(el),
    rating: reviewRating(el),
    country,
    variant: formatStrip(one(el, "[data-hook=format-strip], [data-hook=format-strip-linkless]")),
    author_id: profileId(attr(profile, "href")),
    helpful_votes: helpfulVotes(visibleText(one(el, "[data-hook=helpful-vote-statement]"))),
    verified_purchase: one(el, "[data-hook=avp-badge], [data-hook=avp-badge-linkless]") !== null,
  };
}

function reviewId(el: Element): string {
  const own = /^(?:customer_review-)?(R[A-Z0-9]{6,20})$/.exec(attr(el, "id"))?.[1];
  if (own) return own;
  const link = one(el, "a[href*='/customer-reviews/']");
  return /\/customer-reviews\/(R[A-Z0-9]{6,20})/.exec(attr(link, "href"))?.[1] ?? "";
}

// The star icon's text ("5.0 out of 5 stars") sits inside the title link; the title is the rest.
const isIcon = (e: Element) => e.name === "i" || /\ba-icon-alt\b/.test(e.attribs.class ?? "");

function reviewTitle(el: Element): string {
  return visibleText(one(el, "[data-hook=review-title]"), isIcon);
}

function reviewRating(el: Element): number {
  const star = one(
    el,
    "[data-hook=review-star-rating], [data-hook=cmps-review-star-rating], i.review-rating",
  );
  const fromText = ratingFrom(visibleText(star));
  if (fromText !== null) return fromText;
  // Some layouts leave the icon's alt text empty; its class still says a-star-4 / a-star-4-5.
  const cls = /\ba-star-(\d)(?:-(5))?\b/.exec(attr(star, "class"));
  return cls ? Number(cls[1]) + (cls[2] ? 0.5 : 0) : 0;
}

function reviewBody(el: Element): string {
  const body = one(el, "[data-hook=review-body]");
  // Long reviews carry the full text in a collapsed span and a "Read more" control beside it.
  const full = body && one(body, "[data-hook=review-collapsed]");
  return visibleText(
    full ?? body,
    (e) => /\ba-expander-header\b|\bcr-translate\b/.test(e.attribs.class ?? ""),
  );
}

function reviewImages(el: Element): string[] {
  const urls: string[] = [];
  for (const img of all(el, "img[data-hook=review-image-tile], img.review-image-tile")) {
    // Product pages load the tiles lazily: `src` is a grey pixel, the image is in `data-src`
    // (16 reviews on 8 corpus pages answered the pixel, their images folded into one).
    const src = imageUrl(attr(img, "data-src")) || imageUrl(attr(img, "src"));
    if (src && !urls.includes(src)) urls.push(src);
  }
  return urls;
}

/** "Size: 27-Inch | Style: Curved": the strip's parts, which the page separates with icons. */
function formatStrip(strip: Element | null): string {
  if (!strip) return "";
  const link = one(strip, "a") ?? strip;
  const parts: string[] = [];
  let current = "";
  for (const child of link.children) {
    if (child.type === "tag" && (child as Element).name === "i") {
      parts.push(current);
      current = "";
    } else current += " " + visibleText(child);
  }
  parts.push(current);
  return parts.map((p) => p.replace(/\s+/g, " ").trim()).filter(Boolean).join(" | ");
}

/** amzn1.account.… from /gp/profile/amzn1.account.X/…, or the older /gp/pdp/profile/A1… id. */
function profileId(href: string): string | null {
  return /\/profile\/(amzn1\.account\.[A-Z0-9]+|A[A-Z0-9]{8,20})(?:[/?]|$)/.exec(href)?.[1] ?? null;
}

/**
 * "42 people found this helpful" → 42. Every locale writes the singular without a digit
 * ("One person…", "Una persona…", "Eén persoon…"), so a statement holding no number means 1.
 */
export function helpfulVotes(statement: string): number {
  if (!statement) return 0;
  return intFrom(statement) ?? 1;
}

// The page's own date line, per language: [pattern, index of country group, index of date group].
const DATE_LINES: [RegExp, number, number][] = [
  [/^Reviewed in (.+?) on (.+)$/i, 1, 2],
  [/^Recensito in (.+?) (?:il |l'|l’)(.+)$/i, 1, 2],
  [/^Beoordeeld in (.+?) op (.+)$/i, 1, 2],
  [/^Rezension aus (.+?) vom (.+)$/i, 1, 2],
  [/^Comment(?:é|e) (?:en |au |aux |à |a )?(.+?) le (.+)$/i, 1, 2],
  [/^Revisado en (.+?) el (.+)$/i, 1, 2],
  [/^Reseñado en (.+?) el (.+)$/i, 1, 2],
  [/^Avaliado (?:no |na |nos |nas |em )?(.+?) em (.+)$/i, 1, 2],
  [/^Recenserad i (.+?) den (.+)$/i, 1, 2],
  [/^Zrecenzowano w (.+?) dnia (.+)$/i, 1, 2],
  [/^(.+?)に(.+?)でレビュー済み$/, 2, 1],
  [/^تمت المراجعة في (.+?) في (.+)$/, 1, 2],
];

/**
 * The longest date line split. Real ones are short ("Reviewed in the United States on March 3,
 * 2023": 49 characters); each pattern's lazy groups retry at every position, which for the
 * Japanese one is quadratic in the line's length ("に" repeated, no "でレビュー済み").
 */
const MAX_DATE_LINE = 300;

/** "Reviewed in the United States on March 3, 2023" → country and date as the page writes them. */
export function splitDateLine(line: string): { country: string; date: string } {
  if (line.length > MAX_DATE_LINE) return { country: "", date: line };
  for (const [re, c, d] of DATE_LINES) {
    const m = re.exec(line);
    if (m) return { country: m[c].trim(), date: m[d].trim() };
  }
  // Older pages print only the date ("14 novembre 2018"), in English after the byline's "on".
  return { country: "", date: line.replace(/^on\s+(?=\S)/i, "") };
}

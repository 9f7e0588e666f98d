/**
 * Amazon search-result grids to a SearchPage: keyword search, category browse (`/s?rh=n:…`),
 * seller storefronts (`/s?me=…`) and GTIN lookups all render the same grid.
 *
 * Layouts read: the 2020+ grid (`div[data-component-type="s-search-result"]`, with or without the
 * 2024+ `data-cy` recipes) and the 2018-19 list (`li.s-result-item[id^="result_"]`). Carousels
 * and brand widgets inside the main slot also carry `data-asin`, but are not results: only the
 * two container kinds above are, so `position` counts what the grid shows, sponsored included.
 *
 * Language-independent by design: every value is found by markup (classes, `data-*`, `aria-*`),
 * and text is only read for numbers, so a page in Japanese or one re-encoded into mojibake still
 * yields prices, counts and ratings.
 */
import { type Element, type Document, all, attr, intFrom, one, parseHtml, ratingFrom, text } from "./dom.ts";
import { parsePrice } from "./price.ts";
import { ParseError } from "./parse_error.ts";
import { marketplace } from "../schemas/marketplaces.ts";
import type { SearchPage } from "../schemas/pages.ts";
import type { PriceWithList, ProductItem } from "../schemas/resources.ts";

export interface ParseSearchOptions {
  /** Marketplace code ("US", "DE", …): names the host of result URLs and the default currency. */
  marketplace: string;
  /** The page's own URL, when known; used only in error messages. */
  url?: string;
}

const RESULT_CARDS = 'div[data-component-type="s-search-result"][data-asin], li.s-result-item[data-asin]';
const ASIN = /^[A-Z0-9]{10}$/;

/** Parses a search-result page; throws ParseError, and only ParseError, when it cannot. */
export function parseSearch(html: string, opts: ParseSearchOptions): SearchPage {
  const where = opts?.url ? ` (${opts.url})` : "";
  if (typeof html !== "string" || !/<[a-z!]/i.test(html)) {
    throw new ParseError("empty", `Cannot parse search page as the body holds no HTML${where}`);
  }
  try {
    const host = marketplace(opts.marketplace).host;
    return readPage(parseHtml(html), opts.marketplace, host, where);
  } catch (e) {
    if (e instanceof ParseError) throw e;
    // A malformed page must surface as an upstream failure, not crash the route.
    const why = e instanceof Error ? e.message : String(e);
    throw new ParseError("unrecognised", `Cannot parse search page${where}: ${why}`);
  }
}

function readPage(doc: Document, code: string, host: string, where: string): SearchPage {
  const cards = all(doc, RESULT_CARDS).filter((c) => ASIN.test(attr(c, "data-asin")));
  if (cards.length === 0) assertGenuinelyEmpty(doc, where);
  const results = cards.map((card, i) => readItem(card, i + 1, code, host));
  return {
    page: currentPage(doc),
    results,
    has_next_page: hasNextPage(doc),
    // Newer grids (2025) print no "1-48 of over N results" banner; the page then vouches for
    // only the results it shows, so that count is the honest total.
    total_results: totalResults(doc) ?? results.length,
  };
}

/**
 * A page with zero cards is a result only when Amazon rendered its result region: the main slot
 * (2020+), the old result list, or a "no results" notice. A page without that region (a captcha,
 * or the nav-and-footer shell Amazon serves while redirecting a search to a browse node) is not a
 * search page with no results, so it is refused rather than reported as empty.
 */
function assertGenuinelyEmpty(doc: Document, where: string): void {
  if (one(doc, 'form[action*="validateCaptcha"], #captchacharacters')) {
    throw new ParseError("blocked", `Cannot parse search page as Amazon served a robot check${where}`);
  }
  const region = one(
    doc,
    '.s-main-slot, [data-component-type="s-search-results"], #s-results-list-atf, #atfResults, #noResultsTitle',
  );
  if (!region) {
    throw new ParseError("incomplete", `Cannot parse search page as it holds no result list${where}`);
  }
}

function readItem(card: Element, position: number, code: string, host: string): ProductItem {
  const asin = attr(card, "data-asin");
  const star = one(card, 'i[class*="a-icon-star"]');
  return {
    url: `https://${host}/dp/${asin}`,
    asin,
    badge: badgeOf(card),
    image: imageOf(card),
    price: priceOf(card, code),
    prime: one(card, 'i.a-icon-prime, .s-prime, [aria-label="Amazon Prime"]') !== null,
    title: titleOf(card),
    rating: star ? ratingOf(star) : 0,
    delivery: deliveryOf(card),
    position,
    sponsored: isSponsored(card),
    reviews_count: star ? reviewsCountOf(star) : 0,
    bought_past_month: boughtPastMonthOf(card),
  };
}

// --- item fields ---------------------------------------------------------------------------

/** The product title: the heading inside the product link, without screen-reader-only prefixes. */
function titleOf(card: Element): string {
  const h2 = one(card, "a h2") ?? one(card, "h2 a") ?? one(card, "h2");
  return h2 ? visibleText(h2) : "";
}

/** Text of a node without `.a-offscreen` parts (the old grid prefixes titles with "[Sponsored]"). */
function visibleText(node: Element): string {
  const parts: string[] = [];
  const walk = (n: Element["children"][number]) => {
    if (n.type === "text") parts.push((n as unknown as { data: string }).data);
    else if ("children" in n && !hasClass(n as Element, "a-offscreen")) (n as Element).children.forEach(walk);
  };
  node.children.forEach(walk);
  return parts.join("").replace(/\s+/g, " ").trim();
}

function imageOf(card: Element): string | null {
  const img = one(card, '[data-component-type="s-product-image"] img, img.s-access-image') ??
    one(card, "img.s-image");
  const src = attr(img, "src");
  return src && !src.startsWith("data:") ? src : null;
}

/** The offer price and the struck-through comparison price ("List:", "Typical:", "RRP:", "M.R.P:"). */
function priceOf(card: Element, code: string): PriceWithList | null {
  const shown = one(card, "span.a-price:not(.a-text-price)");
  const priceText = shown ? priceTextOf(shown) : text(one(card, "span.s-price"));
  const price = priceText ? parsePrice(priceText, code) : null;
  if (!price) return null;
  const struck = one(card, 'span.a-price.a-text-price[data-a-strike="true"]') ?? one(card, "span.a-text-strike");
  const listText = struck ? priceTextOf(struck) : "";
  return { ...price, list_price: listText ? parsePrice(listText, code)?.amount ?? null : null };
}

/** An `a-price`'s text: the screen-reader copy, else the visible symbol and digits. */
function priceTextOf(price: Element): string {
  return text(one(price, ".a-offscreen")) || text(one(price, '[aria-hidden="true"]')) || text(price);
}

function ratingOf(star: Element): number {
  const alt = text(one(star, ".a-icon-alt")) || text(star);
  return ratingFrom(alt) ?? decimalRating(alt) ?? 0;
}

/** A rating whose surrounding words are unreadable (mojibake): the one decimal number ≤ 5. */
function decimalRating(s: string): number | null {
  const m = /(?:^|[^\d.,])([0-5][.,]\d)(?![\d])/.exec(s);
  return m ? parseFloat(m[1].replace(",", ".")) : null;
}

/**
 * The ratings count beside the stars: the first link or labelled span after the star in its row.
 * Its aria-label holds the exact count ("1,576 ratings") where the text abbreviates it ("(1.5K)").
 */
function reviewsCountOf(star: Element): number {
  const row = rowOf(star);
  for (const el of all(row, "a, span[aria-label]")) {
    if (contains(el, star) || hasClass(el, "a-popover-trigger")) continue;
    const label = attr(el, "aria-label");
    if (label && /\d/.test(label) && ratingFrom(label) === null) {
      return intFrom(label) ?? 0;
    }
    const shown = text(el);
    if (/^\(?\d[\d.,\s]*[KkMm]?\)?$/.test(shown)) return abbreviatedCount(shown);
  }
  return 0;
}

/** "(1.5K)" → 1500, "(1,213)" → 1213, "448" → 448. */
function abbreviatedCount(s: string): number {
  const m = /(\d[\d.,\s]*)([KkMm])?/.exec(s);
  if (!m) return 0;
  if (!m[2]) return intFrom(m[1]) ?? 0;
  const n = parseFloat(m[1].replace(/\s/g, "").replace(",", "."));
  return Math.round(n * (/k/i.test(m[2]) ? 1_000 : 1_000_000));
}

/** The row holding the stars and their count: the reviews block, else the nearest `a-row`. */
function rowOf(star: Element): Element {
  let node: Element = star;
  for (let depth = 0; depth < 6 && node.parent && node.parent.type === "tag"; depth++) {
    node = node.parent as Element;
    if (hasClass(node, "a-row") || attr(node, "data-cy") === "reviews-block") return node;
  }
  return node;
}

/** Sponsored placements carry `AdHolder` on the card or a "Sponsored" label inside it. */
function isSponsored(card: Element): boolean {
  return hasClass(card, "AdHolder") ||
    one(card, ".puis-sponsored-label-text, .s-sponsored-label-text, .s-sponsored-header") !== null;
}

/** Status badges ("Best Seller", "Amazon's Choice", "Overall Pick"); deal badges are price copy. */
function badgeOf(card: Element): string | null {
  for (const badge of all(card, "span.a-badge")) {
    if (attr(badge, "data-a-badge-type") === "deal") continue;
    const label = text(one(badge, ".a-badge-label")) || text(badge);
    if (label) return label;
  }
  return null;
}

/**
 * Delivery copy. 2025 cards have a `udm-delivery-block` of primary and secondary messages; 2020-24
 * cards one labelled span per delivery line (stock warnings, in `a-color-price`, are not
 * delivery); the 2018-19 list a plain line under the price.
 */
function deliveryOf(card: Element): string {
  const udm = all(card, ".udm-primary-delivery-message, .udm-secondary-delivery-message")
    .map(text).filter(Boolean);
  if (udm.length) return udm.join(" ");
  const scope = one(card, '[data-cy="delivery-recipe"]') ?? card;
  const lines = all(scope, ".s-align-children-center span[aria-label]")
    .filter((s) => !one(s, ".a-color-price") && !/\bstar|\d[.,]\d .*5/.test(attr(s, "aria-label")))
    .map((s) => attr(s, "aria-label")).filter((l) => l && !/^[\d.,\s]+$/.test(l));
  if (lines.length) return lines.join(" ");
  return text(one(card, ".a-span7 .a-spacing-mini span.a-size-small.a-color-secondary"));
}

/**
 * Purchase-volume copy ("1K+ bought in past month", "Plus de 100 achetés…", "過去1か月で50点以上…").
 * The same slot also holds other notes ("added in the past month"), so the text must show a
 * count: a number with "+"/K/以上, or "over/plus de/mehr als… N"; inside the 2024+ reviews block,
 * where only this note sits, any count of two or more digits (mojibake pages keep the digits).
 */
function boughtPastMonthOf(card: Element): string | null {
  const inBlock = all(card, '[data-cy="reviews-block"] .a-row.a-size-base span.a-color-secondary')
    .map(text).find((t) => /\d{2,}|\d\s*[KkMm万千]/.test(t));
  if (inBlock) return inBlock;
  const anywhere = all(card, ".a-row.a-size-base > span.a-size-base.a-color-secondary").map(text)
    .find((t) => VOLUME.test(t));
  return anywhere ?? null;
}
const VOLUME =
  /\d\s*(?:[KkMm]|mil|万|千)?\s*\+|\d\s*(?:個|点|件|人)?以上|(?:plus de|mehr als|meer dan|mais de|más de|over|più di)\s*\d/i;

// --- page fields ---------------------------------------------------------------------------

function currentPage(doc: Document): number {
  const selected = one(doc, ".s-pagination-selected, ul.a-pagination li.a-selected, #pagn .pagnCur");
  const n = intFrom(text(selected));
  return n && n >= 1 ? n : 1;
}

function hasNextPage(doc: Document): boolean {
  return one(doc, "a.s-pagination-next, ul.a-pagination li.a-last:not(.a-disabled) a, a#pagnNextLink") !== null;
}

/**
 * The total from the result banner ("1-48 of over 10,000 results for", "1-16 von 139 Ergebnissen",
 * "1-24的218 個結果"). The banner names the shown range and the total, so the total is its largest
 * number; the query, which may hold numbers, sits in a later span and is not read.
 */
function totalResults(doc: Document): number | null {
  const bar = one(doc, '[data-component-type="s-result-info-bar"]');
  let banner = "";
  if (bar) banner = all(bar, "h1 span, h2 span").map(text).find((t) => /\d/.test(t)) ?? "";
  const old = banner ? null : one(doc, "#s-result-count");
  if (old) banner = old.children.filter((c) => c.type === "text").map((c) => text(c)).join(" ");
  const numbers = banner.match(/\d{1,3}(?:[.,\s\u00a0\u202f]\d{3})+|\d+/g);
  if (!numbers) return null;
  return Math.max(...numbers.map((n) => parseInt(n.replace(/\D/g, ""), 10)));
}

// --- DOM helpers ---------------------------------------------------------------------------

function hasClass(el: Element, name: string): boolean {
  const cls = el.attribs?.class;
  return cls ? cls.split(/\s+/).includes(name) : false;
}

function contains(ancestor: Element, node: Element): boolean {
  for (let n: Element["parent"] = node; n; n = n.parent) if (n === ancestor) return true;
  return false;
}

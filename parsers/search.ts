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
import {
  all,
  type AnyNode,
  attr,
  type AttributeReader,
  type Document,
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
import { spendText } from "./page_budget.ts";
import { listPriceIn, parsePrice } from "./price.ts";
import { ParseError } from "./parse_error.ts";
import { menuChoice, untruncated } from "./page_text.ts";
import { marketplace } from "../schemas/marketplaces.ts";
import type { SearchPage } from "../schemas/pages.ts";
import type { PriceWithList, ProductItem } from "../schemas/resources.ts";

export interface ParseSearchOptions {
  /** Marketplace code ("US", "DE", …): names the host of result URLs and the default currency. */
  marketplace: string;
  /** The page's own URL, when known; used only in error messages. */
  url?: string;
  /**
   * Also read the department panel into `breadcrumb` (category listings): it sits in the filter
   * panel after the results, which keyword searches do not read.
   */
  departments?: boolean;
}

const ASIN = /^[A-Z0-9]{10}$/;
const NODE_ID = /^\d{1,20}$/;

// Where the region read starts (see parseRegions): the first of the banner, result list,
// pagination or robot-check markup; the head and navigation before it are never parsed.
const REGION_START =
  /data-component-type="s-(?:result-info-bar|search-results?)"|class="(?:s-main-slot|s-result-item|s-pagination-strip|a-pagination)|id="(?:s-result-count|s-results-list-atf|atfResults|noResultsTitle|pagn|captchacharacters)"|validateCaptcha/;

/** Parses a search-result page; throws ParseError, and only ParseError, when it cannot. */
export function parseSearch(html: string, opts: ParseSearchOptions): SearchPage {
  const where = opts?.url ? ` (${opts.url})` : "";
  if (typeof html !== "string" || !/<[a-z!]/i.test(html)) {
    throw new ParseError("empty", `Cannot parse search page as the body holds no HTML${where}`);
  }
  try {
    const host = marketplace(opts.marketplace).host;
    const scan = newScan(!!opts.departments);
    const doc = parseRegions(html, (name, attr) => chooseRegion(name, attr, scan), {
      from: REGION_START,
    });
    return {
      ...readPage(scanPage(doc, scan), opts.marketplace, host, where),
      sort_shown: sortShown(html),
    };
  } catch (e) {
    if (e instanceof ParseError) throw e;
    // A malformed page must surface as an upstream failure, not crash the route.
    const why = e instanceof Error ? e.message : String(e);
    throw new ParseError("unrecognised", `Cannot parse search page${where}: ${why}`);
  }
}

function readPage(shell: PageScan, code: string, host: string, where: string): SearchPage {
  if (shell.cards.length === 0) assertGenuinelyEmpty(shell, where);
  const results = shell.cards.map((card, i) => readItem(card, i + 1, code, host));
  const page = currentPage(shell);
  return {
    page: page ?? 1,
    page_stated: page !== null,
    ...linksListing(shell),
    results,
    ...(shell.wantDepartments ? { breadcrumb: breadcrumbOf(shell.departments) } : {}),
    has_next_page: hasNextPage(shell, page ?? 1),
    last_page: lastPageShown(shell, page),
    // Newer grids (2025) print no "1-48 of over N results" banner; the page then vouches for
    // only the results it shows, so that count is the honest total.
    total_results: totalResults(shell) ?? results.length,
  };
}

/** What the page holds outside the cards, gathered in the one pass that finds the cards. */
interface PageScan {
  cards: Element[];
  infoBar: Element | null;
  oldCount: Element | null;
  selectedPage: Element | null;
  nextLink: boolean;
  pageLinks: string[];
  /** Pagination items shown disabled: "Previous", or the last page's number after an ellipsis. */
  disabledItems: Element[];
  resultRegion: boolean;
  captcha: boolean;
  /** A card or the pagination has been met while reading the page. */
  listed: boolean;
  wantDepartments: boolean;
  /** `#departments` was kept; reading stops at the next element after it. */
  departmentsKept: boolean;
  departments: Element | null;
}

function newScan(wantDepartments: boolean): PageScan {
  return {
    cards: [],
    infoBar: null,
    oldCount: null,
    selectedPage: null,
    nextLink: false,
    pageLinks: [],
    disabledItems: [],
    resultRegion: false,
    captcha: false,
    listed: false,
    wantDepartments,
    departmentsKept: false,
    departments: null,
  };
}

/**
 * Which parts of the page to build a DOM for (see parseRegions): the cards, and outside them the
 * result banner and the pagination. Every other element outside the cards only raises the page's
 * flags, which need no subtree; a card-shaped element without an ASIN is a widget, not read.
 * Reading stops at the filter panel or footer that follows the result list.
 */
function chooseRegion(name: string, attr: AttributeReader, scan: PageScan): RegionChoice {
  const cls = attr("class");
  const padded = cls ? ` ${cls} ` : "";
  const asin = attr("data-asin");
  const type = attr("data-component-type");
  if (asin !== undefined && isCardTag(name, type, padded)) {
    if (!ASIN.test(asin.trim())) return "skip";
    scan.listed = true;
    return "keep";
  }
  const id = attr("id");
  if (isPaginationRoot(name, id, padded)) {
    scan.listed = true;
    return "keep";
  }
  if (type === "s-result-info-bar" || id === "s-result-count") return "keep";
  if (scan.wantDepartments) {
    if (id === "departments") {
      scan.departmentsKept = true;
      return "keep";
    }
    if (scan.departmentsKept && scan.listed) return "stop";
    // The department panel is inside the filter panel: read into it instead of stopping.
    if (scan.listed && type === "s-filters-panel-view") return;
  }
  if (scan.listed && (type === "s-filters-panel-view" || id === "navFooter" || id === "rhf")) {
    return "stop";
  }
  notePage(name, id, padded, type, attr("action"), scan);
}

/**
 * One walk over the kept regions instead of a css-select query per page field: whole-document
 * selector scans cost more than building the DOM did. Cards are not entered; `readItem` walks each.
 */
function scanPage(doc: Document, scan: PageScan): PageScan {
  const visit = (el: Element, inPagination: boolean) => {
    const a = el.attribs;
    const cls = a.class ? ` ${a.class} ` : "";
    if (a["data-asin"] !== undefined && isCard(el, cls)) {
      if (ASIN.test(a["data-asin"].trim())) scan.cards.push(el);
      return;
    }
    if (a.id === "departments") {
      scan.departments = el;
      return;
    }
    if (!scan.infoBar && a["data-component-type"] === "s-result-info-bar") scan.infoBar = el;
    if (a.id === "s-result-count") scan.oldCount = el;
    notePage(el.name, a.id, cls, a["data-component-type"], a.action, scan);
    const pagination = inPagination || isPaginationRoot(el.name, a.id, cls);
    if (pagination) readPaginationElement(el, cls, scan);
    for (const child of el.children) if (child.type === "tag") visit(child as Element, pagination);
  };
  for (const child of doc.children) if (child.type === "tag") visit(child as Element, false);
  return scan;
}

/**
 * The department panel as a path: its entries (`li#n/<node>`) from the top down to the current
 * one, which is shown in bold and without a link; the entries below it are refinements, not
 * part of the path. Empty when the page shows no panel or no current department.
 */
function breadcrumbOf(panel: Element | null): { id: string; name: string }[] {
  if (!panel) return [];
  const path: { id: string; name: string }[] = [];
  for (const li of all(panel, 'li[id^="n/"]')) {
    const id = attr(li, "id").slice(2);
    // A node id or no path: the last step labels the answer (probe EU: a 3,000-character id
    // of page text became its category_id).
    if (!NODE_ID.test(id)) return [];
    path.push({ id, name: text(li) });
    if (!one(li, "a") && one(li, ".a-text-bold")) return path;
  }
  return [];
}

/** Raises the page flags an element outside the cards stands for (`cls` padded with spaces). */
function notePage(
  name: string,
  id: string | undefined,
  cls: string,
  type: string | undefined,
  action: string | undefined,
  scan: PageScan,
): void {
  if (id === "captchacharacters" || (name === "form" && /validateCaptcha/.test(action ?? ""))) {
    scan.captcha = true;
  }
  if (
    cls.includes(" s-main-slot ") || type === "s-search-results" ||
    id === "s-results-list-atf" || id === "atfResults" || id === "noResultsTitle"
  ) scan.resultRegion = true;
}

function isPaginationRoot(name: string, id: string | undefined, cls: string): boolean {
  return cls.includes(" s-pagination-strip ") || id === "pagn" ||
    (name === "ul" && cls.includes(" a-pagination "));
}

function isCard(el: Element, cls: string): boolean {
  return isCardTag(el.name, el.attribs["data-component-type"], cls);
}

function isCardTag(name: string, type: string | undefined, cls: string): boolean {
  return (name === "div" && type === "s-search-result") ||
    (name === "li" && cls.includes(" s-result-item "));
}

function readPaginationElement(el: Element, cls: string, scan: PageScan): void {
  if (
    !scan.selectedPage &&
    (cls.includes(" s-pagination-selected ") || cls.includes(" pagnCur ") ||
      (el.name === "li" && cls.includes(" a-selected ")))
  ) scan.selectedPage = el;
  if (
    cls.includes(" s-pagination-disabled ") || cls.includes(" pagnDisabled ") ||
    (el.name === "li" && cls.includes(" a-disabled "))
  ) scan.disabledItems.push(el);
  if (el.name !== "a") return;
  const parent = el.parent as Element | null;
  const parentCls = parent?.attribs?.class ? ` ${parent.attribs.class} ` : "";
  if (
    cls.includes(" s-pagination-next ") || el.attribs.id === "pagnNextLink" ||
    (parentCls.includes(" a-last ") && !parentCls.includes(" a-disabled "))
  ) scan.nextLink = true;
  if (el.attribs.href) scan.pageLinks.push(el.attribs.href);
}

/**
 * A page with zero cards is a result only when Amazon rendered its result region: the main slot
 * (2020+), the old result list, or a "no results" notice. A page without that region (a captcha,
 * or the nav-and-footer shell Amazon serves while redirecting a search to a browse node) is not a
 * search page with no results, so it is refused rather than reported as empty.
 */
function assertGenuinelyEmpty(scan: PageScan, where: string): void {
  if (scan.captcha) {
    throw new ParseError(
      "blocked",
      `Cannot parse search page as Amazon served a robot check${where}`,
    );
  }
  if (!scan.resultRegion) {
    throw new ParseError(
      "incomplete",
      `Cannot parse search page as it holds no result list${where}`,
    );
  }
}

/** The elements of one card that its fields are read from, found in one walk of the card. */
interface CardParts {
  star: Element | null;
  titles: Element[];
  productImage: Element | null;
  anyImage: Element | null;
  price: Element | null;
  struck: Element | null;
  oldPrice: Element | null;
  prime: boolean;
  sponsored: boolean;
  badges: Element[];
  udm: Element[];
  deliveryLabels: Element[];
  oldDelivery: Element | null;
  volumeInBlock: Element[];
  volumeElsewhere: Element[];
}

// Where in the card an element sits, as bits: inside the product link, the product image, the
// 2024+ reviews block, a centred row, the delivery recipe, the price recipe; and how far into the
// 2018-19 delivery row (a-span7, then a-spacing-mini).
const IN_LINK = 1;
const IN_PRODUCT_IMAGE = 2;
const IN_REVIEWS_BLOCK = 4;
const IN_ALIGNED = 8;
const IN_DELIVERY_RECIPE = 16;
const IN_PRICE_RECIPE = 32;
const IN_OLD_DELIVERY_SPAN = 64;
const IN_OLD_DELIVERY_ROW = 128;

/** True when the class list `cls` holds `token` (space-separated, as ` ${cls} `.includes would). */
function hasToken(cls: string, token: string, prefixOnly = false): boolean {
  for (let i = cls.indexOf(token); i >= 0; i = cls.indexOf(token, i + 1)) {
    if (i > 0 && cls.charCodeAt(i - 1) !== 32) continue;
    const end = i + token.length;
    if (prefixOnly || end === cls.length || cls.charCodeAt(end) === 32) return true;
  }
  return false;
}

/** One walk of a card, without an allocation per element: the hot loop of a search page. */
function scanCard(card: Element): CardParts {
  const parts: CardParts = {
    star: null,
    titles: [],
    productImage: null,
    anyImage: null,
    price: null,
    struck: null,
    oldPrice: null,
    prime: false,
    sponsored: hasClass(card, "AdHolder"),
    badges: [],
    udm: [],
    deliveryLabels: [],
    oldDelivery: null,
    volumeInBlock: [],
    volumeElsewhere: [],
  };
  const alignedLabels: Element[] = [];
  const recipeLabels: Element[] = [];
  const linkedTitles = new Set<Element>();
  const visit = (el: Element, at: number) => {
    const a = el.attribs;
    const cls = a.class ?? "";
    const name = el.name;
    if (name === "i" && !parts.star && hasToken(cls, "a-icon-star", true)) parts.star = el;
    else if (name === "h2") parts.titles.push(el);
    else if (name === "img") {
      if (!parts.productImage && (at & IN_PRODUCT_IMAGE || hasToken(cls, "s-access-image"))) {
        parts.productImage = el;
      }
      if (!parts.anyImage && hasToken(cls, "s-image")) parts.anyImage = el;
    } else if (name === "span" && hasToken(cls, "a-price")) {
      if (!hasToken(cls, "a-text-price")) parts.price ??= el;
      else if (a["data-a-strike"] === "true") parts.struck ??= el;
    } else if (name === "span" && hasToken(cls, "s-price")) parts.oldPrice ??= el;
    else if (hasToken(cls, "a-text-strike")) parts.struck ??= el;
    if (
      hasToken(cls, "a-icon-prime") || hasToken(cls, "s-prime") ||
      a["aria-label"] === "Amazon Prime"
    ) {
      parts.prime = true;
    }
    if (
      hasToken(cls, "puis-sponsored-label-text") || hasToken(cls, "s-sponsored-label-text") ||
      hasToken(cls, "s-sponsored-header")
    ) parts.sponsored = true;
    // The 2025-26 capsule ("rio") badge carries no a-badge class (probe FV: "Best Seller" lost).
    if (hasToken(cls, "a-badge") || hasToken(cls, "rio-badge-component")) parts.badges.push(el);
    if (
      hasToken(cls, "udm-primary-delivery-message") ||
      hasToken(cls, "udm-secondary-delivery-message")
    ) {
      parts.udm.push(el);
    }
    if (name === "span" && a["aria-label"] !== undefined && at & IN_ALIGNED) {
      (at & IN_DELIVERY_RECIPE ? recipeLabels : alignedLabels).push(el);
    }
    if (name === "span" && at & IN_OLD_DELIVERY_ROW && !parts.oldDelivery) {
      if (hasToken(cls, "a-size-small") && hasToken(cls, "a-color-secondary")) {
        parts.oldDelivery = el;
      }
    }
    if (name === "span" && hasToken(cls, "a-size-base") && hasToken(cls, "a-color-secondary")) {
      if (at & IN_REVIEWS_BLOCK) parts.volumeInBlock.push(el);
      else if (!(at & IN_PRICE_RECIPE)) parts.volumeElsewhere.push(el);
    }
    if (name === "h2" && at & IN_LINK) linkedTitles.add(el);
    if (el.children.length === 0) return;
    const cy = a["data-cy"];
    let next = at;
    if (name === "a") next |= IN_LINK;
    if (a["data-component-type"] === "s-product-image") next |= IN_PRODUCT_IMAGE;
    if (cy === "reviews-block") next |= IN_REVIEWS_BLOCK;
    else if (cy === "delivery-recipe") next |= IN_DELIVERY_RECIPE;
    else if (cy === "price-recipe") next |= IN_PRICE_RECIPE;
    if (cls) {
      if (hasToken(cls, "s-align-children-center")) next |= IN_ALIGNED;
      if (!(at & (IN_OLD_DELIVERY_SPAN | IN_OLD_DELIVERY_ROW))) {
        if (hasToken(cls, "a-span7")) next |= IN_OLD_DELIVERY_SPAN;
      } else if (at & IN_OLD_DELIVERY_SPAN && hasToken(cls, "a-spacing-mini")) {
        next = (next & ~IN_OLD_DELIVERY_SPAN) | IN_OLD_DELIVERY_ROW;
      }
    }
    for (const child of el.children) if (child.type === "tag") visit(child as Element, next);
  };
  visit(card, 0);
  // The product heading is the one inside the product link; brand lines are bare headings.
  parts.titles.sort((x, y) => Number(linkedTitles.has(y)) - Number(linkedTitles.has(x)));
  parts.deliveryLabels = recipeLabels.length ? recipeLabels : alignedLabels;
  return parts;
}

function readItem(card: Element, position: number, code: string, host: string): ProductItem {
  const asin = attr(card, "data-asin");
  const parts = scanCard(card);
  const star = parts.star;
  return {
    url: `https://${host}/dp/${asin}`,
    asin,
    badge: badgeOf(parts),
    image: imageOf(parts),
    price: priceOf(parts, code),
    prime: parts.prime,
    title: titleOf(parts),
    rating: star ? ratingOf(star) : 0,
    delivery: deliveryOf(parts),
    position,
    sponsored: parts.sponsored,
    reviews_count: star ? reviewsCountOf(star) : 0,
    bought_past_month: boughtPastMonthOf(parts),
  };
}

// --- item fields ---------------------------------------------------------------------------

/**
 * The product title: the heading inside the product link, without screen-reader-only prefixes;
 * when the heading is cut short, the heading's aria-label or the product image's alt text.
 */
function titleOf(parts: CardParts): string {
  for (const h2 of parts.titles) {
    const t = visibleText(h2);
    if (t) {
      return untruncated(t, [
        attr(h2, "aria-label"),
        attr(parts.productImage, "alt"),
        text(one(h2, ".a-truncate-full")),
      ]);
    }
  }
  return "";
}

/** Text of a node without `.a-offscreen` parts (the old grid prefixes titles with "[Sponsored]"). */
function visibleText(node: Element): string {
  const parts: string[] = [];
  const walk = (n: Element["children"][number]) => {
    if (n.type === "text") parts.push((n as unknown as { data: string }).data);
    else if ("children" in n && !hasClass(n as Element, "a-offscreen")) {
      (n as Element).children.forEach(walk);
    }
  };
  node.children.forEach(walk);
  spendText(parts); // the page's text budget (page_budget.ts), as dom.ts text() does
  return parts.join("").replace(/\s+/g, " ").trim();
}

function imageOf(parts: CardParts): string | null {
  const img = parts.productImage ?? parts.anyImage;
  const src = attr(img, "src");
  if (!src || /^(?:[a-z][\w+.-]*:|\/\/)/i.test(src)) return imageUrl(src) || null;
  // A page saved by a browser points `src` at its local copy (a relative path); `srcset` keeps
  // the image's own URLs. A `src` that is a URL stands alone: one off Amazon gives no image.
  for (const candidate of attr(img, "srcset").split(",", 8)) {
    const url = imageUrl(candidate.trim().split(/\s+/)[0]);
    if (url) return url;
  }
  return null;
}

/** The offer price and the struck-through comparison price ("List:", "Typical:", "RRP:", "M.R.P:"). */
function priceOf(parts: CardParts, code: string): PriceWithList | null {
  const priceText = parts.price ? priceTextOf(parts.price) : text(parts.oldPrice);
  const price = priceText ? parsePrice(priceText, code) : null;
  if (!price) return null;
  const struck = parts.struck;
  return { ...price, list_price: listPriceIn(price, struck ? priceTextOf(struck) : "", code) };
}

/** An `a-price`'s text: the screen-reader copy, else the visible symbol and digits. */
function priceTextOf(price: Element): string {
  return text(one(price, ".a-offscreen")) || text(one(price, '[aria-hidden="true"]')) ||
    text(price);
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

/** Status badges ("Best Seller", "Amazon's Choice", "Overall Pick"); deal badges are price copy. */
function badgeOf(parts: CardParts): string | null {
  // A badge inside a badge that shows no text shows none either: skipping it spares walking the
  // same subtree again at every level of nested badges.
  const blank = new Set<AnyNode>();
  for (const badge of parts.badges) {
    const deal = attr(badge, "data-a-badge-type") === "deal" ||
      /DEAL/.test(attr(badge, "id") ?? "");
    if (deal || insideAny(badge, blank)) continue;
    // The label alone: a capsule's "in Tower Computers" is hidden text, as an a-badge's is unread.
    const label = text(one(badge, ".a-badge-label, .rio-badge-label")) || text(badge);
    if (label) return label;
    blank.add(badge);
  }
  return null;
}

function insideAny(el: Element, set: Set<AnyNode>): boolean {
  for (let p = el.parent; p; p = p.parent) if (set.has(p)) return true;
  return false;
}

/**
 * Delivery copy. 2025 cards have a `udm-delivery-block` of primary and secondary messages; 2020-24
 * cards one labelled span per delivery line (stock warnings, in `a-color-price`, are not
 * delivery); the 2018-19 list a plain line under the price.
 */
function deliveryOf(parts: CardParts): string {
  // A message's text holds every message nested in it: reading the nested ones too repeated the
  // innermost text once per level.
  const udm = outermost(parts.udm).map(text).filter(Boolean);
  if (udm.length) return udm.join(" ");
  const priced = holdersOfPrice(parts.deliveryLabels);
  const lines = parts.deliveryLabels
    .filter((s) => !priced.has(s) && !isRatingLabel(attr(s, "aria-label")))
    .map((s) => attr(s, "aria-label")).filter((l) => l && !/^[\d.,\s]+$/.test(l));
  if (lines.length) return lines.join(" ");
  return text(parts.oldDelivery);
}

/**
 * The elements holding an `.a-color-price` element among `labels`' descendants (what
 * `one(label, ".a-color-price")` finds), from one search of each outermost label: searching from
 * every label walked the subtree of nested labels again at every level.
 */
function holdersOfPrice(labels: Element[]): Set<AnyNode> {
  const holders = new Set<AnyNode>();
  for (const label of outermost(labels)) {
    for (const price of all(label, ".a-color-price")) {
      for (let p = price.parent; p && !holders.has(p); p = p.parent) holders.add(p);
    }
  }
  return holders;
}

/**
 * A star rating's label ("4.5 out of 5 stars"): "star", or a decimal with a "5" after it on the
 * same line. Read line by line: `/\d[.,]\d .*5/` retries `.*` from every decimal of a label
 * holding many (an attribute's raw text; 80,000 characters: 2.6 s).
 */
function isRatingLabel(label: string): boolean {
  if (/\bstar/.test(label)) return true;
  for (const line of label.split(/[\n\r\u2028\u2029]/)) {
    const m = /\d[.,]\d /.exec(line);
    if (m && line.includes("5", m.index + m[0].length)) return true;
  }
  return false;
}

/**
 * Purchase-volume copy ("1K+ bought in past month", "Plus de 100 achetés…", "過去1か月で50点以上…").
 * The same slot also holds other notes ("added in the past month"), so the text must show a
 * count: a number with "+"/K/以上, or "over/plus de/mehr als… N"; inside the 2024+ reviews block,
 * where only this note sits, any count of two or more digits (mojibake pages keep the digits).
 */
function boughtPastMonthOf(parts: CardParts): string | null {
  const inBlock = parts.volumeInBlock.filter(inSizeBaseRow).map(text)
    .find((t) => /\d{2,}|\d\s*[KkMm万千]/.test(t));
  if (inBlock) return inBlock;
  const anywhere = parts.volumeElsewhere.filter(inSizeBaseRow).map(text).find((t) =>
    VOLUME.test(t)
  );
  return anywhere ?? null;
}
function inSizeBaseRow(span: Element): boolean {
  const row = span.parent as Element | null;
  return row?.type === "tag" && hasClass(row, "a-row") && hasClass(row, "a-size-base");
}
// Read in text() only, whose spaces are single: " ?" where "\s*" would do the same there, since
// `\d\s*X?\s*\+` splits a long run of spaces between its two `\s*` in every way (quadratic).
const VOLUME =
  /\d ?(?:[KkMm]|mil|万|千)? ?\+|\d ?(?:個|点|件|人)?以上|(?:plus de|mehr als|meer dan|mais de|más de|over|più di) ?\d/i;

// --- page fields ---------------------------------------------------------------------------

function currentPage(scan: PageScan): number | null {
  const n = intFrom(text(scan.selectedPage));
  return n && n >= 1 ? n : null;
}

/**
 * The value of the option the sort menu (`#s-result-sort-select`) has selected: the order the page
 * is in, whatever was asked (probe EM: a page in relevance order answered `sort: price_asc`).
 */
function sortShown(html: string): string | null {
  return menuChoice(html, "s-result-sort-select");
}

/** The first value of `name` the pagination links carry, spaces collapsed. */
function linksParam(scan: PageScan, name: string): string | null {
  for (const href of scan.pageLinks) {
    const q = href.indexOf("?");
    if (q < 0) continue;
    const v = new URLSearchParams(href.slice(q + 1)).get(name);
    if (v?.trim()) return v.trim().replace(/\s+/g, " ");
  }
  return null;
}

/** The listing the pagination links page through: its search words, seller, alias and nodes. */
function linksListing(scan: PageScan) {
  return {
    links_query: linksParam(scan, "k"),
    links_seller: linksParam(scan, "me"),
    links_alias: linksParam(scan, "i"),
    links_node: linksParam(scan, "rh"),
  };
}

/**
 * An enabled "next" link, or any pagination link to the following page: mojibake can swallow the
 * quote that closes a `class` attribute, leaving the link without its class but not its href.
 */
function hasNextPage(scan: PageScan, page: number): boolean {
  if (scan.nextLink) return true;
  const next = new RegExp(`[?&]page=${page + 1}(?:&|$)`);
  return scan.pageLinks.some((href) => next.test(href));
}

/**
 * The highest page number the pagination shows: its links' `page=`, the current page, and the
 * last page's number that it shows disabled after an ellipsis ("1 2 3 … 20"); null when it shows
 * none. Amazon's pagination always names its last page, so a `limit` search asks for no page past
 * it ahead of need (upstream/search_pages.ts): such pages were fetched and paid for (probe FQ).
 */
function lastPageShown(scan: PageScan, current: number | null): number | null {
  let last = current ?? 0;
  for (const href of scan.pageLinks) {
    const m = /[?&]page=(\d{1,4})(?:&|$)/.exec(href);
    if (m) last = Math.max(last, Number(m[1]));
  }
  for (const el of scan.disabledItems) {
    const shown = text(el).trim();
    if (/^\d{1,4}$/.test(shown)) last = Math.max(last, Number(shown));
  }
  return last >= 1 ? last : null;
}

/**
 * The total from the result banner ("1-48 of over 10,000 results for", "1-16 von 139 Ergebnissen",
 * "1-24的218 個結果"). The banner names the shown range and the total, so the total is its largest
 * number; the query, which may hold numbers, sits in a later span and is not read.
 */
function totalResults(scan: PageScan): number | null {
  const bar = scan.infoBar;
  let banner = "";
  // The first span with a number, read one at a time: reading every span first re-read the
  // innermost text once per level of spans nested in each other (probe AT).
  for (const span of bar ? all(bar, "h1 span, h2 span") : []) {
    const t = text(span);
    if (/\d/.test(t)) {
      banner = t;
      break;
    }
  }
  const old = banner ? null : scan.oldCount;
  if (old) banner = old.children.filter((c) => c.type === "text").map((c) => text(c)).join(" ");
  const numbers = banner.match(/\d{1,3}(?:[.,\s\u00a0\u202f]\d{3})+|\d+/g);
  if (!numbers) return null;
  // A loop, not Math.max(...numbers): spreading a list as long as the page makes it overflows
  // the stack (a banner of 100,000 numbers). A number past 2^53 is no count of results.
  let total: number | null = null;
  for (const n of numbers) {
    const value = parseInt(n.replace(/\D/g, ""), 10);
    if (Number.isSafeInteger(value) && (total === null || value > total)) total = value;
  }
  return total;
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

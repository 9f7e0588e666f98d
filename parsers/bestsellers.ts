/**
 * Best Sellers pages (`/gp/bestsellers/<slug>`, `/zgbs/<slug>`): the ranked grid of a department
 * (`#gridItemRoot` cells) or, on the all-departments landing page, one carousel per department
 * whose ranks restart at #1; there each item names its carousel's heading in `list_title`
 * ("Bestsellers in Beauty"), so that six items of rank 1 are not read as one ranking. Verified on
 * the corpus pages of amazon.com, .de, .in and .ae.
 */
import {
  all,
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
import { parsePrice } from "./price.ts";
import { untruncated } from "./page_text.ts";
import { ParseError } from "./parse_error.ts";
import { cleanText } from "./control_chars.ts";
import type { BestsellersPage } from "../schemas/pages.ts";
import type { BestSellerItem } from "../schemas/resources.ts";
import {
  asinFromHref,
  guardParse,
  isAsin,
  originOf,
  type ParseOptions,
  productUrl,
  regionOf,
} from "./page_common.ts";

// Markup only a zeitgeist (best sellers) page carries; CSS rules hold the class names too, so
// the markers include the attribute syntax.
const ZG_MARKERS = [
  'id="zg_banner_text"',
  'id="gridItemRoot"',
  'class="zg-bdg-text"',
  "p13n-zg-list",
];
const CARD = "#gridItemRoot, li.a-carousel-card";
const TITLE = '[class*="p13n-sc-css-line-clamp"], .p13n-sc-truncate, .p13n-sc-truncated';
const PRICE = '.p13n-sc-price, [class*="p13n-sc-price"]';
const CAROUSEL_CARD = /(?:^|\s)a-carousel-card(?:\s|$)/;
const CAROUSEL_HEADING = /(?:^|\s)a-carousel-heading(?:\s|$)/;
/** A list's heading, as each of its items names it ("Bestsellers in Beauty"). */
const MAX_LIST_TITLE = 200;
const PAGINATION = /(?:^|\s)a-pagination(?:\s|$)/;

/** The DOM built (see parseRegions): the cards, the headings and the pagination. */
function chooseRegion(name: string, attr: AttributeReader): RegionChoice {
  if (name === "h1" || attr("id") === "gridItemRoot") return "keep";
  const cls = attr("class");
  if (!cls) return;
  if (name === "li" && CAROUSEL_CARD.test(cls)) return "keep";
  if ((name === "h2" && CAROUSEL_HEADING.test(cls)) || PAGINATION.test(cls)) return "keep";
}

export function parseBestsellers(html: string, opts: ParseOptions): BestsellersPage {
  return guardParse("best sellers page", html, opts, () => {
    if (!ZG_MARKERS.some((m) => html.includes(m))) {
      throw new ParseError(
        "unrecognised",
        "Cannot parse best sellers page: no best sellers markup",
      );
    }
    // The heading comes right before the list; the department tree and footer follow it.
    const region = regionOf(html, ["<h1", 'id="gridItemRoot"'], ["<!-- EndZeitgeist -->"]);
    const doc = parseRegions(region, chooseRegion);
    const origin = originOf(opts.marketplace);
    const results: BestSellerItem[] = [];
    // A card nested in a card would read the same innermost title (and walk the same subtree)
    // once per level.
    // In document order (css-select's), each carousel's heading comes before its cards.
    const nodes = all(doc, `h2, ${CARD}`);
    const cards = new Set(outermost(nodes.filter((n) => n.name !== "h2")));
    let list = "";
    for (const node of nodes) {
      // Cut: it is repeated in each of the list's items, so a long heading over many cards made
      // an answer of their product.
      if (node.name === "h2") list = cleanText(text(node), MAX_LIST_TITLE);
      if (!cards.has(node)) continue;
      const item = readCard(node, origin, opts.marketplace);
      if (item) results.push(list ? { ...item, list_title: list } : item);
    }
    return { page: currentPage(doc), category: heading(doc), results };
  });
}

function readCard(card: Element, origin: string, marketplace: string): BestSellerItem | null {
  const rank = intFrom(text(one(card, ".zg-bdg-text")));
  const asin = cardAsin(card);
  // A carousel's empty placeholder cards and cards without a rank badge carry no ranked item.
  if (!asin || !rank) return null;
  const img = one(card, "img");
  const priceText = text(one(card, PRICE));
  return {
    url: productUrl(origin, asin),
    asin,
    rank,
    image: imageUrl(attr(img, "src")) || null,
    price: priceText ? parsePrice(priceText, marketplace) : null,
    title: untruncated(text(one(card, TITLE)), [
      attr(img, "alt"),
      ...all(card, "[title], [aria-label]").flatMap((
        e,
      ) => [attr(e, "title"), attr(e, "aria-label")]),
      text(one(card, ".a-truncate-full")),
    ]),
    rating: ratingFrom(text(one(card, ".a-icon-alt"))) ?? 0,
    reviews_count: intFrom(text(one(card, ".a-icon-row .a-size-small"))) ?? 0,
  };
}

/** The faceout's id is the ASIN on grid pages; carousel cards only name it in their links. */
function cardAsin(card: Element): string {
  const faceout = one(card, ".p13n-sc-uncoverable-faceout");
  const id = attr(faceout, "id");
  if (isAsin(id)) return id;
  const tagged = one(card, "[data-asin]");
  if (isAsin(attr(tagged, "data-asin"))) return attr(tagged, "data-asin");
  return asinFromHref(attr(one(card, 'a[href*="/dp/"]'), "href"));
}

/** The list's own heading ("Best Sellers in Tools & Home Improvement"), not the site banner. */
function heading(doc: Document): string {
  for (const h1 of all(doc, "h1")) {
    if (one(h1, "#zg_banner_text")) continue;
    const t = text(h1);
    if (t) return t;
  }
  return "";
}

function currentPage(doc: Document): number {
  const n = intFrom(text(one(doc, ".a-pagination li.a-selected")));
  return n && n >= 1 ? n : 1;
}

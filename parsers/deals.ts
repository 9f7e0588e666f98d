/**
 * Today's Deals (`/deals`, `/gp/goldbox`): the grid of deal cards.
 *
 * NOT YET VERIFIED ON A REAL PAGE: the corpus holds no deals page. The selectors follow the markup
 * public scrapers read (`data-testid="deal-card"` / `grid-deal-card` cards carrying
 * `data-deal-id`, `DealCard-module__…` classes, `a-price` prices, badge and percent-off copy) and
 * are tested on a hand-built page in that shape only.
 */
import { all, attr, type Element, imageUrl, linkUrl, one, parseHtml, text } from "./dom.ts";
import { parsePrice } from "./price.ts";
import { ParseError } from "./parse_error.ts";
import type { DealsPage } from "../schemas/pages.ts";
import type { DealItem } from "../schemas/resources.ts";
import {
  asinFromHref,
  dealIdFromHref,
  guardParse,
  isAsin,
  originOf,
  type ParseOptions,
  productUrl,
} from "./page_common.ts";
import { outermost } from "./dom_tree.ts";

const CARD =
  '[data-testid="deal-card"], [data-testid="grid-deal-card"], [data-deal-id], [class*="DealCard-module__card"]';
const TITLE =
  '[data-testid="deal-title"], [class*="DealContent-module__truncate"], [class*="DealTitle"], .a-truncate-full';
const BADGE =
  '[data-testid="deal-badge-label"], [class*="BadgeAutomatedLabel"], [class*="dealBadge"]';
const DISCOUNT =
  '[data-testid="deal-percent-off"], [class*="savingsPercentage"], [class*="BadgeAutomated-module__badgeOneLineContainer"] > span:first-child';
const PERCENT_OFF =
  /-?\d{1,3}\s?%(?:\s?(?:off|Rabatt|de réduction|di sconto|de descuento|de desconto))?/i;

export function parseDeals(html: string, opts: ParseOptions): DealsPage {
  return guardParse("deals page", html, opts, () => {
    const doc = parseHtml(html);
    const cards = outermost(all(doc, CARD));
    const origin = originOf(opts.marketplace);
    const results: DealItem[] = [];
    for (const card of cards) {
      const item = readCard(card, origin, opts.marketplace);
      if (item) results.push(item);
    }
    // A deals grid with no card read is no answer: an empty grid is what a page whose cards a
    // script fills, or cards in markup not read, look like, and it was answered as no deals,
    // charged and cached for everyone (probe FH).
    if (results.length === 0) {
      throw new ParseError("unrecognised", "Cannot parse deals page: no deal card read");
    }
    return { results };
  });
}

function readCard(card: Element, origin: string, marketplace: string): DealItem | null {
  const link = one(card, 'a[href*="/dp/"], a[href*="/gp/product/"]');
  const dealLink = one(card, 'a[href*="/deal/"]');
  const asin = cardAsin(card, attr(link, "href"));
  const dealId = attr(card, "data-deal-id") || attr(one(card, "[data-deal-id]"), "data-deal-id") ||
    dealIdFromHref(attr(dealLink, "href"));
  // A multi-product deal links to its deal page instead of a product.
  const url = asin
    ? productUrl(origin, asin)
    : linkUrl(attr(dealLink, "href").split("?")[0], origin);
  if (!url) return null;
  const priceText = text(one(card, ".a-price:not(.a-text-price) .a-offscreen"));
  return {
    url,
    asin,
    badge: text(one(card, BADGE)) || null,
    image: imageUrl(attr(one(card, "img"), "src")) || null,
    price: priceText ? parsePrice(priceText, marketplace) : null,
    title: text(one(card, TITLE)) || null,
    // As the deal_id parameter takes it: a card's attribute may hold any text (probe EW).
    deal_id: /^[A-Za-z0-9_-]{1,64}$/.test(dealId) ? dealId : null,
    discount: discountOf(card),
  };
}

function cardAsin(card: Element, href: string): string {
  for (const node of [card, one(card, "[data-asin]")]) {
    const v = attr(node, "data-asin");
    if (isAsin(v)) return v;
  }
  return asinFromHref(href);
}

/** The card's own percent-off element, else the first "NN% off" copy anywhere in the card. */
function discountOf(card: Element): string {
  const own = text(one(card, DISCOUNT));
  if (PERCENT_OFF.test(own)) return own;
  return PERCENT_OFF.exec(text(card))?.[0] ?? "";
}

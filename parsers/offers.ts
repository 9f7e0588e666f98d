/**
 * Offers of one product to an OffersPage, from either layout Amazon has served:
 * - the all-offers display (AOD, 2021–2025): `#aod-pinned-offer` (the buy box) and `#aod-offer`
 *   blocks, in the ajax "main" fragment, its "page N" fragments and the opened side panel;
 * - the older /gp/offer-listing page (2015–2021): `div.olpOffer` rows.
 */
import {
  all,
  attr,
  type AttributeReader,
  type Element,
  firstOfEach,
  one,
  parseRegions,
  type RegionChoice,
} from "./dom.ts";
import { parsePrice } from "./price.ts";
import { ParseError } from "./parse_error.ts";
import {
  asinFromUrl,
  guarded,
  queryParam,
  rejectBlockedPage,
  rejectEmpty,
  visibleText,
} from "./page_text.ts";
import { marketplaceOrParseError, sellerId } from "./page_common.ts";
import type { Offer } from "../schemas/resources.ts";
import type { OffersPage } from "../schemas/pages.ts";

export interface OffersOptions {
  marketplace: string;
  url?: string;
}

// Amazon's own retail merchant ids: an offer whose only seller mark is a logo is Amazon's.
const AMAZON_MERCHANTS = new Set([
  "ATVPDKIKX0DER", // amazon.com
  "A3P5ROKL5A1OLE", // amazon.co.uk
  "A3JWKAKR8XB7XF", // amazon.de
  "A1X6FK5RDHNB96", // amazon.fr
  "A11IL2PNWYJU7H", // amazon.it
  "A1AT7YVPFBWXBL", // amazon.es
  "A3DWYIK6Y9EEQB", // amazon.ca
  "AN1VRQENFRJN5", // amazon.co.jp
]);

// The parts of a page read below: the offers (#aod-pinned-offer, #aod-offer, div.olpOffer), the
// inputs naming the ASIN (items[0.base][asin], ASIN, metric-asin.<ASIN>) and the containers
// (#aod-container, #aod-offer-list, #olpOfferList, #olpOfferListColumn) that mark an offers page.

interface OffersParts {
  offers: Element[];
  /** The ASIN of the first ASIN input on the page that names a well-formed one; "" when none. */
  asin: string;
  isOffersPage: boolean;
}

export function parseOffers(html: string, opts: OffersOptions): OffersPage {
  return guarded("offers", () => {
    rejectEmpty(html, "offers");
    const mp = marketplaceOrParseError(opts.marketplace);
    const parts = findParts(html);
    // A block with neither price nor seller is a template or a stub, not an offer (a bare
    // `<div id="aod-offer">` on a page that is no offers page was answered as one, for 2 credits).
    const offers = parts.offers
      .map((el) => el.attribs.id ? readAodOffer(el, mp.code) : readOlpOffer(el, mp))
      .filter((o) => o.price !== null || o.seller.id !== null || o.seller.name !== "")
      .map((o, i) => ({ ...o, position: i + 1 }));
    if (!parts.isOffersPage && offers.length === 0) {
      rejectBlockedPage(html);
      throw new ParseError(
        "unrecognised",
        "Cannot read the offers page: it has neither AOD offers nor offer-listing rows",
      );
    }
    return { asin: parts.asin || asinFromUrl(opts.url), offers };
  });
}

const OFFER_IDS = new Set(["aod-pinned-offer", "aod-offer"]);
const CONTAINER_IDS = new Set([
  "aod-container",
  "aod-offer-list",
  "olpOfferList",
  "olpOfferListColumn",
]);
const OLP_OFFER_CLASS = /(?:^|\s)olpOffer(?:\s|$)/;

// Where reading starts (see parseRegions): the first offer, container or ASIN input. The head
// and navigation of an offer-listing page (a third of it) are never parsed.
const PARTS_START =
  /id="(?:aod-|olpOffer)|name="(?:ASIN"|items\[0\.base\]\[asin\]"|metric-asin\.)|\bolpOffer\b/;

function findParts(html: string): OffersParts {
  const parts: OffersParts = { offers: [], asin: "", isOffersPage: false };
  // Only the offers are built as DOM: the ASIN inputs and containers are read as the tokenizer
  // meets them. Once an offer and the page's ASIN have been read, the footer ends the reading.
  let offerSeen = false;
  const noteInput = (name: string, attr: AttributeReader) => {
    if (!parts.asin && name === "input" && isAsinInputName(attr("name"))) {
      parts.asin = inputAsin(attr("name") ?? "", attr("value"));
    }
  };
  const chooseRegion = (name: string, attr: AttributeReader): RegionChoice => {
    const kind = partKind(name, attr);
    if (kind === "offer") {
      offerSeen = true;
      return "keep";
    }
    if (kind === "container") parts.isOffersPage = true;
    else if (kind === "input") noteInput(name, attr);
    else if (offerSeen && parts.asin && attr("id") === "navFooter") return "stop";
  };
  // Inside an offer: its add-to-cart form holds the page's ASIN input.
  const prune = (name: string, attr: AttributeReader) => {
    noteInput(name, attr);
    return isQuantityMenu(name, attr);
  };
  const doc = parseRegions(html, chooseRegion, {
    from: PARTS_START,
    excise: QUANTITY_PICKER,
    prune,
  });
  // Every kept region is an offer (the outermost, where blocks nest), in page order: the pinned
  // (buy box) offer comes first on the page already.
  for (const node of doc.children) if (node.type === "tag") parts.offers.push(node);
  return parts;
}

const QUANTITY_MENU = /(?:^|\s)aod-qty(?:-dropdown)?-container(?:\s|$)/;
// In the ids of the quantity pickers' start tags, as the 2023–2025 fragments write them (see
// below): "aod-offer-qty-component-3", "aod-sticky-pinned-offer-qty-component".
const QUANTITY_PICKER = /qty-component\b/g;

/**
 * The hidden quantity picker of an AOD offer (`div.aod-qty-container` and the menu inside it,
 * `div.aod-qty-dropdown-container`, one row per quantity up to 30): more than half of an offer's
 * markup, and none of the readers below looks into it (the price, delivery and seller blocks all
 * come before it), so it is cut before tokenizing where its bounds are plain (QUANTITY_PICKER)
 * and otherwise not built.
 */
function isQuantityMenu(name: string, attr: AttributeReader): boolean {
  return name === "div" && QUANTITY_MENU.test(attr("class") ?? "");
}

/** Which kind of part an element is, if any. */
function partKind(
  name: string,
  attr: AttributeReader,
): "offer" | "input" | "container" | undefined {
  const id = attr("id");
  if (id !== undefined && OFFER_IDS.has(id)) return "offer";
  if (name === "div" && OLP_OFFER_CLASS.test(attr("class") ?? "")) return "offer";
  if (name === "input" && isAsinInputName(attr("name"))) return "input";
  if (id !== undefined && CONTAINER_IDS.has(id)) return "container";
}

/** The names of the inputs that carry the ASIN: items[0.base][asin], ASIN, metric-asin.<ASIN>. */
function isAsinInputName(name: string | undefined): boolean {
  return name === "items[0.base][asin]" || name === "ASIN" || !!name?.startsWith("metric-asin.");
}

/** The ASIN an input carries: in its name (metric-asin.<ASIN>) or its value; "" when none. */
function inputAsin(name: string, value: string | undefined): string {
  const asin = name.trim().startsWith("metric-asin.")
    ? name.trim().slice("metric-asin.".length)
    : value?.trim() ?? "";
  return /^[A-Z0-9]{10}$/.test(asin) ? asin : "";
}

// ---------------------------------------------------------------------------------------------
// AOD blocks

type OfferFields = Omit<Offer, "position">;

// The parts of an AOD offer the readers below look at, found in one walk of the offer (see
// firstOfEach). Where a part has several selectors, the first that matches is used, most
// specific first.
const AOD_PARTS = {
  soldBy: ["#aod-offer-soldBy"],
  shipsFrom: ["#aod-offer-shipsFrom"],
  priceBlock: ["#aod-offer-price, [id^=aod-price-]"],
  heading: ["#aod-offer-heading"],
  sellerRating: ["#aod-offer-seller-rating"],
  primeBadge: ["i.a-icon-prime, .aod-prime-badge"],
  // Signed-out 2025 fragments show no badge, and instead offer Prime members a faster free
  // delivery, which Amazon offers only on Prime-eligible offers.
  primeSignup: ["[id$=SECONDARY_DELIVERY_MESSAGE_LARGE] a.prime-signup-ingress"],
  shipCharge: ["#aod_ship_charge_row, .aod-ship-charge"],
  secondaryText: ["span.a-color-secondary.a-size-base"],
  // The promise block also holds the secondary "Prime members get…" offer.
  deliveryPromise: [
    "[id$='-slot-PRIMARY_DELIVERY_MESSAGE_LARGE']",
    "#delivery-message",
    ".aod-delivery-promise",
  ],
};
type AodPart = keyof typeof AOD_PARTS;
const AOD_SELECTORS = Object.values(AOD_PARTS).flat();

/** The first element of each part of an AOD offer (null where the offer lacks it). */
function aodParts(el: Element): Record<AodPart, Element | null> {
  const found = firstOfEach(el, AOD_SELECTORS);
  const parts = {} as Record<AodPart, Element | null>;
  let i = 0;
  for (const [part, selectors] of Object.entries(AOD_PARTS) as [AodPart, string[]][]) {
    parts[part] = found.slice(i, i + selectors.length).find((e) => e !== null) ?? null;
    i += selectors.length;
  }
  return parts;
}

function readAodOffer(el: Element, mp: string): OfferFields {
  const parts = aodParts(el);
  const sellerLink = parts.soldBy && one(parts.soldBy, "a[href]");
  const href = attr(sellerLink, "href");
  const sellerName = aodSellerName(parts.soldBy);
  const shipsFromName = visibleText(
    parts.shipsFrom && one(parts.shipsFrom, ".a-col-right span.a-color-base, .a-col-right span"),
  );
  return {
    price: parsePrice(aodPriceText(parts.priceBlock ?? el), mp),
    is_fba: queryParam(href, "isAmazonFulfilled") === "1" || /^Amazon\b/i.test(shipsFromName),
    seller: { id: sellerId(queryParam(href, "seller")), name: sellerName },
    is_prime: parts.primeBadge !== null || parts.primeSignup !== null,
    shipping: aodShipping(parts),
    condition: visibleText(parts.heading),
    seller_rating: positivePercent(visibleText(parts.sellerRating)),
  };
}

function aodSellerName(soldBy: Element | null): string {
  if (!soldBy) return "";
  const cell = one(soldBy, ".a-col-right") ?? soldBy;
  const named = one(cell, "a[href], span.a-color-base, span[aria-label], span.a-size-small");
  return visibleText(named);
}

/** The price to pay: the first `.a-price` that is not the struck-through list price. */
function aodPriceText(block: Element): string {
  const price = one(block, ".a-price:not(.a-text-price)");
  if (!price) return "";
  const offscreen = visibleText(one(price, ".a-offscreen"));
  if (offscreen) return offscreen;
  // 2025 fragments leave .a-offscreen empty and spell the price out in symbol/whole/fraction.
  return visibleText(one(price, "[aria-hidden=true]")).replace(/\s+/g, "");
}

// "Details" and "Join Prime" links trail the delivery promise; they are controls, not copy.
const isControl = (e: Element) =>
  (e.name === "a" &&
    /details|prime-signup/i.test(`${e.attribs.href ?? ""} ${e.attribs.class ?? ""}`)) ||
  /\baok-hidden\b/.test(e.attribs.class ?? "");

/** The shipping charge when the offer states one, else its delivery promise. */
function aodShipping(parts: Record<AodPart, Element | null>): string {
  const charge = visibleText(parts.shipCharge, isControl) || visibleText(parts.secondaryText);
  if (/\d/.test(charge)) return charge;
  // visibleText leaves single spaces only: " ?" rather than "\s*", which would retry from every
  // space of a long run (quadratic) were it ever handed raw text.
  return visibleText(parts.deliveryPromise, isControl).replace(/ ?\.\.\. ?More$/, "")
    .replace(/ ([.,])/g, "$1");
}

/** "95% positive over last 12 months" / "88% positive" → 95 / 88; null when the page shows none. */
function positivePercent(textValue: string): number | null {
  const m = /(\d{1,3})\s*%/.exec(textValue);
  return m ? Number(m[1]) : null;
}

// ---------------------------------------------------------------------------------------------
// Offer-listing rows

function readOlpOffer(row: Element, mp: { code: string; host: string }): OfferFields {
  const nameCell = one(row, ".olpSellerName");
  const sellerLink = nameCell && one(nameCell, "a[href]");
  const href = attr(sellerLink, "href");
  const amazonSells = !sellerLink && isAmazonRow(row, nameCell);
  return {
    price: parsePrice(visibleText(one(row, ".olpOfferPrice")), mp.code),
    is_fba: amazonSells || queryParam(href, "isAmazonFulfilled") === "1" ||
      one(row, ".olpFbaPopoverTrigger, .olpBadge a") !== null,
    seller: {
      id: sellerId(queryParam(href, "seller")),
      name: visibleText(sellerLink) || attr(one(nameCell ?? row, "img[alt]"), "alt") ||
        (amazonSells ? amazonName(mp.host) : ""),
    },
    is_prime: one(row, "i.a-icon-prime") !== null,
    shipping: olpShipping(row),
    condition: visibleText(one(row, ".olpCondition")),
    seller_rating: positivePercent(
      visibleText(one(row, ".olpSellerColumn a[href*=olp_merch_rating] b, .olpSellerColumn b")),
    ),
  };
}

/** A row whose seller cell shows only a logo, with shipping links naming Amazon's merchant id. */
function isAmazonRow(row: Element, nameCell: Element | null): boolean {
  if (!nameCell || !one(nameCell, "img")) return false;
  if (/^Amazon/i.test(attr(one(nameCell, "img[alt]"), "alt"))) return true;
  return all(row, "a[href*='seller=']").some((a) =>
    AMAZON_MERCHANTS.has(queryParam(attr(a, "href"), "seller"))
  );
}

function amazonName(host: string): string {
  return "Amazon" + host.replace(/^www\.amazon/, "");
}

/** "+ $3.99 shipping" or "FREE Shipping" as shown, without the estimated-tax note beside it. */
function olpShipping(row: Element): string {
  const info = one(row, ".olpShippingInfo");
  const shown = visibleText(info, (e) => /\bolpEstimatedTaxText\b/.test(e.attribs.class ?? ""));
  return shown.replace(/^&\s*/, "");
}

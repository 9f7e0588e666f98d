/**
 * Product (detail) page → ProductPage. One streaming pass keeps only the sections read below
 * (see parsers/sections.ts); script data (images, parent ASIN) is read from the raw text.
 *
 * Field sources, first match wins:
 * - asin: input#ASIN (the displayed variation), input[name=ASIN], the canonical link; only a value
 *   of ten capitals and digits counts, so a page cannot put markup or a path into `asin` and the
 *   `url` built from it (a page naming none is no product page: ParseError, an uncharged 502);
 * - brand: #bylineInfo ("Visit the X Store", "Brand: X", "Marke: X" …, or the bare link text),
 *   #brand, then the detail tables' Brand row; "" on pages whose byline names authors/artists;
 * - price: the buy box (corePrice / apex, priceblock_*, Kindle price, the active book offer,
 *   the selected format swatch), with list_price the struck-through price next to it;
 * - variations.parent_asin: the page's "parentAsin" script data, else a parentASIN= link
 *   parameter; "" when the page has neither (older pages without variations).
 */
import { attr, type Element, intFrom, ratingFrom, text } from "./dom.ts";
import { byId, byIds, type Captured, captureSections } from "./sections.ts";
import type { UnreadSpec } from "./unread_regions.ts";
import { DETAIL_SECTION_IDS, readDetailFacts } from "./detail_tables.ts";
import { colorImages, dynamicImage, mobileImages } from "./product_images.ts";
import { listPriceIn, parsePrice } from "./price.ts";
import { ParseError } from "./parse_error.ts";
import { asinFromUrl, firstInLink } from "./page_text.ts";
import { isAsin } from "./page_common.ts";
import { marketplace } from "../schemas/marketplaces.ts";
import type { ProductPage } from "../schemas/pages.ts";
import type { Image, PriceWithList } from "../schemas/resources.ts";
import { outermost, query } from "./dom_tree.ts";
import { variantsOf } from "./variants.ts";
import { ranksOf } from "./rank.ts";

// Selectors compiled once (dom.ts's one/all compile on every call).
const CONTRIBUTOR = query(".author, .contribution");
const PRICE_TO_PAY = query(".priceToPay, .apexPriceToPay");
const PLAIN_PRICE = query(".a-price:not(.a-text-price):not([data-a-strike])");
const BOOK_OFFER_PRICE = query(".header-price, .offer-price, .a-color-price");
const SELECTED_SWATCH_PRICE = query(
  ".swatchElement.selected .a-color-price, .swatchElement.selected .a-color-base:not(.slot-title)",
);
const OFFSCREEN = query(".a-offscreen");
const PRICE_PARTS = query(".a-price-symbol, .a-price-whole, .a-price-fraction");
const VISIBLE = query("[aria-hidden=true]");
const STRIKE_PRICE = query(".basisPrice .a-offscreen, .a-price[data-a-strike=true] .a-offscreen");
const OLD_STRIKE_PRICE = query(".priceBlockStrikePriceString, .a-text-strike");
const ACR_POPOVER = query("#acrPopover");
const ICON_ALT = query(".a-icon-alt");
const ACR_REVIEW_TEXT = query("#acrCustomerReviewText");
const MOBILE_REVIEW_COUNT = query(".cm-cr-review-stars-text-sm");
const FEATURE_TEXT = query(".offer-display-feature-text-message");
const LAST_CELL_VALUE = query("td:last-child .a-color-base");
const SELLER_LINK = query('a[href*="seller="]');
const TABULAR_SOLD_BY = query('.tabular-buybox-text[tabular-attribute-name="Sold by"]');
const TABULAR_MESSAGE = query(".tabular-buybox-text-message");
const TABULAR_LABEL = query(".tabular-buybox-label");
const TABULAR_TEXT = query(".tabular-buybox-text");
const LIST_ITEM = query("ul li");

export interface ProductOptions {
  marketplace: string;
  url?: string;
}

// Buy-box price containers, newest layout first.
const CORE_PRICE_IDS = [
  "corePrice_feature_div",
  "corePriceDisplay_desktop_feature_div",
  "corePriceDisplay_mobile_feature_div",
  "apex_desktop",
  "corePrice_desktop",
];
const OLD_PRICE_IDS = [
  "priceblock_dealprice",
  "priceblock_saleprice",
  "priceblock_ourprice",
  "price_inside_buybox",
];
const BOOK_PRICE_IDS = ["kindle-price", "newOfferAccordionRow", "buyNewSection"];
const MERCHANT_IDS = [
  "sellerProfileTriggerId",
  "merchantInfoFeature_feature_div",
  "tabular-buybox",
  "merchant-info",
  "Ebooks-desktop-printSoldBy",
];
// The buy box of a product sold used only (co.uk, .fr): its seller row is not in MERCHANT_IDS.
const USED_BUY_BOX_IDS = ["usedOnlyBuybox", "usedbuyBox"];
// Where such a buy box shows its price: the accordion row's header (.fr), or the box itself.
const USED_PRICE_IDS = ["usedBuySection", ...USED_BUY_BOX_IDS];
const SECTION_IDS = new Set<string>([
  "productTitle",
  "title", // the mobile page's title span (on desktop, the heading around #productTitle)
  "averageCustomerReviews_feature_div",
  "bylineInfo",
  "brand",
  "averageCustomerReviews",
  "availability",
  "outOfStock",
  "feature-bullets",
  "price",
  "tmmSwatches",
  ...CORE_PRICE_IDS,
  ...OLD_PRICE_IDS,
  ...BOOK_PRICE_IDS,
  ...MERCHANT_IDS,
  ...USED_PRICE_IDS,
  ...DETAIL_SECTION_IDS,
]);
const BUY_BUTTON_IDS = new Set([
  "add-to-cart-button",
  "add-to-cart-button-ubb", // a used-only buy box's: the item can be bought
  "buy-now-button",
  "one-click-button",
  "buyOneClick",
]);

const TAG_NAMES = new Set(["input", "link", "img"]);

/**
 * The bulky widgets a product page's pass leaves untokenized (see parsers/unread_regions.ts):
 * elements whose id names a feature block or a "sims" carousel (reviews, related products and
 * videos: about half of a 2026 page), unless they hold what the pass reads: a kept section's or
 * marker's id, or a tag `readTag` reads (an ASIN input, the canonical link, the landing image).
 */
export const PRODUCT_UNREAD: UnreadSpec = {
  starts: /\bid\s*=\s*["']?[\w-]*(?:_feature_div|sims-)/,
  // An id, name, rel or image-name value, in case as htmlparser2 reads it (attribute names in any
  // case, values as written); each starts at its "=", which keeps the scan quick.
  needed: new RegExp(
    `(?<=\\b[iI][dD]\\s*)=\\s*["']?(?:${
      [...SECTION_IDS, ...BUY_BUTTON_IDS].join("|")
    })(?![\\w-])|` +
      `=\\s*["']?(?:ASIN|canonical|landingImage|(?:ebooksI|i)mgBlkFront)(?![\\w-])`,
  ),
};

/** Single elements read from start tags during the pass, without keeping a subtree. */
export interface TagFacts {
  inputAsin: string;
  namedAsin: string;
  canonical: string;
  dynamicImage: string;
}

/**
 * A product page as read: the answer's fields, whether the page says in words it has no reviews
 * (the envelope then does not list reviews_count as missing), and whether it shows nothing that
 * tells stock: no availability line, no buy button, no out-of-stock box (in_stock's false is then
 * a default, and the envelope lists it as missing). The answer carries neither flag.
 */
export type ProductReading = ProductPage & { no_reviews_stated?: true; stock_unread?: true };

/** The reading's flags, which are no fields of the answer (parser health does not count them). */
export const READING_FLAGS: readonly string[] = ["no_reviews_stated", "stock_unread"];

export function parseProduct(html: string, opts: ProductOptions): ProductReading {
  const host = marketplace(opts.marketplace).host;
  if (typeof html !== "string" || !html.includes("<")) {
    throw new ParseError("empty", "The product page is empty or not HTML");
  }
  try {
    return readProduct(html, opts.marketplace, host);
  } catch (e) {
    if (e instanceof ParseError) throw e;
    // Last resort for markup no rule foresaw: the contract is that a parser throws only ParseError.
    throw new ParseError(
      "unrecognised",
      `The product page could not be read: ${(e as Error)?.message}`,
    );
  }
}

/**
 * The sections and start tags the product reader reads, in one pass that leaves `unread` out
 * (tests compare it with a pass that reads everything).
 */
export function readSections(
  html: string,
  unread: UnreadSpec | null = PRODUCT_UNREAD,
): { page: Captured; tags: TagFacts } {
  const tags: TagFacts = { inputAsin: "", namedAsin: "", canonical: "", dynamicImage: "" };
  const page = captureSections(html, {
    ids: SECTION_IDS,
    markers: BUY_BUTTON_IDS,
    tags: TAG_NAMES,
    onTag: (name, a) => readTag(tags, name, a),
    unread: unread ?? undefined,
  });
  return { page, tags };
}

function readProduct(html: string, code: string, host: string): ProductReading {
  const { page, tags } = readSections(html);
  const asin = [tags.inputAsin, tags.namedAsin].find(isAsin) || asinFromUrl(tags.canonical);
  if (!asin) throw noAsin(html);
  const facts = readDetailFacts(byIds(page, DETAIL_SECTION_IDS));
  // An availability line of no visible letter or digit (a control, zero-width or blank filler
  // character alone) shows nothing: it made in_stock true (probes CA, CB).
  const availabilityText = text(byId(page, "availability"));
  const availability = SHOWS_TEXT.test(availabilityText.replace(INVISIBLE, ""))
    ? availabilityText
    : "";
  const reviewsCount = reviewsCountOf(page);
  const buyButton = page.seen.size > 0;
  const outOfStockBox = byId(page, "outOfStock") !== null;
  return {
    url: `https://${host}/dp/${asin}`,
    asin,
    brand: brandOf(page, facts),
    price: priceOf(page, code),
    title: text(byId(page, "productTitle")) || text(byId(page, "title")),
    images: imagesOf(html, tags.dynamicImage),
    rating: ratingOf(page),
    in_stock: inStock(outOfStockBox, availability, buyButton),
    merchant: merchantOf(page),
    variations: { parent_asin: parentAsinOf(html) },
    availability,
    product_facts: facts,
    reviews_count: reviewsCount,
    feature_bullets: bulletsOf(page),
    variants: variantsOf(html, asin),
    bestsellers_rank: ranksOf(facts),
    ...(reviewsCount === 0 && statesNoReviews(html) ? { no_reviews_stated: true as const } : {}),
    // Nothing on the page tells stock: in_stock's false is then only a default.
    ...(availability === "" && !buyButton && !outOfStockBox ? { stock_unread: true as const } : {}),
  };
}

function readTag(tags: TagFacts, name: string, a: Record<string, string>): void {
  if (name === "input") {
    if (a.id === "ASIN" && !tags.inputAsin) tags.inputAsin = (a.value ?? "").trim();
    else if (a.name === "ASIN" && !tags.namedAsin) tags.namedAsin = (a.value ?? "").trim();
  } else if (name === "link" && a.rel === "canonical" && !tags.canonical) {
    tags.canonical = a.href ?? "";
  } else if (
    name === "img" && !tags.dynamicImage && a["data-a-dynamic-image"] && isLandingImage(a)
  ) {
    tags.dynamicImage = a["data-a-dynamic-image"];
  }
}

function isLandingImage(a: Record<string, string>): boolean {
  return a.id === "landingImage" || a.id === "imgBlkFront" || a.id === "ebooksImgBlkFront" ||
    a["data-a-image-name"] === "landingImage";
}

function noAsin(html: string): ParseError {
  if (/validateCaptcha|api-services-support@amazon\.com|\/ap\/signin/.test(html.slice(0, 20000))) {
    return new ParseError(
      "blocked",
      "Amazon answered with a robot check instead of the product page",
    );
  }
  return new ParseError("unrecognised", "The page names no ASIN, so it is not a product page");
}

// ---- brand ----

// "Visit the X Store" and "Brand: X" in the languages of every marketplace Shelf serves.
const BYLINE_BRAND = [
  /^Visit the (.+?) Store$/i,
  /^(?:Brand|Marke|Marque|Marca|Merk|Marka|Varumärke|ブランド|العلامة التجارية)\s*[:：]\s*(.+)$/i,
  /^Besuchen Sie den (.+?)-Store$/i,
  /^Besuche den (.+?)-Store$/i,
  /^Visitez la boutique (?:de |d['’])?(.+)$/i,
  /^Visita la tienda de (.+)$/i,
  /^Visita lo Store di (.+)$/i,
  /^Bezoek de (.+?)-winkel$/i,
  /^Visite a loja (?:da |de |do )?(.+)$/i,
  /^Besök (.+?)-butiken$/i,
  /^Odwiedź sklep (.+)$/i,
  /^(.+?) Mağazasını ziyaret edin$/i,
  /^قم بزيارة متجر (.+)$/,
  /^(.+?)のストアを表示$/,
  /^(.+?)ストアにアクセス$/,
];
const BRAND_FACTS = [
  "Brand",
  "Marke",
  "Marque",
  "Marca",
  "Merk",
  "Marka",
  "Varumärke",
  "ブランド",
  "العلامة التجارية",
  "Brand Name",
];

/** The brand a byline names in one of the known phrasings, or "" when it uses none of them. */
export function brandFromByline(byline: string): string {
  for (const re of BYLINE_BRAND) {
    const m = re.exec(byline.trim());
    if (m) return m[1].trim();
  }
  return "";
}

function brandOf(page: Captured, facts: Record<string, string>): string {
  const factBrand = BRAND_FACTS.map((label) => facts[label]).find(Boolean) ?? "";
  const byline = byId(page, "bylineInfo");
  if (byline && !CONTRIBUTOR.one(byline)) {
    const s = text(byline);
    const named = brandFromByline(s);
    // A store is not always the brand ("Visit the Amazon Renewed Store" over an Apple phone):
    // where the page states the brand too, the stated brand wins.
    if (named) return factBrand || named;
    // A byline in a phrasing not known above is a sentence, not a name: the overview's row wins.
    if (s && (!factBrand || !/\s/.test(s))) return s;
  }
  const brand = text(byId(page, "brand"));
  if (brand) return brand;
  return factBrand;
}

// ---- price ----

function priceOf(page: Captured, code: string): PriceWithList | null {
  const found = corePrice(page) ?? oldPrice(page) ?? bookPrice(page);
  if (!found) return null;
  const price = parsePrice(found.text, code);
  if (!price) return null;
  return { ...price, list_price: listPriceIn(price, found.listText || listPriceNear(page), code) };
}

interface FoundPrice {
  text: string;
  listText: string;
}

function corePrice(page: Captured): FoundPrice | null {
  for (const section of byIds(page, CORE_PRICE_IDS)) {
    const el = PRICE_TO_PAY.one(section) ??
      PLAIN_PRICE.one(section);
    const t = priceText(el);
    if (t) return { text: t, listText: strikePrice(section) };
  }
  return null;
}

function oldPrice(page: Captured): FoundPrice | null {
  for (const el of byIds(page, OLD_PRICE_IDS)) {
    const t = text(el);
    if (/\d/.test(t)) return { text: t, listText: "" };
  }
  return null;
}

function bookPrice(page: Captured): FoundPrice | null {
  for (const section of byIds(page, BOOK_PRICE_IDS)) {
    const el = section.attribs.id === "kindle-price" ? section : BOOK_OFFER_PRICE.one(section);
    const t = text(el);
    if (/\d/.test(t)) return { text: t, listText: strikePrice(section) };
  }
  // A product sold used only: its buy box's price, not the format swatch's "from" price, which is
  // the cheapest offer in any condition (they agreed on the corpus page only by chance; probe AR).
  if (usedOnly(page)) {
    for (const section of byIds(page, USED_PRICE_IDS)) {
      const t = text(BOOK_OFFER_PRICE.one(section));
      if (/\d/.test(t)) return { text: t, listText: "" };
    }
  }
  const swatch = SELECTED_SWATCH_PRICE.one(
    byIds(page, ["tmmSwatches"]),
  );
  const t = text(swatch);
  return /\d/.test(t) ? { text: t, listText: "" } : null;
}

/** Whether the page's only buy button is the used buy box's. */
function usedOnly(page: Captured): boolean {
  return page.seen.has("add-to-cart-button-ubb") &&
    [...page.seen].every((id) => id === "add-to-cart-button-ubb");
}

/**
 * The text of an `.a-price`: its offscreen copy, or, when that is empty, its visible parts
 * (symbol, whole, fraction) put together as shown, without the markup's whitespace.
 */
function priceText(el: Element | null): string {
  if (!el) return "";
  const offscreen = text(OFFSCREEN.one(el));
  if (/\d/.test(offscreen)) return offscreen;
  const parts = outermost(PRICE_PARTS.all(el)).map((p) => text(p)).join("");
  if (/\d/.test(parts)) return parts;
  const visible = text(VISIBLE.one(el)) || text(el);
  return /\d/.test(visible) ? visible : "";
}

function strikePrice(section: Element): string {
  const el = STRIKE_PRICE.one(section) ??
    OLD_STRIKE_PRICE.one(section);
  return text(el);
}

/** The struck-through price of the buy box when the price itself came from elsewhere in it. */
function listPriceNear(page: Captured): string {
  for (const section of byIds(page, [...CORE_PRICE_IDS, "price"])) {
    const t = strikePrice(section);
    if (t) return t;
  }
  return "";
}

// ---- images ----

function imagesOf(html: string, dynamicJson: string): Image[] {
  const fromScript = colorImages(html);
  if (fromScript && fromScript.length > 0) return fromScript;
  const landing = dynamicJson ? dynamicImage(dynamicJson) : null;
  if (landing) return [landing];
  return mobileImages(html);
}

// ---- reviews ----

/** The rating widget: `#averageCustomerReviews` on desktop, its feature div on mobile. */
function reviewsBox(page: Captured): Element | null {
  return byId(page, "averageCustomerReviews") ?? byId(page, "averageCustomerReviews_feature_div");
}

function ratingOf(page: Captured): number {
  const box = reviewsBox(page);
  if (!box) return 0;
  const popover = ACR_POPOVER.one(box);
  const label = attr(popover, "title") || text(ICON_ALT.one(box));
  return ratingFrom(label) ?? frenchRating(label) ?? 0;
}

/** "4.3 étoiles sur 5", which ratingFrom of dom.ts does not read (the word sits between). */
function frenchRating(s: string): number | null {
  const m = /(\d(?:[.,]\d)?)\s*étoiles? sur 5/i.exec(s);
  return m ? parseFloat(m[1].replace(",", ".")) : null;
}

/**
 * Whether the page says in words that the product has no reviews: the reviews widget's heading
 * (`<h2 data-hook="total-review-count">No customer reviews`, "Keine Kundenrezensionen") holds
 * text and no digit. Then reviews_count's 0 is read off the page, not missing (probe BM). Read
 * from the raw page, as the widget is left untokenized; page text cannot write the attribute (its
 * quotes are escaped there).
 */
function statesNoReviews(html: string): boolean {
  const at = html.indexOf('data-hook="total-review-count"');
  if (at < 0) return false;
  const m = /^[^>]*>([^<]{0,200})</.exec(html.slice(at, at + 1_000));
  const said = m?.[1].trim() ?? "";
  return said !== "" && !/\d/.test(said);
}

function reviewsCountOf(page: Captured): number {
  const box = reviewsBox(page);
  const count = ACR_REVIEW_TEXT.one(box ?? []) ?? MOBILE_REVIEW_COUNT.one(box ?? []);
  return intFrom(text(count)) ?? 0;
}

// ---- availability and merchant ----

// The Japanese, Portuguese, Dutch, Swedish, Polish, Turkish and Arabic wordings follow each
// marketplace's "Currently unavailable" and "Temporarily out of stock" lines; no corpus page shows
// them (probes CA, CB).
const OUT_OF_STOCK =
  /unavailable|out of stock|nicht verfügbar|nicht auf lager|indisponible|rupture de stock|no disponible|agotado|sin stock|non disponibile|esaurito|niet beschikbaar|niet verkrijgbaar|niet op voorraad|在庫切れ|在庫なし|販売終了|お取り扱いできません|não disponível|indisponível|fora de estoque|inte tillgänglig|slut i lager|niedostępn|brak w magazynie|mevcut değil|stokta yok|غير متوفر|نفد من المخزون|نفدت الكمية|nicht vorrätig|ausverkauft|nicht mehr erhältlich|vergriffen|uitverkocht|épuisé|esgotado/i;
// Letters and digits, once the characters that show nothing (Hangul fillers, zero-width and
// other default-ignorable ones) are taken out: U+3164 alone counts as a letter.
const SHOWS_TEXT = /[\p{L}\p{N}]/u;
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu;

function inStock(outOfStockBox: boolean, availability: string, buyButton: boolean): boolean {
  if (outOfStockBox || OUT_OF_STOCK.test(availability)) return false;
  return availability !== "" || buyButton;
}

// Read in text() only: its single spaces leave no line break for `$` to fail at, so the lazy
// name ends at the first "and"/"."/end and the pattern stays linear.
const SOLD_BY =
  /(?:sold by|verkauf(?: und versand)? durch|vendu par|vendido por|venduto da|verkocht door)\s*:?\s+(.+?)(?:\s+(?:and|und|et|y|e|en)\s|\.\s|\.$|$)/i;

function merchantOf(page: Captured): string {
  const trigger = text(byId(page, "sellerProfileTriggerId"));
  if (trigger) return trigger;
  const feature = byId(page, "merchantInfoFeature_feature_div");
  const featureText = text(FEATURE_TEXT.one(feature ?? []));
  if (featureText) return featureText;
  const tabular = tabularSeller(byId(page, "tabular-buybox"));
  if (tabular) return tabular;
  // The seller's link names it whole; the "Sold by" pattern cut a name at its first " and ",
  // " und ", " e " or ". " ("Amazon und Merc Enterprises" read as Amazon; probe AY), so it serves
  // only the linkless line ("Ships from and sold by Amazon.com.").
  const merchantInfo = byId(page, "merchant-info");
  const linked = text(SELLER_LINK.one(merchantInfo ?? []));
  if (linked) return linked;
  const info = SOLD_BY.exec(text(merchantInfo))?.[1];
  if (info) return info.trim();
  const ebook = byId(page, "Ebooks-desktop-printSoldBy");
  const ebookSeller = text(LAST_CELL_VALUE.one(ebook ?? []));
  if (ebookSeller) return ebookSeller;
  // Only where the used box is the buy box: beside a new offer's, its seller is not the merchant.
  if ([...page.seen].some((id) => id !== "add-to-cart-button-ubb")) return "";
  for (const id of USED_BUY_BOX_IDS) {
    const seller = text(SELLER_LINK.one(byId(page, id) ?? []));
    if (seller) return seller;
  }
  return "";
}

/** The "Sold by" value of the tabular buy box (label/value pairs, or attribute-named rows). */
function tabularSeller(box: Element | null): string {
  if (!box) return "";
  const named = TABULAR_SOLD_BY.one(box);
  if (named) return text(TABULAR_MESSAGE.one(named)) || text(named);
  const labels = TABULAR_LABEL.all(box);
  const values = TABULAR_TEXT.all(box);
  if (labels.length !== values.length) return "";
  const i = labels.findIndex((l) => /^sold by$/i.test(text(l)));
  return i >= 0 ? text(values[i]) : "";
}

// ---- bullets and variations ----

// The apparel layout puts "About this item" inside its product-facts expander.
function bulletsOf(page: Captured): string[] {
  const box = byId(page, "feature-bullets") ?? byId(page, "productFactsDesktopExpander");
  if (!box) return [];
  // Outermost: a list nested in a bullet is read with it, not again at every level (probe AT).
  return outermost(LIST_ITEM.all(box))
    .filter((li) =>
      li.attribs.id !== "replacementPartsFitmentBullet" &&
      !/\baok-hidden\b/.test(li.attribs.class ?? "")
    )
    .map((li) => text(li))
    .filter((s) => s !== "");
}

// indexOf first: a regex opening with a character class would walk the whole page.
const DM_ITEM = "P.register('dm-aw-item'";

/**
 * The parent named by a music page's own item script (probe BM: the amazon.fr page names it only
 * there): `<script> P.register('dm-aw-item', function() { var Item = {}; … Item.parentAsin =
 * 'B07H57DNVV'; … </script>`. Only in a script element whose text starts so: review text and
 * listing titles keep their apostrophes, and the same words written there named any parent the
 * writer chose (probe BN); a page's text cannot open a script element.
 */
function dmItemParent(html: string): string {
  for (let at = html.indexOf(DM_ITEM), tries = 0; at >= 0 && tries < 20; tries++) {
    const open = html.lastIndexOf("<script", at);
    const tagEnd = open < 0 ? -1 : html.indexOf(">", open);
    if (tagEnd >= 0 && tagEnd < at && html.slice(tagEnd + 1, at).trim() === "") {
      const end = html.indexOf("</script", at);
      const body = html.slice(at, end < 0 ? at + 2_000 : Math.min(end, at + 2_000));
      return /\bItem\.parentAsin\s*=\s*'([A-Z0-9]{10})'/.exec(body)?.[1] ?? "";
    }
    at = html.indexOf(DM_ITEM, at + DM_ITEM.length);
  }
  return "";
}

function parentAsinOf(html: string): string {
  const json = html.indexOf('"parentAsin"');
  if (json >= 0) {
    const m = /"parentAsin"\s*:\s*"([A-Z0-9]{10})"/y;
    m.lastIndex = json;
    const found = m.exec(html)?.[1];
    if (found) return found;
  }
  const item = dmItemParent(html);
  if (item) return item;
  // In a link of the page only: written in a review, a carousel card's title or the listing's
  // own title, it named any parent the writer chose (probe AY).
  return firstInLink(html, /parentASIN=([A-Z0-9]{10})/g)?.[1] ?? "";
}

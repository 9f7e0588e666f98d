/**
 * A promotion page (`/promotion/psp/<promo_id>`): title, schedule, terms and the eligible items.
 *
 * Verified on two real amazon.com.br pages of 2026 (tests/fixtures/promotion, saved by a browser,
 * from itsManeka/amazing-scraper): `#promotionTitle`, `#promotionSchedule`, the eligible products
 * as `li.productGrid` tiles, the id in `#queryModel_promotionId`. The page also holds the shopper's
 * cart (the "everywhere cart" flyout and the page's own cart preview), whose `[data-asin]` rows are
 * not eligible items. The terms come in `#promo_tnc_content_<id>_…`, which the page fills from
 * `/promotion/details/popup/<id>` by script, so a fetched page may well show none; older names
 * (`#promotionTerms`, …) are kept from public scrapers' readings.
 */
import { all, attr, type Document, linkUrl, one, parseHtml, text } from "./dom.ts";
import { ParseError } from "./parse_error.ts";
import type { PromotionPage } from "../schemas/pages.ts";
import { guardParse, isAsin, originOf, type ParseOptions } from "./page_common.ts";
import { startTagWhere } from "./page_text.ts";

const PROMO_ID = /\/promotion\/psp\/([A-Za-z0-9]+)/;
const TERMS =
  '[id^="promo_tnc_content_"], #promotionTerms, #termsAndConditions, #promotionDescription';
const GRID_TILE = 'li.productGrid[data-asin], [name="productGrid"][data-asin]';
// The shopper's cart, on the page beside the promotion: never eligible items as such.
const CART_ROW = /(?:^|\s)(?:ewc-item|cartItemGrid)(?:\s|$)/;
// "From … to …" in the page's language; the dates stay the page's own text. Read in text() only,
// whose single spaces leave no line break for `$` to fail at: on raw text with one, RANGE's two
// lazy groups would make it cubic in the text's length.
const RANGE =
  /^(?:from|de|vom|von|du|desde|dal)\s+(.+?)\s+(?:to|until|até|bis|au|hasta|al)\s+(.+?)\.?$/i;
const ENDS =
  /^(?:ends?(?: on)?|expires?(?: on)?|expira em|endet am|termine le|finaliza el|scade il)\s*:?\s+(.+?)\.?$/i;
// A number is tried from the first digit of its run only (`(?<!\d)`; for "… €", the first digit
// of its run of digits, dots and commas): tried from every digit, a long run would be scanned
// once per digit (quadratic: 40,000 digits, 2.4 s). A later start in the run finds nothing the
// first does not, so the match is the same.
const DISCOUNT =
  /(?<!\d)\d+(?:[.,]\d+)?\s?%|(?:US\$|R\$|[$€£₹¥])\s?\d[\d.,]*|(?<=(?<![\d.,])[.,]*)\d[\d.,]*\s?(?:€|zł|kr)/;

export function parsePromotion(html: string, opts: ParseOptions): PromotionPage {
  return guardParse("promotion page", html, opts, () => {
    // The page must mark itself a promotion: the id in the URL asked for is any page's at that
    // URL, and a search or product page there gave its product tiles as eligible items (probe
    // CN). A page there that shows no promotion is an ended or unknown one, as below.
    const shownId = promoIdShown(html);
    if (!/id=["']promotionTitle["']/.test(html) && !shownId) {
      throw new ParseError("not_found", "The page at the promotion's address shows no promotion");
    }
    // The page's own id names what it shows, wherever it was found (probe CO).
    const asked = PROMO_ID.exec(opts.url ?? "")?.[1];
    const promoId = shownId || asked || "";
    const doc = parseHtml(html);
    const origin = originOf(opts.marketplace);
    const title = text(one(doc, "#promotionTitle h1")) || text(one(doc, "#promotionTitle"));
    const { starts_at, ends_at } = schedule(text(one(doc, "#promotionSchedule")));
    const terms = text(one(doc, TERMS));
    const items = eligibleItems(doc);
    // The id alone comes from the URL asked for: a page showing no title, terms or items is an
    // ended or unknown promotion, a 404 as an ended deal is, not an empty answer that costs a
    // credit.
    if (!title && !terms && items.length === 0) {
      throw new ParseError("not_found", "The promotion page shows no promotion (ended or unknown)");
    }
    // The URL names the promotion shown: not the one asked for when the page states another
    // (probe EC: the answer named two promotions).
    return {
      url: opts.url && (!shownId || shownId === asked)
        ? linkUrl(opts.url, origin)
        : promoId
        ? `${origin}/promotion/psp/${promoId}`
        : "",
      terms,
      title,
      ends_at,
      discount: DISCOUNT.exec(title)?.[0] ?? "",
      promo_id: promoId,
      starts_at,
      marketplace: opts.marketplace.toUpperCase(),
      eligible_items: items,
    };
  });
}

function schedule(s: string): { starts_at: string | null; ends_at: string | null } {
  const range = RANGE.exec(s);
  if (range) return { starts_at: range[1], ends_at: range[2] };
  const ends = ENDS.exec(s);
  return { starts_at: null, ends_at: ends ? ends[1] : null };
}

/**
 * Every ASIN a product tile names, once, in page order: the grid's tiles, else (another layout)
 * every `[data-asin]` outside the shopper's cart.
 */
function eligibleItems(doc: Document): string[] {
  const grid = all(doc, GRID_TILE);
  const tiles = grid.length > 0
    ? grid
    : all(doc, "[data-asin]").filter((el) => !CART_ROW.test(attr(el, "class")));
  const seen = new Set<string>();
  for (const el of tiles) {
    const asin = attr(el, "data-asin");
    if (isAsin(asin)) seen.add(asin);
  }
  return [...seen];
}

/** The promotion id the page itself names: its canonical link, else its form field. */
function promoIdShown(html: string): string {
  const canonical = startTagWhere(html, "link", /rel=["']?canonical["']?/i);
  const fromCanonical = PROMO_ID.exec(canonical)?.[1];
  if (fromCanonical) return fromCanonical;
  // The page's own form field, where it declares no canonical link (a page saved by a browser).
  const field = startTagWhere(html, "input", /id=["']?queryModel_promotionId["']?/i);
  return /\bvalue=["']?([A-Za-z0-9]{6,40})["'\s>]/.exec(field)?.[1] ?? "";
}

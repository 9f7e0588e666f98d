/**
 * The products of one deal (`/deal/<id>`): Amazon's deal landing page ("octopus DLP"), whose
 * `#octopus-dlp-asin-stream` lists one `.octopus-dlp-asin-section` per product.
 *
 * NOT YET VERIFIED ON A REAL PAGE: the corpus holds no deal page. The selectors follow what public
 * scrapers read on it (`octopus-dlp-asin-image`, `octopus-dlp-asin-title`, `a-price`,
 * `octopus-widget-strike-through-price`) and are tested on a hand-built page in that shape only.
 */
import {
  all,
  attr,
  type Element,
  imageUrl,
  intFrom,
  one,
  parseHtml,
  ratingFrom,
  text,
} from "./dom.ts";
import { listPriceIn, parsePrice } from "./price.ts";
import { ParseError } from "./parse_error.ts";
import type { DealProductsPage } from "../schemas/pages.ts";
import type { DealProductItem, PriceWithList } from "../schemas/resources.ts";
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
import { startTagWhere } from "./page_text.ts";

const ITEM = ".octopus-dlp-asin-section, #octopus-dlp-asin-stream li[data-asin]";
const STRIKE =
  ".octopus-widget-strike-through-price, .a-price.a-text-price .a-offscreen, .a-text-strike";

export function parseDealProducts(html: string, opts: ParseOptions): DealProductsPage {
  return guardParse("deal page", html, opts, () => {
    if (!/octopus-dlp-asin-s(?:tream|ection)/.test(html)) {
      throw new ParseError("unrecognised", "Cannot parse deal page: no deal product list");
    }
    const doc = parseHtml(html);
    const origin = originOf(opts.marketplace);
    const results: DealProductItem[] = [];
    for (const section of outermost(all(doc, ITEM))) {
      const item = readItem(section, origin, opts.marketplace);
      if (item) results.push(item);
    }
    // A deal page listing no products is an ended or unknown deal: a 404, as an ended promotion
    // is, not an empty answer that costs a credit (probe EC).
    if (results.length === 0) {
      throw new ParseError("not_found", "The deal page shows no products (ended or unknown)");
    }
    return { deal_id: dealIdOf(html, opts.url), results };
  });
}

function readItem(section: Element, origin: string, marketplace: string): DealProductItem | null {
  const link = one(section, 'a[href*="/dp/"], a[href*="/gp/product/"]');
  const own = attr(section, "data-asin");
  const asin = isAsin(own) ? own : asinFromHref(attr(link, "href"));
  if (!asin) return null;
  const img = one(section, "img.octopus-dlp-asin-image") ?? one(section, "img");
  return {
    url: productUrl(origin, asin),
    asin,
    image: imageUrl(attr(img, "src")) || null,
    price: priceOf(section, marketplace),
    title: text(one(section, ".octopus-dlp-asin-title")) || text(one(section, "a.a-text-normal")),
    rating: ratingFrom(text(one(section, ".a-icon-alt"))) ?? 0,
    reviews_count: intFrom(
      text(
        one(
          section,
          ".octopus-dlp-review-count, .a-icon-row .a-size-mini, .a-icon-row .a-size-small",
        ),
      ),
    ) ?? 0,
  };
}

function priceOf(section: Element, marketplace: string): PriceWithList | null {
  const current = text(
    one(section, ".a-price:not(.a-text-price) .a-offscreen, .octopus-widget-price .a-offscreen"),
  );
  const price = current ? parsePrice(current, marketplace) : null;
  if (!price) return null;
  return { ...price, list_price: listPriceIn(price, text(one(section, STRIKE)), marketplace) };
}

/** The deal id from the requested URL, else from the page's canonical link; "" when neither. */
/**
 * The deal the page is of: its canonical link's, which names the deal shown whatever id reached
 * the page (probe EC: another deal's page was answered as the deal asked for), else the URL's.
 */
function dealIdOf(html: string, url?: string): string {
  const canonical = startTagWhere(html, "link", /rel=["']?canonical["']?/i);
  return dealIdFromHref(canonical) || dealIdFromHref(url ?? "");
}

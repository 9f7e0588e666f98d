/**
 * Seller profile (`/sp?seller=<id>`): name, logo, "About Seller", the twelve-month feedback
 * summary and the "Detailed Seller Information" box.
 *
 * NOT YET VERIFIED ON A REAL PAGE: the corpus holds no seller profile. The selectors follow what
 * public scrapers read on it (`#seller-name`, `#seller-logo-column img`,
 * `#seller-info-feedback-summary`, `#spp-expander-about-seller`, `#page-section-detail-seller-info`
 * rows of `.a-text-bold` label + value, address lines in `.indent-left` rows) and are tested on a
 * hand-built page in that shape only.
 */
import {
  all,
  type AnyNode,
  attr,
  type Document,
  type Element,
  imageUrl,
  intFrom,
  linkUrl,
  one,
  parseHtml,
  ratingFrom,
  text,
} from "./dom.ts";
import { outermost } from "./dom_tree.ts";
import { ParseError } from "./parse_error.ts";
import { isEmptyValue } from "../core/empty_value.ts";
import type { SellerProfilePage } from "../schemas/pages.ts";
import { guardParse, originOf, type ParseOptions } from "./page_common.ts";

const MARKERS =
  /id=["'](?:seller-name|seller-info-feedback-summary|page-section-detail-seller-info)["']/;

export function parseSellerProfile(html: string, opts: ParseOptions): SellerProfilePage {
  return guardParse("seller profile", html, opts, () => {
    if (!MARKERS.test(html)) {
      throw new ParseError("unrecognised", "Cannot parse seller profile: no seller markup");
    }
    const doc = parseHtml(html);
    const origin = originOf(opts.marketplace);
    const sellerId = sellerIdOf(doc, opts.url);
    const summary = one(doc, "#seller-info-feedback-summary");
    const summaryText = text(summary);
    const asked = sellerAsked(opts.url);
    const profile = {
      url: opts.url && (!asked || asked === sellerId)
        ? linkUrl(opts.url, origin)
        : sellerId
        ? `${origin}/sp?seller=${sellerId}`
        : "",
      logo: imageUrl(
        attr(one(doc, "#seller-logo-column img, #sellerLogo, img.seller-logo-img"), "src"),
      ),
      name: text(one(doc, "#seller-name")),
      about: aboutOf(doc),
      rating: ratingFrom(text(one(summary ?? doc, ".a-icon-alt"))) ??
        ratingFrom(text(one(doc, "#effective-timeperiod-rating-year-description"))) ?? 0,
      seller_id: sellerId,
      positive_pct: intFrom(/(\d{1,3})\s?%/.exec(summaryText)?.[1] ?? "") ?? 0,
      ratings_count: ratingsCountOf(summaryText, doc),
      business_details: businessDetails(doc),
    };
    // A profile showing nothing of a seller is an unknown one: a 404, as an ended promotion is,
    // not an empty answer that costs a credit (probe EC).
    const { url: _, seller_id: __, ...shown } = profile;
    if (Object.values(shown).every(isEmptyValue)) {
      throw new ParseError("not_found", "The seller profile page shows no seller");
    }
    return profile;
  });
}

/** The expanded "About Seller" text when the page carries it, else the visible part. */
function aboutOf(doc: Document): string {
  // The expander first: a selector list gives the first match in page order, which was the
  // section around it, and the section's own text opens with its "About Seller" heading.
  const expander = one(doc, "#spp-expander-about-seller");
  const box = expander ?? one(doc, "#page-section-about-seller");
  if (!box) return "";
  return text(one(box, ".spp-expander-more-content")) ||
    text(one(box, ".spp-expander-less-content")) ||
    (expander ? text(box) : textBesideHeadings(box));
}

const HEADING = /^h[1-6]$/;

/** The text of `box` without its headings (a section's title is no part of what it says). */
function textBesideHeadings(box: Element): string {
  return box.children.filter((c) => !(c.type === "tag" && HEADING.test((c as Element).name)))
    .map(text).filter(Boolean).join(" ");
}

/** "(1,234 ratings)" in the summary, else the twelve-month count of the ratings table. */
function ratingsCountOf(summaryText: string, doc: Document): number {
  const inSummary = parenthesisedCount(summaryText);
  return intFrom(inSummary ?? "") ??
    intFrom(text(one(doc, "#rating-365d-num .ratings-reviews-count"))) ?? 0;
}

/**
 * The count opening the first parenthesis that opens with one ("(1,234 ratings)" → "1,234 "), as
 * `/\(([\d.,\s\u00a0]+)[^)]*\)/` reads it, by indexOf: that regex retries `[^)]*` from every
 * "(" of a text holding many and no ")" (quadratic).
 */
function parenthesisedCount(s: string): string | undefined {
  const count = /[\d.,\s\u00a0]+/y;
  let close = -1;
  for (let open = s.indexOf("("); open >= 0; open = s.indexOf("(", open + 1)) {
    if (close < open) close = s.indexOf(")", open); // the first ")" after this "(" too
    if (close < 0) return undefined;
    count.lastIndex = open + 1;
    const m = count.exec(s); // stops before any ")"
    if (m) return m[0];
  }
  return undefined;
}

/** The seller id of the profile's address (`/sp?seller=ID`). */
function sellerAsked(url?: string): string | undefined {
  return /[?&]seller=([A-Z0-9]+)/.exec(url ?? "")?.[1];
}

/**
 * The seller the page is of: its storefront link's, which names the seller shown whatever id
 * reached the page (probe EC: another seller's profile at `?seller=X` was answered as X's), else
 * the id asked for, else the first seller link's.
 */
function sellerIdOf(doc: Document, url?: string): string {
  const idIn = (href: string) => /[?&](?:seller|me)=([A-Z0-9]{8,})/.exec(href)?.[1];
  const own = idIn(attr(one(doc, '#seller-info-storefront-link a[href*="me="]'), "href"));
  if (own) return own;
  const fromUrl = sellerAsked(url);
  if (fromUrl) return fromUrl;
  for (const a of all(doc, 'a[href*="seller="], a[href*="me="]')) {
    const id = idIn(attr(a, "href"));
    if (id) return id;
  }
  return "";
}

/**
 * Label → value of "Detailed Seller Information". A label row holds a bold label and maybe its
 * value; the `.indent-left` rows after it are further lines of the same value (the address).
 */
function businessDetails(doc: Document): Record<string, string> {
  const details: Record<string, string> = {};
  const box = one(doc, "#page-section-detail-seller-info");
  if (!box) return details;
  let key = "";
  // Each row met, and whether it was read: a row's text holds every row nested in it, so reading
  // those too appended the innermost text to the same key once per level. A row inside one that
  // holds no label holds none either, and is not searched again.
  const met = new Map<AnyNode, boolean>();
  for (const row of all(box, ".a-row")) {
    const outer = nearestMet(row, met);
    if (outer === true) continue;
    const label = outer === false ? null : one(row, ".a-text-bold");
    if (label) {
      key = text(label).replace(/ ?[:：]$/, ""); // text() leaves single spaces, trimmed
      addLine(details, key, valueAfterLabel(row, label));
      met.set(row, true);
    } else if (key && /\bindent-left\b/.test(attr(row, "class"))) {
      addLine(details, key, text(row));
      met.set(row, true);
    } else met.set(row, false);
  }
  for (const k of Object.keys(details)) if (!details[k]) delete details[k];
  return details;
}

function valueAfterLabel(row: Element, label: Element): string {
  // A span's text holds the spans nested in it, which would otherwise repeat it once per level.
  const spans = all(row, "span").filter((s) => s !== label && s.parent !== label);
  return outermost(spans).map(text).filter(Boolean).join(" ");
}

/** What `met` says of the nearest row enclosing `row` (rows inside a read row are never met). */
function nearestMet(row: Element, met: Map<AnyNode, boolean>): boolean | undefined {
  for (let p = row.parent; p; p = p.parent) {
    const read = met.get(p);
    if (read !== undefined) return read;
  }
  return undefined;
}

function addLine(details: Record<string, string>, key: string, line: string) {
  if (!key) return;
  // A label is page text: "constructor" or "toString" would otherwise read Object's own member.
  const prev = Object.hasOwn(details, key) ? details[key] : "";
  details[key] = prev && line ? `${prev}, ${line}` : prev || line;
}

/**
 * Helpers shared by the merchandising and seller parsers (best sellers, categories, deals,
 * deal products, seller profile, promotion): the ParseError-only guard, marketplace origin,
 * ASIN links and the cheap region slice that keeps the DOM small.
 */
import { ParseError } from "./parse_error.ts";
import { type Marketplace, marketplaceForId, MARKETPLACES } from "../schemas/marketplaces.ts";

/** Parser options every page parser takes. */
export interface ParseOptions {
  marketplace: string;
  url?: string;
}

/**
 * Runs a parser body so that it can only fail with ParseError: empty or non-HTML input and an
 * unknown marketplace are refused up front, and any other exception (a selector engine bug, a
 * truncated page tripping an assumption) becomes `unrecognised` instead of escaping.
 */
export function guardParse<T>(what: string, html: string, opts: ParseOptions, body: () => T): T {
  if (typeof html !== "string" || html.trim() === "") {
    throw new ParseError("empty", `Cannot parse ${what}: the page is empty`);
  }
  if (!html.includes("<")) {
    throw new ParseError("empty", `Cannot parse ${what}: the body is not HTML`);
  }
  if (!MARKETPLACES.has(String(opts?.marketplace ?? "").toUpperCase())) {
    throw new ParseError(
      "unrecognised",
      `Cannot parse ${what}: unknown marketplace ${opts?.marketplace}`,
    );
  }
  try {
    return body();
  } catch (e) {
    if (e instanceof ParseError) throw e;
    throw new ParseError(
      "unrecognised",
      `Cannot parse ${what}: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
}

/** The marketplace of a code; an unknown code is a page this parser cannot read, not a crash. */
export function marketplaceOrParseError(code: string): Marketplace {
  const m = MARKETPLACES.get(String(code).toUpperCase());
  if (!m) {
    throw new ParseError(
      "unrecognised",
      `Cannot read a page of marketplace '${code}': the code is unknown`,
    );
  }
  return m;
}

/** `https://www.amazon.de` for "DE" (the code is checked by guardParse first). */
export function originOf(marketplaceCode: string): string {
  return `https://${MARKETPLACES.get(marketplaceCode.toUpperCase())!.host}`;
}

const ASIN_IN_PATH = /\/(?:dp|gp\/product|gp\/aw\/d|product-reviews)\/([A-Z0-9]{10})(?=[/?#&]|$)/;

/** The ASIN a product link points at, or "" when it points at none. */
export function asinFromHref(href: string): string {
  return ASIN_IN_PATH.exec(href)?.[1] ?? "";
}

// As the deal_id parameter is written (schemas/endpoints.ts), at most 64 characters: cut at a "-",
// the page's own id named another deal (probe ED), and a deals card's link did the same (probe
// IC); a longer one is no id a client could send back, and is none.
const DEAL_IN_PATH = /\/deal\/([A-Za-z0-9_-]{1,64})(?![A-Za-z0-9_-])/;

/** The deal id a `/deal/<id>` link or address names, or "" when it names none. */
export function dealIdFromHref(href: string): string {
  return DEAL_IN_PATH.exec(href)?.[1] ?? "";
}

/**
 * A merchant token as the `seller_id` parameter takes it, or null: a page's link may carry any
 * text there, and offers answered `../../admin` or markup as a seller's id (probe EW).
 */
export function sellerId(value: string | null | undefined): string | null {
  return value && /^[A-Z0-9]{8,20}$/.test(value) ? value : null;
}

/**
 * Whether a page's text is a search alias as the `category_id` parameter takes it (`electronics`):
 * a link or menu may carry any text there (probes EW, EU).
 */
export function isCategoryAlias(value: string): boolean {
  return /^[A-Za-z0-9_-]{1,80}$/.test(value);
}

/** True for a ten-character ASIN or ISBN-10. */
export function isAsin(value: string): boolean {
  return /^[A-Z0-9]{10}$/.test(value);
}

/** The canonical product URL, `https://<host>/dp/<ASIN>`. */
export function productUrl(origin: string, asin: string): string {
  return `${origin}/dp/${asin}`;
}

/**
 * The part of `html` from the start of the tag holding the earliest of `starts` up to the first
 * of `ends` after it. Parsing only that region keeps the DOM (and every selector pass) small;
 * when no start marker occurs the whole page is returned, so a moved marker costs speed only.
 */
export function regionOf(html: string, starts: string[], ends: string[] = []): string {
  let from = -1;
  for (const s of starts) {
    const i = html.indexOf(s);
    if (i >= 0 && (from < 0 || i < from)) from = i;
  }
  if (from < 0) return html;
  const tagStart = html.lastIndexOf("<", from);
  const begin = tagStart >= 0 ? tagStart : from;
  let end = html.length;
  for (const e of ends) {
    const i = html.indexOf(e, from);
    if (i >= 0 && i < end) end = i;
  }
  return html.slice(begin, end);
}

/**
 * The Amazon marketplace id a page names in its head (`ue_mid = 'A1PA6795UKMFR9'`), or null. It
 * stands before `<body`, within the first 12 KB, on every corpus page that has one; only a head's
 * is read, sought in the first 256 KB: text of the body is the page's content, and one seller named
 * "ue_mid='A1PA6795UKMFR9'" made every offers call of that product refused (probe FS). A fragment
 * without a body (the offers pop-over) names none.
 */
export function pageMarketplaceId(html: string): string | null {
  const m = /\bue_mid\s*=\s*['"]([A-Z0-9]{8,16})['"]/.exec(html.slice(0, 256 * 1024));
  // In the head: no `<body` before it, and one after it (a fragment has neither). Where the body
  // starts is not sought within the first 256 KB only: two amazon.de pages hold 441 KB of styles
  // in their head, and went unchecked (probe FW).
  if (!m || BODY_START.test(html.slice(0, m.index))) return null;
  return BODY_START.test(html.slice(m.index)) ? m[1] : null;
}
const BODY_START = /<body[\s>]/i;

/** The known marketplace a page names in its head (pageMarketplaceId), or undefined. */
export function pageMarketplace(html: string): Marketplace | undefined {
  const id = pageMarketplaceId(html);
  return id ? marketplaceForId(id) : undefined;
}

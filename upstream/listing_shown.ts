/**
 * What a search's, a category's or a seller storefront's page is a listing of, told by what its
 * pagination links page through (the parser's `links_*`): a keyword search's page was answered as
 * a seller's storefront and as a category (probe ES), and a category's or a storefront's as a
 * search (probe FD), each labelled with what was asked for, and charged. A page without
 * pagination links tells nothing and is taken as the listing asked for.
 */
import type { SearchPage } from "../schemas/pages.ts";
import type { Params } from "./envelopes.ts";
import { ApiError } from "../core/api_error.ts";
import { isCategoryAlias, sellerId } from "../parsers/page_common.ts";

export type Listing = "search" | "category" | "seller_products";

/** The alias Amazon's storefront links carry beside the seller (`i=merchant-items`). */
const STOREFRONT_ALIAS = "merchant-items";

/** The search words the page's links carry: `k`, or a `k:` step of an older page's `rh`. */
function linksWords(page: SearchPage | undefined): string | null {
  const step = page?.links_node?.split(",").find((s) => s.startsWith("k:"));
  return page?.links_query ?? (step ? step.slice(2).trim().replace(/\s+/g, " ") : null);
}

/** The longest `query` a search takes (schemas/endpoints.ts). */
const MAX_QUERY = 300;

/** What the page's links page through, or null when they say nothing. */
function shownKind(page: SearchPage): Kind | null {
  if (page.links_seller) return "storefront";
  if (linksWords(page) !== null) return "search";
  if (page.links_node || (page.links_alias && page.links_alias !== STOREFRONT_ALIAS)) {
    return "category";
  }
  return null;
}

type Kind = "storefront" | "search" | "category";

const NAMES: Record<Kind, string> = {
  storefront: "a seller's storefront",
  search: "a keyword search",
  category: "a category listing",
};
const WANTED: Record<Listing, Kind> = {
  search: "search",
  category: "category",
  seller_products: "storefront",
};

/** Throws the uncharged 502 when the page is another kind of listing than the one asked for. */
export function assertListing(endpoint: Listing, page: SearchPage): void {
  const kind = shownKind(page);
  const wanted = WANTED[endpoint];
  if (kind && kind !== wanted) {
    throw new ApiError(
      502,
      "upstream_error",
      `The marketplace answered ${NAMES[kind]}'s page instead of ${NAMES[wanted]}.`,
    );
  }
}

/**
 * Throws the uncharged 502 unless the page is a search for `words` (compared by `key`) or tells
 * nothing: gtin-to-asin answered a storefront's, a category's or another query's first item as
 * the GTIN's product, charged and cached for every account (probe FH).
 */
export function assertSearchOf(
  page: SearchPage,
  words: string,
  key: (words: string) => string,
): void {
  assertListing("search", page);
  const shown = linksWords(page);
  if (shown !== null && key(shown) !== key(words)) {
    throw new ApiError(502, "upstream_error", "The marketplace answered a search for other words.");
  }
}

/**
 * The labels a listing's first page shows where they differ from the ones asked for: the seller
 * its links page through; the category its department path ends at (a node asked for on no step
 * of it, probe EM), or its alias when it pages through another (probe ES: `stripbooks` asked,
 * the Computers page answered with that slug).
 */
export function listingShown(
  endpoint: Listing,
  p: Params,
  page: SearchPage | undefined,
): Record<string, string> {
  const crumbs = page?.breadcrumb;
  if (endpoint === "search") {
    // Another query's page, or Amazon's spelling correction: the words it shows (probe FD).
    // Compared in lower case, echoed as the links spell them (probe FF: `İ` lower-cased is `i̇`).
    const words = linksWords(page);
    const asked = String(p.query ?? "").trim().replace(/\s+/g, " ").toLowerCase();
    // deno-lint-ignore no-control-regex -- page text is echoed only when it is one plain line
    const plain = words !== null && /^[^\x00-\x1f\x7f]+$/.test(words) &&
      words.length <= MAX_QUERY;
    return plain && words.toLowerCase() !== asked ? { query: words } : {};
  }
  if (endpoint === "seller_products") {
    // As written: upper-cased by Unicode's rules, "ﬀ" became "FF" (probe EU).
    const seller = sellerId(page?.links_seller);
    return seller ? { seller_id: seller } : {};
  }
  const asked = String(p.category_id ?? "");
  const last = crumbs?.at(-1)?.id;
  if (/^\d+$/.test(asked)) {
    return last && !crumbs!.some((c) => c.id === asked) ? { category_id: last } : {};
  }
  // Aliases are one word in any case: `Electronics` asked, `electronics` shown, is the same.
  const shown = page?.links_alias;
  if (!shown || !isCategoryAlias(shown)) return {};
  const alias = shown.toLowerCase();
  if (alias === asked.toLowerCase() || alias === STOREFRONT_ALIAS) return {};
  return { category_id: last ?? shown };
}

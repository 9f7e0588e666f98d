/**
 * What a category's or a seller storefront's page is a listing of, told by what its pagination
 * links page through (the parser's `links_*`): a keyword search's page was answered as a seller's
 * storefront and as a category, labelled with the seller or node asked for, and charged (probe
 * ES). A page without pagination links tells nothing and is taken as the listing asked for.
 */
import type { SearchPage } from "../schemas/pages.ts";
import type { Params } from "./envelopes.ts";
import { ApiError } from "../core/api_error.ts";
import { sellerId } from "../parsers/page_common.ts";

export type Listing = "category" | "seller_products";

/** The alias Amazon's storefront links carry beside the seller (`i=merchant-items`). */
const STOREFRONT_ALIAS = "merchant-items";
// As the parameters' patterns: a page's text is echoed only when it is a well-formed id.
const ALIAS = /^[A-Za-z0-9_-]{1,80}$/;

/** What the page's links page through, or null when they say nothing. */
function shownKind(page: SearchPage): "storefront" | "search" | "category" | null {
  if (page.links_seller) return "storefront";
  // Older pages carry the words as a `k:` step of `rh` ("i:aps,k:plastikfrei flasche").
  if (page.links_query || page.links_node?.split(",").some((s) => s.startsWith("k:"))) {
    return "search";
  }
  if (page.links_node || (page.links_alias && page.links_alias !== STOREFRONT_ALIAS)) {
    return "category";
  }
  return null;
}

const NAMES = {
  storefront: "a seller's storefront",
  search: "a keyword search",
  category: "a category listing",
};

/** Throws the uncharged 502 when the page is another kind of listing than the one asked for. */
export function assertListing(endpoint: Listing, page: SearchPage): void {
  const kind = shownKind(page);
  const wanted = endpoint === "category" ? "category" : "storefront";
  if (kind && kind !== wanted) {
    throw new ApiError(
      502,
      "upstream_error",
      `The marketplace answered ${NAMES[kind]}'s page instead of ${NAMES[wanted]}.`,
    );
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
  if (!shown || !ALIAS.test(shown)) return {};
  const alias = shown.toLowerCase();
  if (alias === asked.toLowerCase() || alias === STOREFRONT_ALIAS) return {};
  return { category_id: last ?? shown };
}

/**
 * GTIN → ASIN: search the marketplace for the code, then confirm the candidates on their product
 * pages (search matches digits loosely: a UPC can find a bundle, a case or an unrelated item).
 * `match` is the first candidate whose identifiers carry the code; when none does (or their pages
 * list no identifiers) the first candidate is returned with a `note` saying the match is unsure.
 * A candidate's page that could not be read (blocked, an upstream error, a timeout) is not a page
 * listing no identifiers: when no candidate is confirmed, the call fails with that page's error,
 * uncharged and not cached. Read as "lists none", it made a charged 200 whose note said the pages
 * list no GTIN, cached for every account for a day (probe BC). A page the marketplace says is gone
 * (404) lists none.
 */
import type { ProductItem } from "../schemas/resources.ts";
import type { Identifiers } from "../schemas/resources.ts";
import { notFound } from "./fetch_page.ts";
import { ApiError } from "../core/api_error.ts";

export interface GtinLookup {
  /**
   * The product that carries the code: the ASIN its confirming page shows, which may not be the
   * search result's (a result whose page redirects to another ASIN, a merged product; probe CS).
   */
  asin: string;
  match: ProductItem;
  other_matches: string[];
  note: string | null;
}

/** What a candidate's product page shows: its own ASIN and its identifiers. */
export interface ProductIdentifiers {
  asin: string;
  identifiers: Identifiers;
  /** Further codes its identifier rows list (a row of two EANs). */
  also?: string[];
}

/** Candidates confirmed on their product pages; more would cost upstream time for little. */
const CONFIRM = 3;

export async function lookUpGtin(
  gtin: string,
  results: ProductItem[],
  identifiersOf: (asin: string) => Promise<ProductIdentifiers | null>,
): Promise<GtinLookup> {
  const organic = results.filter((r) => !r.sponsored);
  const candidates = dedupe(organic.length ? organic : results);
  if (candidates.length === 0) {
    throw notFound(`No product on the marketplace carries GTIN ${gtin}.`);
  }

  // The top result first: it is the product nearly always, and then the one call moves 2 pages
  // (search and product) instead of 4. Only when it does not carry the code are the next ones
  // confirmed, together.
  const unread: unknown[] = [];
  const confirm = (c: ProductItem) =>
    identifiersOf(c.asin).catch((e) => {
      if (!(e instanceof ApiError && e.status === 404)) unread.push(e);
      return null;
    });
  const pages = [await confirm(candidates[0])];
  if (!(pages[0] !== null && carries(pages[0], gtin))) {
    pages.push(...await Promise.all(candidates.slice(1, CONFIRM).map(confirm)));
  }
  const agreeing = pages.findIndex((p) => p !== null && carries(p, gtin));
  if (agreeing < 0 && unread.length > 0) throw unread[0];
  const match = candidates[Math.max(0, agreeing)];
  let note: string | null = null;
  let asin = match.asin;
  if (agreeing < 0) {
    note = pages.some((p) => p && Object.keys(p.identifiers).length > 0)
      ? `Unsure: no product page among the first results lists GTIN ${gtin}; the top search result is given.`
      : `Unsure: the product pages of the first results list no UPC/EAN/GTIN to confirm ${gtin}; the top search result is given.`;
  } else {
    const shown = pages[agreeing]!.asin;
    if (shown && shown !== match.asin) {
      asin = shown;
      note =
        `The marketplace shows the search result ${match.asin} as ${shown}, whose page lists GTIN ${gtin}.`;
    }
  }
  // Neither the search result nor the product its page shows is another match (probe CT).
  const others = candidates.filter((c) => c.asin !== match.asin && c.asin !== asin)
    .map((c) => c.asin);
  return { asin, match: { ...match, position: 1 }, other_matches: others, note };
}

/** UPC-A, EAN-13 and GTIN-14 of one item differ only by leading zeros. */
export function sameGtin(a: string, b: string): boolean {
  const strip = (s: string) => s.replace(/\D/g, "").replace(/^0+/, "");
  return strip(a) !== "" && strip(a) === strip(b);
}

function carries(page: ProductIdentifiers, gtin: string): boolean {
  return [...Object.values(page.identifiers), ...(page.also ?? [])].some((v) => sameGtin(v, gtin));
}

function dedupe(items: ProductItem[]): ProductItem[] {
  const seen = new Set<string>();
  return items.filter((i) => !seen.has(i.asin) && seen.add(i.asin));
}

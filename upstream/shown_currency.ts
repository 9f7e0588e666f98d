/**
 * The currency a price shows, read from what the parser named or else from its display: one check
 * for the postcode's currency, a search's price range and a further search page's marketplace.
 */
import { marketplace } from "../schemas/marketplaces.ts";

/** The currency a price shows: the one the parser named, else what its display tells. */
export function shownCurrency(price: { currency: string; display: string }, mp: string): string {
  return price.currency || foreignMark(price.display, mp);
}

/**
 * Marks of money that the named currencies alone write so: a bare `$` (not R$, S$, US$, C$), and
 * `kr`. BRL and SGD write R$ and S$, so a bare `$` is another currency there too (probe EI).
 */
const MARKS: [RegExp, string, string[]][] = [
  [/(?<![A-Za-z])\$/, "$", ["USD", "CAD", "AUD", "MXN"]],
  [/\bkr\b/i, "kr", ["SEK"]],
];

/**
 * The currency a price the parser did not name shows, when it cannot be the marketplace's: a
 * three-letter code beside the amount (KRW, HKD: probe EP), a dollar with letters before it (HK$,
 * NT$, NZ$; the marketplace's own prefixed dollars are named by the parser: probe EQ), or a mark
 * of MARKS off its currencies. "" when nothing tells.
 */
function foreignMark(display: string, mp: string): string {
  const own = marketplace(mp).currency;
  const code = /\b([A-Z]{3})\s?[\d.,]|[\d.,]\s?([A-Z]{3})\b/.exec(display);
  if (code && (code[1] ?? code[2]) !== own) return code[1] ?? code[2];
  const prefixed = /\b([A-Za-z]{1,3}\$)/.exec(display);
  if (prefixed) return prefixed[1];
  for (const [mark, name, currencies] of MARKS) {
    if (mark.test(display) && !currencies.includes(own)) return name;
  }
  return "";
}

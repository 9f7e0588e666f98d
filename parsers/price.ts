/**
 * Price text to a Price, for every marketplace's notation: `$1,234.56`, `1.234,56 €`,
 * `1 234,56 €`, `￥1,234`, `₹1,23,456.00`, `R$ 1.234,56`, `AED 1,234.00`, `CDN$ 12.99`.
 * The decimal separator is the last `.` or `,` followed by one or two digits; any other
 * separator groups thousands, so the same rule reads every locale.
 */
import type { Price } from "../schemas/resources.ts";
import { marketplace } from "../schemas/marketplaces.ts";

// Longest first, so that "R$" wins over "$".
const SYMBOLS: [string, string][] = [
  ["US$", "USD"],
  ["CDN$", "CAD"],
  ["CA$", "CAD"],
  ["C$", "CAD"],
  ["AU$", "AUD"],
  ["A$", "AUD"],
  ["R$", "BRL"],
  ["S$", "SGD"],
  ["MX$", "MXN"],
  ["Rs.", "INR"],
  ["₹", "INR"],
  ["£", "GBP"],
  ["€", "EUR"],
  ["￥", "JPY"],
  ["¥", "JPY"],
  ["zł", "PLN"],
  ["kr", "SEK"],
  ["د.إ", "AED"],
  ["ر.س", "SAR"],
];
const ISO = /\b(USD|GBP|EUR|JPY|INR|CAD|AUD|AED|SAR|BRL|MXN|SEK|PLN|SGD|TRY|EGP)\b/;

/** The currency a price text names, or the marketplace's own when it names none ("$" included). */
export function currencyOf(textValue: string, marketplaceCode: string): string {
  const iso = ISO.exec(textValue);
  if (iso) return iso[1];
  const own = marketplace(marketplaceCode).currency;
  for (const [sym, cur] of SYMBOLS) if (textValue.includes(sym)) return cur;
  if (textValue.includes("$")) {
    return ["USD", "CAD", "AUD", "MXN", "SGD"].includes(own) ? own : "USD";
  }
  return own;
}

/** The number in a price text, or null when it holds none. */
export function amountOf(textValue: string): number | null {
  const m = /\d[\d.,\s\u00a0\u202f']*/.exec(textValue);
  if (!m) return null;
  let digits = m[0].replace(/[\s\u00a0\u202f']+$/, "").replace(/[.,]$/, "");
  const dec = /[.,](\d{1,2})$/.exec(digits);
  let fraction = "";
  if (dec) {
    fraction = dec[1];
    digits = digits.slice(0, dec.index);
  }
  const whole = digits.replace(/[^\d]/g, "");
  if (!whole) return null;
  const n = Number(fraction ? `${whole}.${fraction}` : whole);
  return Number.isFinite(n) ? n : null;
}

/** A Price from its displayed text; null when the text holds no amount. */
export function parsePrice(textValue: string, marketplaceCode: string): Price | null {
  const display = textValue.replace(/[\t\n\r ]+/g, " ").trim();
  const amount = amountOf(display);
  if (amount === null) return null;
  return { amount, display, currency: currencyOf(display, marketplaceCode) };
}

/**
 * The comparison price a listing shows struck through, or null when there is none or it is not
 * above the price (a "was" price equal to or below the price is no discount, and Amazon's own
 * markup sometimes repeats the current price in the struck-through slot).
 */
export function listPriceAbove(list: number | null | undefined, amount: number): number | null {
  return list !== null && list !== undefined && list > amount ? list : null;
}

/**
 * Price text to a Price, for every marketplace's notation: `$1,234.56`, `1.234,56 €`,
 * `1 234,56 €`, `￥1,234`, `₹1,23,456.00`, `R$ 1.234,56`, `AED 1,234.00`, `CDN$ 12.99`.
 * The decimal separator is the last `.` or `,` followed by one or two digits; any other
 * separator groups thousands, so the same rule reads every locale.
 */
import type { Price } from "../schemas/resources.ts";
import { marketplace } from "../schemas/marketplaces.ts";

// Symbols that name one currency wherever they are shown; longest first, so "R$" wins over "$".
const SYMBOLS: [string, string][] = [
  ["US$", "USD"],
  ["HK$", "HKD"],
  ["NT$", "TWD"],
  ["NZ$", "NZD"],
  ["CDN$", "CAD"],
  ["CA$", "CAD"],
  ["C$", "CAD"],
  ["AU$", "AUD"],
  ["A$", "AUD"],
  ["R$", "BRL"],
  ["S$", "SGD"],
  ["MX$", "MXN"],
  ["E£", "EGP"],
  ["Rs.", "INR"],
  ["₹", "INR"],
  ["£", "GBP"],
  ["€", "EUR"],
  ["￥", "JPY"],
  ["¥", "JPY"],
  ["zł", "PLN"],
  ["₺", "TRY"],
  ["₩", "KRW"],
  ["円", "JPY"],
  ["د.إ", "AED"],
  ["ر.س", "SAR"],
];
// A code may touch the digits ("AED330.00"), not other letters.
const ISO =
  /(?<![A-Za-z])(USD|GBP|EUR|JPY|INR|CAD|AUD|AED|SAR|BRL|MXN|SEK|PLN|SGD|TRY|EGP|CHF|CNY|NOK|DKK|HKD|TWD|NZD|KRW|ZAR|ILS|CZK|HUF|RON|THB|MYR|PHP|IDR|QAR|KWD)(?![A-Za-z])/;
const DOLLARS = ["USD", "CAD", "AUD", "MXN", "SGD"];

/**
 * The currency of the amount shown, read from the price text itself (issue 16.3): an ISO code
 * ("USD 12.99" on amazon.co.jp, "EUR 9,99" on amazon.com), else a symbol that names one
 * currency (HK$, NT$ and NZ$ too: on amazon.com they were read as dollars, probe EQ). A bare "$"
 * or "kr" is the marketplace's own currency only where that currency is written so; elsewhere, and for a text naming no currency at all, the answer is "" (not read)
 * rather than the marketplace's currency guessed.
 */
export function currencyOf(textValue: string, marketplaceCode: string): string {
  const iso = ISO.exec(textValue);
  if (iso) return iso[1];
  for (const [sym, cur] of SYMBOLS) if (textValue.includes(sym)) return cur;
  const own = marketplace(marketplaceCode).currency;
  // A dollar with letters before it that SYMBOLS does not name ("RD$") is some other dollar.
  if (/[A-Za-z]\$/.test(textValue)) return "";
  if (textValue.includes("$")) return DOLLARS.includes(own) ? own : "";
  if (/\bkr\b/i.test(textValue)) return own === "SEK" ? own : "";
  return "";
}

/**
 * The longest text read as a price. Real price texts are short (the corpus's longest is "à partir
 * de EUR 57,99", 21 characters); a longer one is no price, and a page could otherwise hand every
 * price reader a megabyte of digits and spaces to scan and echo back as `display`.
 */
export const MAX_PRICE_TEXT = 200;

/**
 * The most digits a price's whole part may have. Past 15 significant digits a JSON number no
 * longer holds the amount shown exactly (a page's "$999999999999999999999" would be answered as
 * 1e+21); the dearest listing of any marketplace is far below a trillion of its currency.
 */
const MAX_WHOLE_DIGITS = 12;

/** The number in a price text, or null when it holds none (or is too long to be a price). */
export function amountOf(textValue: string): number | null {
  if (textValue.length > MAX_PRICE_TEXT) return null;
  const m = /\d[\d.,\s\u00a0\u202f']*/.exec(textValue);
  if (!m) return null;
  let digits = withoutTrailingSpace(m[0]).replace(/[.,]$/, "");
  const dec = /[.,](\d{1,2})$/.exec(digits);
  let fraction = "";
  if (dec) {
    fraction = dec[1];
    digits = digits.slice(0, dec.index);
  }
  const whole = digits.replace(/[^\d]/g, "");
  if (!whole || whole.replace(/^0+/, "").length > MAX_WHOLE_DIGITS) return null;
  const n = Number(fraction ? `${whole}.${fraction}` : whole);
  return Number.isFinite(n) ? n : null;
}

/**
 * `s` without its trailing spaces and apostrophes, by a loop: the regex `/[\s']+$/` retries from
 * every position of a run of them that is followed by anything else, which is quadratic (a
 * 300 KB price of alternating spaces and apostrophes took 36 s).
 */
function withoutTrailingSpace(s: string): string {
  let end = s.length;
  while (end > 0 && /[\s\u00a0\u202f']/.test(s[end - 1])) end--;
  return s.slice(0, end);
}

/** A Price from its displayed text; null when the text holds no amount (see MAX_PRICE_TEXT). */
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

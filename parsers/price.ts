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
  ["SFr.", "CHF"],
  ["Kč", "CZK"],
  ["₽", "RUB"],
  ["₪", "ILS"],
  ["฿", "THB"],
  ["₱", "PHP"],
  ["₴", "UAH"],
  // The Saudi riyal's own sign (Unicode 17), named before the runtime knows it as one.
  ["\u20C1", "SAR"],
  ["د.إ", "AED"],
  ["ر.س", "SAR"],
];
// A code may touch the digits ("AED330.00"), not other letters.
const ISO =
  /(?<![A-Za-z])(USD|GBP|EUR|JPY|INR|CAD|AUD|AED|SAR|BRL|MXN|SEK|PLN|SGD|TRY|EGP|CHF|CNY|NOK|DKK|HKD|TWD|NZD|KRW|ZAR|ILS|CZK|HUF|RON|THB|MYR|PHP|IDR|QAR|KWD|RUB|UAH|COP|ARS|CLP|PEN|VND|PKR)(?![A-Za-z])/;
/** Currencies written with letters that are words elsewhere: read only as a whole word. */
const WORD_MARKS: [RegExp, string][] = [
  [/(?<![A-Za-z])Ft(?![A-Za-z])/, "HUF"],
  [/(?<![A-Za-z])lei(?![A-Za-z])/, "RON"],
  [/(?<![A-Za-z])RM(?![A-Za-z])/, "MYR"],
  [/(?<![A-Za-z])Rp(?![A-Za-z])/, "IDR"],
  [/(?<![A-Za-z])Fr\./, "CHF"],
];
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
  // The riyal sign also writes other rials: Saudi riyals only on amazon.sa.
  if (textValue.includes("\uFDFC")) return own === "SAR" ? own : "";
  // After the dollar: a unit beside a dollar price ("$0.55/Sq Ft") is no forint (probe FS).
  for (const [mark, cur] of WORD_MARKS) if (mark.test(textValue)) return cur;
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
function listPriceAbove(list: number | null | undefined, amount: number): number | null {
  return list !== null && list !== undefined && list > amount ? list : null;
}

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
 * NT$, NZ$; the marketplace's own prefixed dollars are named by the parser: probe EQ), a mark of
 * MARKS off its currencies, or any other currency sign (every marketplace's own is named by
 * currencyOf, so one left unnamed is another's: ₫, ₦; probe FP). "" when nothing tells.
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
  return /(?!\$)\p{Sc}/u.exec(display)?.[0] ?? "";
}

/**
 * The comparison price `listText` shows for `price`, or null: none, not above the price
 * (listPriceAbove), or in another currency than the price (probe FP: a struck-through "$99.99"
 * beside "14,09 €" was answered as `list_price: 99.99`, a bare number no currency check sees).
 */
export function listPriceIn(price: Price, listText: string | null | undefined, mp: string) {
  const list = listText ? parsePrice(listText, mp) : null;
  if (!list) return null;
  // A price that shows no currency is taken to be in the marketplace's: a list price in another
  // is dropped (probe GA), one in the marketplace's own, or in none, kept.
  const listShows = shownCurrency(list, mp);
  const priceShows = shownCurrency(price, mp) || marketplace(mp).currency;
  if (listShows && listShows !== priceShows) return null;
  return listPriceAbove(list.amount, price.amount);
}

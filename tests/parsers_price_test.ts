import assert from "node:assert/strict";
import { amountOf, currencyOf, listPriceIn, parsePrice, shownCurrency } from "../parsers/price.ts";

Deno.test("parsePrice() reads every marketplace's notation", () => {
  const cases: [string, string, number, string][] = [
    ["$1,234.56", "US", 1234.56, "USD"],
    ["£1,234.56", "UK", 1234.56, "GBP"],
    ["1.234,56 €", "DE", 1234.56, "EUR"],
    ["1\u202f234,56\u00a0€", "FR", 1234.56, "EUR"],
    ["1 234,56 €", "FR", 1234.56, "EUR"],
    ["￥1,234", "JP", 1234, "JPY"],
    ["¥ 98,000", "JP", 98000, "JPY"],
    ["₹1,23,456.00", "IN", 123456, "INR"],
    ["R$ 1.234,56", "BR", 1234.56, "BRL"],
    ["AED 1,234.00", "AE", 1234, "AED"],
    ["CDN$ 12.99", "CA", 12.99, "CAD"],
    ["$12.99", "CA", 12.99, "CAD"],
    // The currency shown, not the marketplace's (issue 16.3): a code wherever it appears.
    ["USD 12.99", "JP", 12.99, "USD"],
    ["EUR 9,99", "US", 9.99, "EUR"],
    ["AED330.00", "AE", 330, "AED"],
    ["EGP 5,197.52", "US", 5197.52, "EGP"],
    ["99 kr", "SE", 99, "SEK"],
    // A bare "$" on a euro marketplace, or "kr" outside Sweden, names no one currency: not read.
    ["$12.99", "DE", 12.99, ""],
    ["99 kr", "NL", 99, ""],
    ["EUR 7,50", "ES", 7.5, "EUR"],
    ["12,5 €", "IT", 12.5, "EUR"],
    ["1.299 €", "DE", 1299, "EUR"],
    // Other dollars, won and yen written after the amount: named, never the marketplace's dollar.
    ["HK$12.00", "US", 12, "HKD"],
    ["NT$1,200", "US", 1200, "TWD"],
    ["NZ$ 9.99", "AU", 9.99, "NZD"],
    ["RD$ 500", "US", 500, ""],
    ["₩12,000", "US", 12000, "KRW"],
    ["KRW 12,000", "CA", 12000, "KRW"],
    ["1,200円", "JP", 1200, "JPY"],
  ];
  for (const [input, mp, amount, currency] of cases) {
    const p = parsePrice(input, mp);
    assert.ok(p, input);
    assert.equal(p.amount, amount, input);
    assert.equal(p.currency, currency, input);
  }
});

Deno.test("parsePrice() keeps the display text and refuses text without a number", () => {
  assert.equal(parsePrice("  $5.00\n", "US")?.display, "$5.00");
  assert.equal(parsePrice("Currently unavailable.", "US"), null);
  assert.equal(amountOf(""), null);
  // Past a trillion an amount is no price, and past 15 digits JSON would not hold it exactly.
  assert.equal(amountOf("$999,999,999,999.99"), 999999999999.99);
  assert.equal(parsePrice("$1,000,000,000,000", "US"), null);
  assert.equal(parsePrice("$999999999999999999999", "US"), null);
  // A price naming no currency is not given the marketplace's: "" says it was not shown.
  assert.equal(currencyOf("19,99", "DE"), "");
});

Deno.test("currencies no marketplace uses are named or told foreign, never read as the marketplace's (probe FP)", () => {
  const named: [string, string][] = [
    ["6,37 ₽", "RUB"],
    ["₪ 45", "ILS"],
    ["฿1,200", "THB"],
    ["₱ 999", "PHP"],
    ["₴ 120", "UAH"],
    ["120 Kč", "CZK"],
    ["SFr. 12.50", "CHF"],
    ["Fr. 12.50", "CHF"],
    ["4.990 Ft", "HUF"],
    ["59,99 lei", "RON"],
    ["RM 45.90", "MYR"],
    ["Rp 150.000", "IDR"],
    ["RUB 637", "RUB"],
  ];
  for (const [display, currency] of named) {
    assert.equal(parsePrice(display, "DE")?.currency, currency, display);
  }
  // A sign named nowhere is still not the marketplace's own.
  assert.equal(shownCurrency({ currency: "", display: "120.000 ₫" }, "DE"), "₫");
  assert.equal(shownCurrency({ currency: "", display: "12,99" }, "DE"), "");
  // A unit beside a dollar price is no forint or ringgit (probe FS).
  for (const display of ["$12.99 ($1.30/Ft)", "$0.55/Sq Ft", "$19.99 RM"]) {
    assert.equal(currencyOf(display, "US"), "USD", display);
  }
  // The riyal signs: the Saudi riyal's own (Unicode 17), and U+FDFC, Saudi only on amazon.sa.
  assert.equal(currencyOf("\u20C1 123.00", "US"), "SAR");
  assert.equal(currencyOf("123.00 \uFDFC", "SA"), "SAR");
  assert.equal(currencyOf("123.00 \uFDFC", "AE"), "");
  assert.equal(shownCurrency({ currency: "", display: "123.00 \uFDFC" }, "AE"), "\uFDFC");
  // Words holding those letters are no currency.
  assert.equal(currencyOf("Fte 12", "DE"), "");
  assert.equal(currencyOf("RRP 12,99", "DE"), "");
});

Deno.test("listPriceIn() keeps a comparison price only in the price's own currency (probe FP)", () => {
  const price = parsePrice("14,09 €", "DE")!;
  assert.equal(listPriceIn(price, "26,99 €", "DE"), 26.99);
  assert.equal(listPriceIn(price, "EUR 26,99", "DE"), 26.99);
  // A list price naming no currency is the page's own notation: kept.
  assert.equal(listPriceIn(price, "26,99", "DE"), 26.99);
  for (const other of ["$99.99", "99,99 £", "2.699 ₹", "￥2,699", "USD 30", "30 ₽"]) {
    assert.equal(listPriceIn(price, other, "DE"), null, other);
  }
  // A price that shows no currency is taken to be in the marketplace's: a list price in it, or in
  // none, is kept; one in another is not (probe GA).
  const bare = parsePrice("14,09", "DE")!;
  assert.equal(listPriceIn(bare, "26,99 €", "DE"), 26.99);
  assert.equal(listPriceIn(bare, "26,99", "DE"), 26.99);
  assert.equal(listPriceIn(bare, "$99.99", "DE"), null);
  assert.equal(listPriceIn(parsePrice("19.99", "US")!, "£25.00", "US"), null);
  // Not above the price, or none: no list price.
  assert.equal(listPriceIn(price, "9,99 €", "DE"), null);
  assert.equal(listPriceIn(price, "14,09 €", "DE"), null, "the price itself is no discount");
  assert.equal(listPriceIn(price, "", "DE"), null);
  const usd = parsePrice("$12.99", "US")!;
  assert.equal(listPriceIn(usd, "List: $19.99", "US"), 19.99);
  assert.equal(listPriceIn(usd, "CDN$ 19.99", "US"), null);
});

import assert from "node:assert/strict";
import { amountOf, currencyOf, parsePrice } from "../parsers/price.ts";

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

/**
 * Price notations of the marketplaces the corpus has no page of (amazon.pl, .sg, .com.mx, .com.au,
 * .sa, and amazon.ae in Arabic script), signs the corpus's pages never print ("Rs.", "E£"), and
 * the shape of a price text itself: spread over lines, ending in a separator, or as long as the
 * longest the corpus shows.
 */
import assert from "node:assert/strict";
import { currencyOf, parsePrice } from "../parsers/price.ts";

Deno.test("parsePrice() names the currency of each marketplace's own notation", () => {
  const cases: [string, string, number, string][] = [
    ["1 234,56 zł", "PL", 1234.56, "PLN"],
    ["S$ 12.90", "SG", 12.9, "SGD"],
    // A bare "$" is the marketplace's own dollar where it writes its currency so.
    ["$1,299.00", "MX", 1299, "MXN"],
    ["$12.99", "AU", 12.99, "AUD"],
    // amazon.sa and amazon.ae in Arabic: the riyal's and the dirham's abbreviations.
    ["123.00 ر.س", "SA", 123, "SAR"],
    ["د.إ 330.00", "AE", 330, "AED"],
    // amazon.in's pages in the corpus all print "₹"; "Rs." is the rupee's older sign.
    ["Rs. 1,299", "IN", 1299, "INR"],
  ];
  for (const [input, mp, amount, currency] of cases) {
    const p = parsePrice(input, mp);
    assert.ok(p, input);
    assert.equal(p.amount, amount, input);
    assert.equal(p.currency, currency, input);
  }
});

Deno.test("a sign with letters before its pound or dollar names its own currency, not the bare sign's", () => {
  // "E£" is the Egyptian pound wherever it is shown: its "£" is no British pound.
  assert.equal(parsePrice("E£ 500", "US")?.currency, "EGP");
  assert.equal(parsePrice("E£ 500", "UK")?.currency, "EGP");
});

Deno.test("an ISO code in a price text is read before any sign the text also shows", () => {
  assert.equal(currencyOf("USD 12.99 (S$ 17.50)", "SG"), "USD");
  assert.equal(parsePrice("USD 12.99 (S$ 17.50)", "SG")?.amount, 12.99);
});

Deno.test("a price text that ends in a separator keeps its decimal part", () => {
  // The trailing "." must not hide the decimal comma before it (12,99 read as 1299).
  assert.equal(parsePrice("12,99.", "DE")?.amount, 12.99);
  assert.equal(parsePrice("EUR 1.234,56.", "DE")?.amount, 1234.56);
  assert.equal(parsePrice("$1,299.00,", "US")?.amount, 1299);
});

Deno.test("parsePrice() shows a price spread over lines with single spaces", () => {
  // A symbol and digits in separate elements give text with a line break and indentation.
  const p = parsePrice("R$\n      1.234,56", "BR");
  assert.deepEqual(p, { amount: 1234.56, display: "R$ 1.234,56", currency: "BRL" });
  assert.equal(parsePrice("R$  1.234,56", "BR")?.display, "R$ 1.234,56");
});

Deno.test("parsePrice() reads the longest price text of the corpus", () => {
  // amazon.fr's DVD format button (product/amazon.fr__app-B00004YS4O.html), as its text reads.
  assert.deepEqual(parsePrice(" à partir de EUR 57,99 ", "FR"), {
    amount: 57.99,
    display: "à partir de EUR 57,99",
    currency: "EUR",
  });
});

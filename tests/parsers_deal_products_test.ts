// NOT YET VERIFIED ON A REAL PAGE: the corpus has no /deal/<id> page; these tests read a
// hand-built page that follows the octopus deal-landing markup public scrapers document.
import assert from "node:assert/strict";
import { parseDealProducts } from "../parsers/deal_products.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { DealProductsPage } from "../schemas/pages.ts";
import { fixture } from "./fixture.ts";
import { DEAL_PRODUCTS_PAGE } from "./handbuilt_pages.ts";
import { assertRobust } from "./robustness.ts";

Deno.test("parseDealProducts() reads each product of the deal with its list price", () => {
  const page = DealProductsPage.parse(parseDealProducts(DEAL_PRODUCTS_PAGE, { marketplace: "US" }));
  assert.equal(page.deal_id, "e5f6a7b8");
  assert.equal(page.results.length, 2);
  assert.deepEqual(page.results[0], {
    url: "https://www.amazon.com/dp/B07QXV6N1B",
    asin: "B07QXV6N1B",
    image: "https://m.media-amazon.com/images/I/81wYzPhzSSL._AC_SY200_.jpg",
    price: { amount: 29.99, display: "$29.99", currency: "USD", list_price: 49.99 },
    title: "Rubbermaid Brilliance Food Storage Containers, 10-Piece Set",
    rating: 4.7,
    reviews_count: 48106,
  });
  assert.deepEqual(page.results[1].price, {
    amount: 12.74,
    display: "$12.74",
    currency: "USD",
    list_price: null,
  });
  assert.equal(page.results[1].rating, 0);
  assert.equal(page.results[1].reviews_count, 0);
});

Deno.test("parseDealProducts() names the deal its canonical link shows, else the requested URL's (probe EC)", () => {
  const url = "https://www.amazon.com/deal/ffff0000?ref=x";
  // Another deal's page at that address: the page's own id, not the one asked for.
  assert.equal(
    parseDealProducts(DEAL_PRODUCTS_PAGE, { marketplace: "US", url }).deal_id,
    "e5f6a7b8",
  );
  const uncanonical = DEAL_PRODUCTS_PAGE.replace(/<link rel="canonical"[^>]*>/, "");
  assert.notEqual(uncanonical, DEAL_PRODUCTS_PAGE);
  assert.equal(parseDealProducts(uncanonical, { marketplace: "US", url }).deal_id, "ffff0000");
});

Deno.test("parseDealProducts() answers a deal id only as the parameter takes it: 64 characters, not 65", () => {
  const url = "https://www.amazon.com/deal/ffff0000";
  const named = (id: string) =>
    parseDealProducts(DEAL_PRODUCTS_PAGE.replace("/deal/e5f6a7b8", `/deal/${id}`), {
      marketplace: "US",
      url,
    }).deal_id;
  assert.equal(named("a".repeat(64)), "a".repeat(64));
  // A canonical link naming a longer one names none: the requested URL's is answered.
  assert.equal(named("a".repeat(65)), "ffff0000");
});

Deno.test("parseDealProducts() reads a deal id written with - and _, as the parameter takes it (probe ED)", () => {
  const page = DEAL_PRODUCTS_PAGE.replace(/\/deal\/e5f6a7b8/, "/deal/ab-cd_12");
  assert.equal(parseDealProducts(page, { marketplace: "US" }).deal_id, "ab-cd_12");
});

Deno.test("parseDealProducts() answers a deal page listing no products as not found: an ended deal (probe EC)", () => {
  const empty = DEAL_PRODUCTS_PAGE.replace(
    /(<[^>]*id="octopus-dlp-asin-stream"[^>]*>)[\s\S]*$/,
    "$1</ul></div></body></html>",
  );
  assert.throws(
    () => parseDealProducts(empty, { marketplace: "US" }),
    (e) => e instanceof ParseError && e.reason === "not_found",
  );
});

Deno.test("parseDealProducts() refuses a page without a deal product list", async () => {
  const product = await fixture("product/amazon.com__webapis-B004OA758C.html");
  assert.throws(() => parseDealProducts(product, { marketplace: "US" }), ParseError);
});

Deno.test("parseDealProducts() gives a valid page or ParseError on truncated and junk input", () => {
  assertRobust(parseDealProducts, DealProductsPage, DEAL_PRODUCTS_PAGE, "US");
});

Deno.test("parseDealProducts() answers no list price for a struck-through price in another currency", () => {
  const page = DEAL_PRODUCTS_PAGE.replace(">$49.99</span>", ">£49.99</span>");
  assert.notEqual(page, DEAL_PRODUCTS_PAGE);
  const item = parseDealProducts(page, { marketplace: "US" }).results[0];
  assert.deepEqual(item.price, {
    amount: 29.99,
    display: "$29.99",
    currency: "USD",
    list_price: null,
  });
});

Deno.test("parseDealProducts() takes a card's data-asin only when it is an ASIN, else its product link's", () => {
  const page = DEAL_PRODUCTS_PAGE.replace('data-asin="B07QXV6N1B"', 'data-asin="../../x?y"');
  assert.notEqual(page, DEAL_PRODUCTS_PAGE);
  const item = parseDealProducts(page, { marketplace: "US" }).results[0];
  assert.equal(item.asin, "B07QXV6N1B");
  assert.equal(item.url, "https://www.amazon.com/dp/B07QXV6N1B");
});

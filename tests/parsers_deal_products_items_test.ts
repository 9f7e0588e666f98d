// What counts as one product of a deal page and which of its elements give its image, title and
// price. The corpus has no /deal/<id> page: each case changes the hand-built DEAL_PRODUCTS_PAGE
// (tests/handbuilt_pages.ts) in one named place, in the octopus markup deal_products.ts reads.
import assert from "node:assert/strict";
import { parseDealProducts } from "../parsers/deal_products.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { DealProductsPage } from "../schemas/pages.ts";
import { fixture } from "./fixture.ts";
import { DEAL_PRODUCTS_PAGE } from "./handbuilt_pages.ts";
import { changedPage } from "./page_edit.ts";

const US = { marketplace: "US" };

// The first product's list entry and section, as the page opens them.
const FIRST_ITEM =
  '<li class="a-spacing-none"><span class="a-list-item"><div class="a-section octopus-dlp-asin-section" data-asin="B07QXV6N1B">';

// Cases of the first product change its copy of markup every product carries.
const changed = (from: string, to: string) => changedPage(DEAL_PRODUCTS_PAGE, from, to, "first");

function read(page: string) {
  return DealProductsPage.parse(parseDealProducts(page, US)).results;
}

Deno.test("a page without a deal product list at all is unrecognised, not an ended deal", async () => {
  // not_found is the uncharged 404 of an ended deal; a product page (or an error page) at a
  // deal's address is a page not understood: a 502.
  const product = await fixture("product/amazon.com__webapis-B004OA758C.html");
  assert.throws(
    () => parseDealProducts(product, US),
    (e) => e instanceof ParseError && e.reason === "unrecognised",
  );
});

Deno.test("a deal product whose list entry carries its ASIN too is read once", () => {
  // Both the li[data-asin] of the stream and the section inside it are product markers.
  const page = changed(
    FIRST_ITEM,
    FIRST_ITEM.replace('class="a-spacing-none"', 'class="a-spacing-none" data-asin="B07QXV6N1B"'),
  );
  assert.deepEqual(read(page).map((r) => r.asin), ["B07QXV6N1B", "B08KH5CQ1P"]);
});

Deno.test("products listed as li[data-asin] in the deal's stream, without sections, are read as with sections", () => {
  const page = DEAL_PRODUCTS_PAGE.replaceAll(
    /<li class="a-spacing-none"><span class="a-list-item"><div class="a-section octopus-dlp-asin-section" data-asin="(\w+)">/g,
    '<li class="a-spacing-none" data-asin="$1"><span class="a-list-item"><div class="a-section">',
  );
  assert.doesNotMatch(page, /octopus-dlp-asin-section/);
  assert.deepEqual(read(page), read(DEAL_PRODUCTS_PAGE));
});

Deno.test("a deal product's image is its product image, not another picture before it", () => {
  const page = changed(
    '<div class="a-section a-spacing-base"><a class="a-link-normal" href="/Rubbermaid',
    '<img src="https://m.media-amazon.com/images/G/01/badge.png">' +
      '<div class="a-section a-spacing-base"><a class="a-link-normal" href="/Rubbermaid',
  );
  assert.equal(
    read(page)[0].image,
    "https://m.media-amazon.com/images/I/81wYzPhzSSL._AC_SY200_.jpg",
  );
});

Deno.test("a deal product without a title block takes its title from its product link's text", () => {
  const page = changed('<div class="a-section octopus-dlp-asin-title">', '<div class="a-section">');
  assert.equal(read(page)[0].title, "Rubbermaid Brilliance Food Storage Containers, 10-Piece Set");
});

Deno.test("a deal product's price is the current price, not a struck price placed before it", () => {
  const page = changed(
    '<div class="a-row"><span class="a-price octopus-widget-price">',
    '<div class="a-row"><span class="a-price a-text-price"><span class="a-offscreen">$49.99</span></span>' +
      '<span class="a-price octopus-widget-price">',
  );
  assert.deepEqual(read(page)[0].price, {
    amount: 29.99,
    display: "$29.99",
    currency: "USD",
    list_price: 49.99,
  });
});

Deno.test("a deal section with no ASIN of its own and a product link naming none is no product", () => {
  // Once kept, it was a product with an empty asin and a bare /dp/ address.
  const page = changed('data-asin="B07QXV6N1B"', "").replaceAll("/dp/B07QXV6N1B", "/dp/notanasin");
  assert.deepEqual(read(page).map((r) => r.asin), ["B08KH5CQ1P"]);
});

/**
 * Search-card and page fields that only some generations of Amazon's markup show. The corpus
 * shows the 2018-19 struck list price; the rest are hand-built cards shaped like the corpus's own
 * (2020+ `s-search-result` divs in the main slot), each holding only the mark under test.
 */
import assert from "node:assert/strict";
import { parseSearch } from "../parsers/search.ts";
import { fixture } from "./fixture.ts";

const ASIN = "B000000001";

/** A 2020+ grid of `cards`, with `after` (pagination) below the main slot. */
function grid(cards: string, after = ""): string {
  return `<html><body><div class="s-main-slot s-result-list s-search-results sg-row">${cards}</div>${after}</body></html>`;
}

/** A 2020+ result card: `inner` beside a linked title heading. */
function card(inner: string, asin = ASIN, cls = "s-result-item s-asin sg-col-4-of-12"): string {
  return `<div data-asin="${asin}" data-component-type="s-search-result" class="${cls}">` +
    `<a class="a-link-normal a-text-normal" href="/dp/${asin}"><h2><span>Widget ${asin}</span></h2></a>` +
    `${inner}</div>`;
}

function onlyResult(html: string, marketplace = "US") {
  const page = parseSearch(html, { marketplace });
  assert.equal(page.results.length, 1);
  return page.results[0];
}

Deno.test("parseSearch() reads the 2018-19 list's struck-through list price (amznscrp)", async () => {
  // Read off the pages: the s-price "EUR 7,99" beside "EUR 9,99" in an a-text-strike span
  // (aria-label "Suggested Retail Price: EUR 9,99"), and "EUR 19,99" beside "EUR 25,99".
  const cases: [string, string, number, string, number, number][] = [
    [
      "search/amazon.de__amznscrp-plastikfrei-flasche.html",
      "B06XKW3FLY",
      20,
      "EUR 7,99",
      7.99,
      9.99,
    ],
    [
      "search/amazon.de__amznscrp-plastikfrei-gemuesebeutel.html",
      "B07D187NPX",
      3,
      "EUR 19,99",
      19.99,
      25.99,
    ],
  ];
  for (const [name, asin, position, display, amount, list] of cases) {
    const page = parseSearch(await fixture(name), { marketplace: "DE" });
    const item = page.results.find((r) => r.asin === asin);
    assert.ok(item, `${name} ${asin}`);
    assert.equal(item.position, position, asin);
    assert.deepEqual(item.price, { amount, display, currency: "EUR", list_price: list }, asin);
  }
});

Deno.test("an AdHolder card is sponsored though it shows no sponsored label", () => {
  const html = grid(card("", ASIN, "sg-col-4-of-12 s-result-item s-asin AdHolder sg-col"));
  assert.equal(onlyResult(html).sponsored, true);
  assert.equal(onlyResult(grid(card(""))).sponsored, false);
});

Deno.test("a card whose only Prime mark is the label 'Amazon Prime' is Prime", () => {
  // The icon as the 2020+ delivery row shows it, without its a-icon-prime and s-prime classes.
  const html = grid(card(
    `<div class="a-row s-align-children-center"><span class="aok-inline-block s-image-logo-view">` +
      `<span class="aok-relative s-icon-text-medium"><i class="a-icon a-icon-medium" role="img" aria-label="Amazon Prime"></i></span></span></div>`,
  ));
  assert.equal(onlyResult(html).prime, true);
});

Deno.test("a deal badge known only by its DEAL id is price copy, not the card's badge", () => {
  // As the corpus's deal badges (id="DEAL_<asin>"), without data-a-badge-type="deal"; the status
  // badge beside it is the card's.
  const deal =
    `<span id="DEAL_${ASIN}" class="a-badge"><span id="DEAL_${ASIN}-label" class="a-badge-label">` +
    `<span class="a-badge-label-inner a-text-ellipsis"><span class="a-badge-text">Limited time deal</span></span></span></span>`;
  const status = `<span id="${ASIN}-best-seller" class="a-badge" data-a-badge-type="status">` +
    `<span id="${ASIN}-best-seller-label" class="a-badge-label"><span class="a-badge-label-inner a-text-ellipsis">` +
    `<span class="a-badge-text">Best Seller</span></span></span></span>`;
  assert.equal(onlyResult(grid(card(deal))).badge, null);
  assert.equal(onlyResult(grid(card(deal + status))).badge, "Best Seller");
});

Deno.test("the ratings count beside the stars is read past the rating's own label", () => {
  // The 2024+ reviews block, its "rating details" label on an element that does not hold the star.
  const html = grid(card(
    `<div class="a-section" data-cy="reviews-block"><div class="a-row a-size-small">` +
      `<span aria-hidden="true" class="a-size-small a-color-base">4.5</span>` +
      `<span class="a-declarative" aria-label="4.5 out of 5 stars, rating details"></span>` +
      `<i class="a-icon a-icon-star-mini a-star-mini-4-5"><span class="a-icon-alt">4.5 out of 5 stars</span></i>` +
      `<a aria-label="1,234 ratings" href="/dp/${ASIN}#customerReviews"><span aria-hidden="true">(1.2K)</span></a>` +
      `</div></div>`,
  ));
  const item = onlyResult(html);
  assert.equal(item.rating, 4.5);
  assert.equal(item.reviews_count, 1234);
});

Deno.test("a ratings count abbreviated with a decimal comma is read in thousands", () => {
  // A count link without an aria-label, as a comma-decimal page abbreviates it: "(1,5K)" is 1,500.
  const html = grid(card(
    `<div class="a-section" data-cy="reviews-block"><div class="a-row a-size-small">` +
      `<i class="a-icon a-icon-star-mini a-star-mini-4-5"><span class="a-icon-alt">4,5 von 5 Sternen</span></i>` +
      `<a href="/dp/${ASIN}#customerReviews"><span aria-hidden="true">(1,5K)</span></a>` +
      `</div></div>`,
  ));
  const item = onlyResult(html, "DE");
  assert.equal(item.rating, 4.5);
  assert.equal(item.reviews_count, 1500);
});

Deno.test("a card's title is the heading inside the product link, not the brand heading above it", () => {
  const brand = `<div class="a-row a-color-secondary"><h2 class="a-size-mini s-line-clamp-1">` +
    `<span class="a-size-base-plus a-color-base">BrandX</span></h2></div>`;
  const html = grid(
    `<div data-asin="${ASIN}" data-component-type="s-search-result" class="s-result-item s-asin">` +
      `<div data-cy="title-recipe">${brand}<a class="a-link-normal s-line-clamp-2" href="/dp/${ASIN}">` +
      `<h2 class="a-size-base-plus a-spacing-none a-color-base a-text-normal"><span>Real product title</span></h2></a></div></div>`,
  );
  assert.equal(onlyResult(html).title, "Real product title");
});

Deno.test("a card's image is the one in its product-image block, not another s-image before it", () => {
  const html = grid(card(
    `<img class="s-image" src="https://m.media-amazon.com/images/I/brand-logo._SL160_.png" alt="BrandX">` +
      `<span data-component-type="s-product-image"><a class="a-link-normal s-no-outline" href="/dp/${ASIN}">` +
      `<div class="a-section aok-relative s-image-fixed-height">` +
      `<img class="s-image" src="https://m.media-amazon.com/images/I/71product._AC_UY218_.jpg" alt="Widget"></div></a></span>`,
  ));
  assert.equal(
    onlyResult(html).image,
    "https://m.media-amazon.com/images/I/71product._AC_UY218_.jpg",
  );
});

Deno.test("a last page whose Next item is disabled has no next page, though the item still holds a link", () => {
  // The 2020-22 a-pagination on page 3 of 3.
  const pagination = `<ul class="a-pagination">` +
    `<li class="a-normal"><a href="/s?k=widget&amp;page=2&amp;ref=sr_pg_2">←Previous</a></li>` +
    `<li class="a-normal"><a href="/s?k=widget&amp;page=2&amp;ref=sr_pg_2">2</a></li>` +
    `<li class="a-selected"><a href="/s?k=widget&amp;page=3&amp;ref=sr_pg_3" aria-current="page">3</a></li>` +
    `<li class="a-disabled a-last"><a>Next→</a></li></ul>`;
  const page = parseSearch(grid(card(""), pagination), { marketplace: "US" });
  assert.equal(page.page, 3);
  assert.equal(page.has_next_page, false);
  assert.equal(page.last_page, 3);
});

Deno.test("a listing of one page names 1 as its last page", () => {
  // The 2020+ pagination strip with Previous and Next both disabled.
  const strip = `<span class="s-pagination-strip">` +
    `<span class="s-pagination-item s-pagination-previous s-pagination-disabled" aria-disabled="true">Previous</span>` +
    `<span class="s-pagination-item s-pagination-selected" aria-label="Current page, page 1">1</span>` +
    `<span class="s-pagination-item s-pagination-next s-pagination-disabled" aria-disabled="true">Next</span></span>`;
  const page = parseSearch(grid(card(""), strip), { marketplace: "US" });
  assert.equal(page.page, 1);
  assert.equal(page.page_stated, true);
  assert.equal(page.has_next_page, false);
  assert.equal(page.last_page, 1);
});

Deno.test("a grid with no result banner counts the results it shows as the total", () => {
  // 2025 grids print no "1-48 of over N results" banner.
  const page = parseSearch(grid(card("") + card("", "B000000002")), { marketplace: "US" });
  assert.equal(page.results.length, 2);
  assert.equal(page.total_results, 2);
});

import assert from "node:assert/strict";
import { parseReviews, parseReviewSummary, splitDateLine } from "../parsers/reviews.ts";
import { fixture } from "./fixture.ts";

// A product page's top reviews are read by the reviews parser as a reviews page's are (the
// reviews endpoint answers a product page served for its address): this amazon.co.uk book page
// shows 8 reviews, each with a linkless "Verified Purchase" badge, and a histogram whose only
// filled row reads "5 star 100%" as text (no meter value), over "17 customer reviews".
const UK_BOOK = "product/amazon.co.uk__app-book-0062796984.html";

Deno.test("a linkless 'Verified Purchase' badge marks a review verified (amazon.co.uk product page)", async () => {
  const page = parseReviews(await fixture(UK_BOOK), { marketplace: "UK" });
  assert.equal(page.reviews.length, 8);
  assert.deepEqual(
    page.reviews.map((r) => [r.id, r.verified_purchase]),
    [
      ["R3DR1B09ZIDWKO", true],
      ["ROKOAKDW6LI3X", true],
      ["R32A3DXH971L33", true],
      ["R357ANMQQ4U0TH", true],
      ["R1H0E6SJ97SAVF", true],
      ["RHXL0RVPG2WR5", true],
      ["RFKDPOBB029W7", true],
      ["R4ZCG2HNMMRJQ", true],
    ],
  );
});

Deno.test("a histogram row showing 100% only as text reads 100 (amazon.co.uk product page)", async () => {
  assert.deepEqual(parseReviewSummary(await fixture(UK_BOOK), { marketplace: "UK" }), {
    rating: 5,
    breakdown: { "5": 100, "4": 0, "3": 0, "2": 0, "1": 0 },
    total_ratings: 17,
  });
});

// Hand-built reviews in the list's markup: `div[data-hook=review]` with the review's id, inside
// `#cm_cr-review_list`.

function listPage(body: string): string {
  return `<html><body><div id="cm_cr-review_list">${body}</div></body></html>`;
}

function review(inner: string): string {
  return `<div id="R1ABCDEFGHIJK" data-hook="review" class="a-section review">${inner}</div>`;
}

function readOne(inner: string) {
  const [r] = parseReviews(listPage(review(inner)), { marketplace: "US" }).reviews;
  return r;
}

function starIcon(cls: string, alt: string): string {
  return `<i data-hook="review-star-rating" class="a-icon a-icon-star ${cls} review-rating">` +
    `<span class="a-icon-alt">${alt}</span></i>`;
}

Deno.test("a review star icon with empty alt text is read from its class, half stars included", () => {
  assert.equal(readOne(starIcon("a-star-4-5", "")).rating, 4.5);
  assert.equal(readOne(starIcon("a-star-4", "")).rating, 4);
  assert.equal(readOne(starIcon("a-star-4", "5.0 out of 5 stars")).rating, 5);
});

Deno.test("a collapsed long review's body is its full text, without the 'Read more' control beside it", () => {
  const body = `<span data-hook="review-body" class="a-size-base review-text">` +
    `<div class="a-expander-container a-expander-partial-collapse-container">` +
    `<div data-hook="review-collapsed" class="a-expander-content">Sturdy and quiet.</div>` +
    `<a href="javascript:void(0)" data-hook="expand-collapse-read-more-less" ` +
    `class="a-declarative"><span class="a-expander-prompt">Read more</span></a></div></span>`;
  assert.equal(readOne(body).body, "Sturdy and quiet.");
});

Deno.test("a review title skips the star icon's text whatever its inner span is classed", () => {
  const title = `<a data-hook="review-title" class="a-size-base a-link-normal review-title" ` +
    `href="/gp/customer-reviews/R1ABCDEFGHIJK"><i data-hook="review-star-rating" ` +
    `class="a-icon a-icon-star a-star-5 review-rating"><span>5.0 out of 5 stars</span></i>` +
    `<span class="a-letter-space"></span><span>Great value</span></a>`;
  assert.equal(readOne(title).title, "Great value");
});

Deno.test("splitDateLine() reads the Italian date line with a typographic apostrophe", () => {
  assert.deepEqual(splitDateLine("Recensito in Italia l’8 marzo 2023"), {
    country: "Italia",
    date: "8 marzo 2023",
  });
});

// Histogram rows as the corpus's tables write them: tr.a-histogram-row, a label link filtering by
// its star count, and the percentage as the last cell's text.

function histogramRow(word: string, label: string, pct: string): string {
  return `<tr class="a-histogram-row"><td class="aok-nowrap"><a class="a-link-normal" ` +
    `href="/product-reviews/B01IPHVFUI/ref=acr_dp_hist?ie=UTF8&amp;filterByStar=${word}_star">` +
    `${label}</a></td><td class="a-text-right a-nowrap"><span class="a-size-base">${pct}</span>` +
    `</td></tr>`;
}

function breakdownOf(tables: string, marketplace = "US") {
  const html = `<html><body>${tables}<div id="cm_cr-review_list"></div></body></html>`;
  return parseReviews(html, { marketplace }).summary.breakdown;
}

Deno.test("a histogram row is the star its filterByStar link names, not the first digit of its text", () => {
  // A label spelling the count in words leaves the percentage's digit first in the row.
  const rows = histogramRow("four", "Four stars", "20%") + histogramRow("one", "One star", "3%");
  assert.deepEqual(breakdownOf(`<table id="histogramTable">${rows}</table>`), {
    "4": 20,
    "1": 3,
  });
});

Deno.test("a star's first histogram row gives its percentage; a later row for that star does not replace it", () => {
  // Pages carry two elements with the histogram's id; the first one read is kept.
  const first = histogramRow("five", "5 star", "70%") + histogramRow("four", "4 star", "30%");
  const later = histogramRow("five", "5 star", "0%") + histogramRow("four", "4 star", "0%");
  assert.deepEqual(
    breakdownOf(
      `<table id="histogramTable">${first}</table><table id="histogramTable">${later}</table>`,
    ),
    { "5": 70, "4": 30 },
  );
});

Deno.test("a reviews page has a next page only when its pagination's last item links to one", () => {
  const next = (items: string) =>
    parseReviews(
      listPage(review("") + `<ul class="a-pagination">${items}</ul>`),
      { marketplace: "US" },
    ).has_next_page;
  const link = `<a href="/product-reviews/B0BBPNPZTC/ref=cm_cr_arp_d_paging_btm_2?ie=UTF8&amp;` +
    `pageNumber=2">Next page</a>`;
  assert.equal(next(`<li class="a-last">${link}</li>`), true);
  // Neither disabled nor linked: nothing to follow.
  assert.equal(next(`<li class="a-last">Next page</li>`), false);
  assert.equal(next(`<li class="a-disabled a-last">Next page</li>`), false);
});

Deno.test("of two paginations, the last one (under the review list) says whether a next page exists", () => {
  const html = `<html><body><ul class="a-pagination"><li class="a-disabled a-last">Next page</li>` +
    `</ul><div id="cm_cr-review_list">${review("")}<ul class="a-pagination"><li class="a-last">` +
    `<a href="/product-reviews/B0BBPNPZTC/ref=cm_cr_arp_d_paging_btm_2?ie=UTF8&amp;pageNumber=2">` +
    `Next page</a></li></ul></div></body></html>`;
  assert.equal(parseReviews(html, { marketplace: "US" }).has_next_page, true);
});

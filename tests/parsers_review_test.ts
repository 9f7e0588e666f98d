/**
 * NOT YET VERIFIED ON A REAL SINGLE-REVIEW PAGE: the corpus holds no /gp/customer-reviews/<id>
 * page in the current layout. Public scrapers document that it renders the review in the same
 * div[data-hook=review] markup as the list, so these tests cut a real review element out of a
 * corpus reviews page and wrap it in a minimal page.
 */
import assert from "node:assert/strict";
import { parseReview } from "../parsers/review.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { SingleReviewPage } from "../schemas/pages.ts";
import { fixture } from "./fixture.ts";

/** The outer HTML of the element with this id (a div before 2025, an li after), cut by tag counting. */
function cutElement(html: string, id: string): string {
  const open = new RegExp(`<(div|li)\\s+id="${id}"`).exec(html);
  assert.ok(open, `review ${id} not in page`);
  const tags = new RegExp(`<(/?)${open[1]}\\b[^>]*>`, "g");
  tags.lastIndex = open.index;
  let depth = 0;
  for (let m = tags.exec(html); m; m = tags.exec(html)) {
    depth += m[1] ? -1 : 1;
    if (depth === 0) return html.slice(open.index, tags.lastIndex);
  }
  throw new Error(`review ${id} never closes`);
}

function minimalPage(
  reviewHtml: string,
  productHref = "/Samsung-27-inch/dp/B01IPHVFUI/ref=cm_cr_arp_d_product_top?ie=UTF8",
): string {
  return `<!doctype html><html><head><title>Amazon.com: Customer reviews</title></head><body>
<div id="cm_cr-product_info"><a data-hook="product-link" class="a-link-normal" href="${productHref}">Product</a></div>
<div id="cm_cr-review_list">${reviewHtml}</div></body></html>`;
}

Deno.test("parseReview() reads a real review element (jachet R2T4B2N2I4AQIB) in a minimal single-review page", async () => {
  const source = await fixture("reviews/amazon.com__jachet-B01IPHVFUI.html");
  const html = minimalPage(cutElement(source, "R2T4B2N2I4AQIB"));
  const p = SingleReviewPage.parse(
    parseReview(html, { marketplace: "US", reviewId: "R2T4B2N2I4AQIB" }),
  );
  assert.equal(p.asin, "B01IPHVFUI");
  assert.equal(p.review.id, "R2T4B2N2I4AQIB");
  assert.equal(p.review.title, "Started With One . . . Now I Have Quad-Monitor Setup!!");
  assert.equal(p.review.rating, 5);
  assert.equal(p.review.date, "October 20, 2023");
  assert.equal(p.review.country, "the United States");
  assert.equal(p.review.helpful_votes, 12);
  assert.equal(p.review.verified_purchase, true);
  assert.equal(p.review.variant, "Size: 27-Inch | Style: Curved | Set: DP/HDMI 3-Yr Warranty");
  assert.deepEqual(p.review.images, ["https://m.media-amazon.com/images/I/71ErgwXJTKL._SY88.jpg"]);
  assert.ok(p.review.body.startsWith("I love this monitor!"));
  assert.ok(p.review.body.endsWith("Good luck!!"));
});

Deno.test("parseReview() keeps the whole body of a long review (mega-scraper R3OXHZOZ0WM7AZ)", async () => {
  const source = await fixture("reviews/amazon.it__megascraper-B07747FR44-p1.html");
  const element = cutElement(source, "R3OXHZOZ0WM7AZ");
  const html = minimalPage(
    element,
    "/Paperwhite/dp/B07747FR44/ref=cm_cr_arp_d_product_top?ie=UTF8",
  );
  const p = SingleReviewPage.parse(parseReview(html, { marketplace: "IT" }));
  assert.equal(p.asin, "B07747FR44");
  assert.equal(p.review.id, "R3OXHZOZ0WM7AZ");
  assert.equal(p.review.helpful_votes, 921);
  assert.ok(p.review.body.startsWith("Ciao a tutti io sono Gianni"));
  assert.ok(p.review.body.endsWith("giudizio per me è importante!"));
  assert.ok(p.review.body.length > 2000, `body has ${p.review.body.length} characters`);
});

Deno.test("parseReview() takes the ASIN from the review's own link when the page has no product link", async () => {
  const source = await fixture("reviews/amazon.com__wk-B0BN72FYFG-p10.html");
  const html = `<html><body>${cutElement(source, "R1O9Q9IHXQV73Q")}</body></html>`;
  const p = SingleReviewPage.parse(parseReview(html, { marketplace: "US" }));
  assert.equal(p.asin, "B0BN72FYFG");
  assert.equal(p.review.body, "Looks great and works great.");
});

Deno.test("parseReview() fails with ParseError for a missing review id, a sign-in wall, junk and truncations", async () => {
  const source = await fixture("reviews/amazon.com__jachet-B01IPHVFUI.html");
  const html = minimalPage(cutElement(source, "R2T4B2N2I4AQIB"));
  assert.throws(
    () => parseReview(html, { marketplace: "US", reviewId: "R000000000000" }),
    (e) => e instanceof ParseError && e.reason === "not_found",
  );
  const wall = await fixture("blocked/amazon.de__epic-reviews-signin-wall.html");
  assert.throws(
    () => parseReview(wall, { marketplace: "DE" }),
    (e) => e instanceof ParseError && e.reason === "blocked",
  );
  const inputs = [
    ...Array.from({ length: 20 }, (_, i) => source.slice(0, Math.floor((source.length * i) / 20))),
    "",
    "not html",
  ];
  for (const input of inputs) {
    try {
      SingleReviewPage.parse(parseReview(input, { marketplace: "US" }));
    } catch (e) {
      assert.ok(e instanceof ParseError, `at ${input.length}: ${e}`);
    }
  }
});

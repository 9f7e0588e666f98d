/**
 * The current single-review layout is NOT YET VERIFIED on a real page: the corpus holds no
 * /gp/customer-reviews/<id> page in it. Public scrapers document that it renders the review in
 * the same div[data-hook=review] markup as the list, so those tests cut a real review element
 * out of a corpus reviews page and wrap it in a minimal page. The 2016 layout is tested on the
 * corpus's real page (last test).
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

// The one real single-review page in the corpus (2016, before data-hook attributes). Read off the
// page: <a name="R12J0UJC4DRYLC">, "18 of 18 people found the following review helpful", star
// image alt "5.0 out of 5 stars", <b>Going running</b>, <nobr>March 24, 2016</nobr>, the
// "Verified Purchase" stripe, two review images (large-image-url 715ds+clIEL and 71SDJ9M3TtL),
// and product-reviews links naming B003EM8008.
Deno.test("parseReview() reads the 2016 single-review page of the corpus", async () => {
  const page = SingleReviewPage.parse(
    parseReview(await fixture("reviews/amazon.com__weih-B003EM8008-p3837.html"), {
      marketplace: "US",
      reviewId: "R12J0UJC4DRYLC",
    }),
  );
  assert.equal(page.asin, "B003EM8008");
  const r = page.review;
  assert.equal(r.id, "R12J0UJC4DRYLC");
  assert.equal(r.title, "Going running");
  assert.equal(r.date, "March 24, 2016");
  assert.equal(r.rating, 5);
  assert.equal(r.helpful_votes, 18);
  assert.equal(r.verified_purchase, true);
  assert.ok(r.body.startsWith("I can't believe these are so cheap!"), r.body);
  assert.ok(r.body.endsWith("It comes with 3 different size rubber tips to fit your size ears."));
  assert.deepEqual(r.images, [
    "https://images-na.ssl-images-amazon.com/images/I/715ds+clIEL.jpg",
    "https://images-na.ssl-images-amazon.com/images/I/71SDJ9M3TtL.jpg",
  ]);
});

Deno.test("parseReview() reads a body's paragraphs apart, as the 2016 pages broke them with <br /> (probe GG)", async () => {
  const html = (await fixture("reviews/amazon.com__weih-B003EM8008-p3837.html"))
    .replace("I don't really run. At least", "I don't really run.<br /><br />At least");
  const r = parseReview(html, { marketplace: "US", reviewId: "R12J0UJC4DRYLC" }).review;
  assert.match(r.body, /I don't really run\. At least I haven't/);
});

Deno.test("parseReview() refuses the 2016 page when it shows another review than the one asked for", async () => {
  const html = await fixture("reviews/amazon.com__weih-B003EM8008-p3837.html");
  assert.throws(
    () => parseReview(html, { marketplace: "US", reviewId: "R000000000000" }),
    (e) => e instanceof ParseError && e.reason === "not_found",
  );
});

Deno.test("parseReview() takes no 2016-layout review whose anchor name is no review id (R and capitals or digits only)", async () => {
  const html = await fixture("reviews/amazon.com__weih-B003EM8008-p3837.html");
  assert.ok(html.includes('<a name="R12J0UJC4DRYLC"'));
  for (const name of ["R12J0 UJC4", "R12j0ujc4", "R12J0&lt;b&gt;x", "R", "R12J0UJC4DRYLC-x"]) {
    const hostile = html.replaceAll('<a name="R12J0UJC4DRYLC"', `<a name="${name}"`);
    for (const reviewId of [undefined, name]) {
      assert.throws(
        () => parseReview(hostile, { marketplace: "US", reviewId }),
        (e) => e instanceof ParseError,
        `${name} (asked: ${reviewId})`,
      );
    }
  }
});

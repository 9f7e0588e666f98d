/**
 * Reviews read off product pages, which the reviews endpoint answers when the marketplace sends
 * one for a reviews address: their markup differs from a reviews page's in three ways the parser
 * missed (found while writing tests for probe IA's survivors). Values read off the pages by hand.
 */
import assert from "node:assert/strict";
import { parseReviews } from "../parsers/reviews.ts";
import { ReviewsPage } from "../schemas/pages.ts";
import { fixture, fixtureMarketplace, fixtureNames } from "./fixture.ts";
import { startRig } from "./upstream_harness.ts";

async function reviewsOf(name: string) {
  const html = await fixture(name);
  return ReviewsPage.parse(parseReviews(html, { marketplace: fixtureMarketplace(name) }));
}

Deno.test("a 2012 product page's byline gives each review's author, profile id, date and variant", async () => {
  // "By <a data-hook=review-author href=/gp/pdp/profile/A3MB…>Papa Jim</a> … on January 25, 2012",
  // the variant in a linkless format strip: all four were answered null or "" ("on …" kept).
  const p = await reviewsOf("product/amazon.com__weih-earphone1.html");
  const read = p.reviews.map((r) => [r.id, r.author, r.author_id, r.date]);
  assert.deepEqual(read, [
    ["R31D05IE78MJSI", "Papa Jim", "A3MB4M1BBLPEWA", "January 25, 2012"],
    ["R1MO1407840EVJ", "EasyTiger", "A1HWJ67HTSHUK", "April 23, 2012"],
    ["RSHSC45BL8Z3E", "megallo", "A115T6ZMJ58YUF", "August 13, 2015"],
    ["R2CZM1KLG61F9D", "Gene Goodell", "A2CEP49EQELDIW", "July 14, 2014"],
  ]);
  assert.equal(p.reviews[0].variant, "Color: Blue | Product Packaging: Standard Packaging");
  assert.equal(p.reviews[1].variant, "Color: Orange | Product Packaging: Standard Packaging");
});

Deno.test("review images on a product page are the lazily loaded images, not their grey placeholder", async () => {
  const p = await reviewsOf("product/amazon.com__msshop-B07G2L3JMM.html");
  const jray = p.reviews.find((r) => r.id === "R1AVN847IGUP45");
  assert.equal(jray?.author, "Jray");
  assert.deepEqual(jray.images, [
    "https://images-na.ssl-images-amazon.com/images/I/71FjPm7y6+L._SY88.jpg",
    "https://images-na.ssl-images-amazon.com/images/I/71mIQ0bBUsL._SY88.jpg",
  ]);
  // No corpus page's reviews answer the placeholder (16 reviews on 8 product pages did).
  const names = [...await fixtureNames("product"), ...await fixtureNames("reviews")];
  for (const name of names) {
    let page;
    try {
      page = parseReviews(await fixture(name), { marketplace: fixtureMarketplace(name) });
    } catch {
      continue; // a page with no reviews to read
    }
    for (const r of page.reviews) {
      for (const url of r.images) assert.doesNotMatch(url, /grey-pixel/, `${name} ${r.id}`);
    }
  }
});

Deno.test("a product page's hidden carousel pagination is no next page of reviews", async () => {
  // Its only ul.a-pagination is a carousel's (display: none), whose "next" is
  // <li class="a-last carousel-prevnext-disabled"><a href="javascript:void(0);">.
  for (
    const name of [
      "product/amazon.com__msheraz-B0823MDHDJ.html",
      "product/amazon.com__msheraz-B0G6KD54ZK.html",
      "product/amazon.com__pricechecker-charmast-powerbank.html",
      "product/amazon.in__abhish-B0CYGXYXS6.html",
    ]
  ) {
    const p = await reviewsOf(name);
    assert.ok(p.reviews.length > 0, name);
    assert.equal(p.has_next_page, false, name);
  }
  // A reviews page's own pagination still leads on.
  const dawn = await reviewsOf("reviews/amazon.com__metaagent-dawn-B0BBPNPZTC.html");
  assert.equal(dawn.has_next_page, true);
});

Deno.test("the reviews endpoint answers a product page's review images and its end of pages over HTTP", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.com/product-reviews/B07G2L3JMM",
    "product/amazon.com__msshop-B07G2L3JMM.html",
  );
  const r = await rig.call("/v1/products/reviews?asin=B07G2L3JMM");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  // deno-lint-ignore no-explicit-any -- the test reads the answer's fields freely
  const body = r.body as Record<string, any>;
  assert.equal(body.has_next_page, false);
  // deno-lint-ignore no-explicit-any -- as above
  const jray = body.reviews.find((x: any) => x.id === "R1AVN847IGUP45");
  assert.deepEqual(jray.images, [
    "https://images-na.ssl-images-amazon.com/images/I/71FjPm7y6+L._SY88.jpg",
    "https://images-na.ssl-images-amazon.com/images/I/71mIQ0bBUsL._SY88.jpg",
  ]);
});

Deno.test("a review showing no author answers null, and one image shown twice is answered once", () => {
  // The 2012 byline's author is now read besides .a-profile-name; neither present is no author.
  const tile = '<img data-hook="review-image-tile" src="https://images-na.ssl-images-amazon.com' +
    '/images/G/01/x-locale/common/grey-pixel.gif" data-src="https://images-na.ssl-images-amazon' +
    '.com/images/I/71FjPm7y6+L._SY88.jpg">';
  const html = '<html><body><div id="cm_cr-review_list"><div id="R1ABCDEFGHIJK" ' +
    'data-hook="review"><span data-hook="review-body">Fine.</span>' + tile + tile +
    "</div></div></body></html>";
  const [r] = parseReviews(html, { marketplace: "US" }).reviews;
  assert.equal(r.author, null);
  assert.equal(r.author_id, null);
  assert.deepEqual(r.images, [
    "https://images-na.ssl-images-amazon.com/images/I/71FjPm7y6+L._SY88.jpg",
  ]);
});

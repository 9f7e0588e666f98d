/**
 * What a reviews answer claims of its filters, end to end over real corpus pages: an answer says
 * `filters_applied: true` only where the page proves it or, signed in, keeps the filter in its
 * URL without contradicting it; `note` names what was not applied, and to whom the marketplace
 * serves its fixed set. `filters_applied` is a charged claim: a client filters no further on it.
 */
import assert from "node:assert/strict";
import { type Rig, startRig } from "./upstream_harness.ts";

const SIGNED_IN = { UPSTREAM_COOKIES_US: "at-main=signed-in-token; sess-at-main=x" };
const TO_VISITORS = "The marketplace, for visitors who are not signed in, serves one fixed set";

// deno-lint-ignore no-explicit-any -- the tests read the answers' fields freely
async function reviews(rig: Rig, call: string): Promise<Record<string, any>> {
  const r = await rig.call(call);
  assert.equal(r.status, 200, `${call}: ${JSON.stringify(r.body).slice(0, 300)}`);
  assert.equal(r.headers.get("x-credits-cost"), "1");
  return r.body;
}

Deno.test("reviews: a star filter answered by a page with no reviews is not applied for a visitor", async () => {
  await using rig = await startRig();
  // amazon.nl's page of a product without reviews: no review shows a star to prove the filter.
  rig.fake.page(
    "https://www.amazon.nl/product-reviews/B08N5WRWNW?filterByStar=five_star",
    "reviews/amazon.nl__heartquake-nl-B08N5WRWNW.html",
  );
  const body = await reviews(rig, "/v1/products/reviews?asin=B08N5WRWNW&marketplace=NL&star=five");
  assert.equal(body.count, 0);
  assert.equal(body.authenticated, false);
  assert.equal(body.filters_applied, false);
  assert.equal(body.note, `${TO_VISITORS} of reviews: star=five could not be applied.`);
});

Deno.test("reviews signed in: a star filter its URL kept is not applied where the page's reviews have other stars", async () => {
  await using rig = await startRig({ env: SIGNED_IN });
  // A signed-in page ("Hello, Waseem") stating page 10, with 3- and 4-star reviews among its 5s.
  rig.fake.page(
    "https://www.amazon.com/product-reviews/B0BN72FYFG?filterByStar=five_star&pageNumber=10",
    "reviews/amazon.com__wk-B0BN72FYFG-p10.html",
  );
  const body = await reviews(rig, "/v1/products/reviews?asin=B0BN72FYFG&page=10&star=five");
  assert.equal(body.authenticated, true);
  assert.ok(body.reviews.some((r: { rating: number }) => r.rating < 5));
  assert.equal(body.page, 10);
  assert.equal(body.filters_applied, false);
  assert.equal(
    body.note,
    "The marketplace serves one fixed set of reviews: star=five could not be applied.",
  );
});

Deno.test("reviews: verified_only answered by a page showing an unverified review is not applied", async () => {
  await using rig = await startRig();
  // Nine verified reviews and one without the mark.
  rig.fake.page(
    "https://www.amazon.com/product-reviews/B01IPHVFUI?reviewerType=avp_only_reviews",
    "reviews/amazon.com__jachet-B01IPHVFUI.html",
  );
  const body = await reviews(rig, "/v1/products/reviews?asin=B01IPHVFUI&verified_only=true");
  const verified = body.reviews.map((r: { verified_purchase: boolean }) => r.verified_purchase);
  assert.ok(verified.includes(true) && verified.includes(false));
  assert.equal(body.filters_applied, false);
  assert.equal(body.note, `${TO_VISITORS} of reviews: verified_only could not be applied.`);
});

Deno.test("reviews: a page stating another number than the one asked for says only that the page asked for was not applied", async () => {
  await using rig = await startRig();
  // Its canonical link states pageNumber=10; the answer is labelled 10, and the note says page 3
  // could not be applied (the "answered page 10" remark is for a call that asked no page).
  rig.fake.page(
    "https://www.amazon.com/product-reviews/B0BN72FYFG?pageNumber=3",
    "reviews/amazon.com__wk-B0BN72FYFG-p10.html",
  );
  const body = await reviews(rig, "/v1/products/reviews?asin=B0BN72FYFG&page=3");
  assert.equal(body.page, 10);
  assert.equal(body.filters_applied, false);
  assert.equal(body.note, `${TO_VISITORS} of reviews: page 3 could not be applied.`);
});

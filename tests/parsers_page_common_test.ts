import assert from "node:assert/strict";
import { marketplaceOrParseError } from "../parsers/page_common.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { parseOffers } from "../parsers/offers.ts";
import { parseReviews } from "../parsers/reviews.ts";
import { parseReview } from "../parsers/review.ts";
import { fixture } from "./fixture.ts";

Deno.test("marketplaceOrParseError() names the marketplace of a code, in any case", () => {
  assert.equal(marketplaceOrParseError("de").host, "www.amazon.de");
  assert.equal(marketplaceOrParseError("JP").currency, "JPY");
});

Deno.test("an unknown marketplace code is a ParseError from every parser that needs the host", async () => {
  assert.throws(() => marketplaceOrParseError("ZZ"), ParseError);
  const offers = await fixture("offers/amazon.com__wk-aod-main-B0BN72FYFG.html");
  const reviews = await fixture("reviews/amazon.com__jachet-B01IPHVFUI.html");
  for (
    const run of [
      () => parseOffers(offers, { marketplace: "ZZ" }),
      () => parseReviews(reviews, { marketplace: "ZZ" }),
      () => parseReview(reviews, { marketplace: "ZZ" }),
    ]
  ) {
    assert.throws(run, (e) => e instanceof ParseError && /marketplace 'ZZ'/.test(e.message));
  }
});

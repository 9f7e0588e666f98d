// NOT YET VERIFIED ON A REAL PAGE: the corpus has no /promotion/psp/ page; these tests read a
// hand-built page that follows the promotion markup public scrapers document.
import assert from "node:assert/strict";
import { parsePromotion } from "../parsers/promotion.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { PromotionPage } from "../schemas/pages.ts";
import { fixture } from "./fixture.ts";
import { PROMOTION_PAGE } from "./handbuilt_pages.ts";
import { assertRobust } from "./robustness.ts";
import { startRig } from "./upstream_harness.ts";

Deno.test("parsePromotion() reads title, schedule, terms, discount and eligible ASINs", () => {
  const promo = PromotionPage.parse(parsePromotion(PROMOTION_PAGE, { marketplace: "us" }));
  assert.deepEqual(promo, {
    url: "https://www.amazon.com/promotion/psp/A2P3X1AN29HWHX",
    terms: "Discount applies at checkout. Offer valid while supplies last.",
    title: "Save 20% on select kitchen items",
    ends_at: "Friday October 31, 2025",
    discount: "20%",
    promo_id: "A2P3X1AN29HWHX",
    starts_at: "Friday October 24, 2025 12:00 AM PDT",
    marketplace: "US",
    // Tiles repeat an ASIN and one has none: each ASIN once, in page order.
    eligible_items: ["B07QXV6N1B", "B08KH5CQ1P"],
  });
});

Deno.test("parsePromotion() keeps only an end date and nulls an unreadable schedule", () => {
  const ends = PROMOTION_PAGE.replace(/From Friday[^<]*/, "Expira em: domingo 15 de março de 2026");
  const a = parsePromotion(ends, { marketplace: "BR" });
  assert.equal(a.starts_at, null);
  assert.equal(a.ends_at, "domingo 15 de março de 2026");
  const odd = PROMOTION_PAGE.replace(/From Friday[^<]*/, "While supplies last");
  const b = parsePromotion(odd, { marketplace: "US" });
  assert.equal(b.starts_at, null);
  assert.equal(b.ends_at, null);
});

Deno.test("parsePromotion() refuses a page that is not a promotion", async () => {
  const search = await fixture("search/amazon.com__pavel-ipad-pro.html");
  assert.throws(() => parsePromotion(search, { marketplace: "US" }), ParseError);
});

Deno.test("parsePromotion() gives a valid page or ParseError on truncated and junk input", () => {
  assertRobust(parsePromotion, PromotionPage, PROMOTION_PAGE, "US");
});

Deno.test("a promotion page that shows no promotion is an uncharged 404 through the API, not an empty answer", async () => {
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/promotion/psp/AENDEDPROMO1", {
    html: "<html><head><title>Amazon.com</title></head><body>" +
      "<p>This promotion is no longer available.</p></body></html>",
  });
  rig.fake.page("https://www.amazon.com/promotion/psp/A2P3X1AN29HWHX", { html: PROMOTION_PAGE });
  const ended = await rig.call("/v1/promotions?promo_id=AENDEDPROMO1");
  assert.equal(ended.status, 404, JSON.stringify(ended.body));
  assert.equal(ended.headers.get("x-credits-cost"), "0");
  const live = await rig.call("/v1/promotions?promo_id=A2P3X1AN29HWHX");
  assert.equal(live.status, 200, JSON.stringify(live.body).slice(0, 200));
  assert.equal(live.body.title, "Save 20% on select kitchen items");
});

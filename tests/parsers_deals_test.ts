// NOT YET VERIFIED ON A REAL PAGE: the corpus has no deals page; these tests read a hand-built
// page that follows the deal-card markup public scrapers document (tests/handbuilt_pages.ts).
import assert from "node:assert/strict";
import { parseDeals } from "../parsers/deals.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { DealsPage } from "../schemas/pages.ts";
import { fixture } from "./fixture.ts";
import { DEALS_PAGE } from "./handbuilt_pages.ts";
import { assertRobust } from "./robustness.ts";

Deno.test("parseDeals() reads a single-product deal card", () => {
  const { results } = DealsPage.parse(parseDeals(DEALS_PAGE, { marketplace: "US" }));
  assert.equal(results.length, 3);
  assert.deepEqual(results[0], {
    url: "https://www.amazon.com/dp/B09B8V1LZ3",
    asin: "B09B8V1LZ3",
    badge: "Limited time deal",
    image: "https://m.media-amazon.com/images/I/71xoR4A6q-L._AC_UL320_.jpg",
    price: { amount: 38.99, display: "$38.99", currency: "USD" },
    title: "Echo Dot (5th Gen) smart speaker with Alexa",
    deal_id: "a1b2c3d4",
    discount: "22% off",
  });
});

Deno.test("parseDeals() keeps a multi-product deal's link and the bare card's nulls", () => {
  const { results } = parseDeals(DEALS_PAGE, { marketplace: "US" });
  // The card links to /deal/<id>, not a product: no ASIN; the price is the range's low end.
  assert.equal(results[1].url, "https://www.amazon.com/deal/e5f6a7b8");
  assert.equal(results[1].asin, "");
  assert.equal(results[1].deal_id, "e5f6a7b8");
  assert.equal(results[1].badge, "Deal of the Day");
  assert.equal(results[1].discount, "Up to 40% off");
  assert.equal(results[1].price?.amount, 12.74);
  assert.deepEqual(
    { ...results[2], image: undefined },
    {
      url: "https://www.amazon.com/dp/B0C1H26C46",
      asin: "B0C1H26C46",
      badge: null,
      image: undefined,
      price: null,
      title: null,
      deal_id: null,
      discount: "-15%",
    },
  );
});

Deno.test("parseDeals() refuses a page without deal cards", async () => {
  const search = await fixture("search/amazon.com__pavel-ipad-pro.html");
  assert.throws(() => parseDeals(search, { marketplace: "US" }), ParseError);
  // The deals grid with no card in it (filled by script), or none read: no answer (probe FH).
  const empty = DEALS_PAGE.replace(
    /<div data-testid="deal-card"[\s\S]*<\/div><\/div><\/body>/,
    "</div></div></body>",
  );
  assert.match(empty, /grid-deals-container/);
  assert.doesNotMatch(empty, /deal-card/);
  assert.throws(() => parseDeals(empty, { marketplace: "US" }), ParseError);
});

Deno.test("parseDeals() gives a valid page or ParseError on truncated and junk input", () => {
  assertRobust(parseDeals, DealsPage, DEALS_PAGE, "US");
});

Deno.test("parseDeals() takes the discount from the card's copy when its percent-off place holds a label", () => {
  // The one-line badge's first span is the percent off on the cards above; a card that puts its
  // label there answered "Limited time deal" as its discount.
  const page = DEALS_PAGE.replace(
    `<span class="a-size-mini">22% off</span>
   <span class="a-size-mini BadgeAutomatedLabel-module__badgeAutomatedLabel_2Teem">Limited time deal</span>`,
    `<span class="a-size-mini BadgeAutomatedLabel-module__badgeAutomatedLabel_2Teem">Limited time deal</span>
   <span class="a-size-mini">22% off</span>`,
  );
  assert.notEqual(page, DEALS_PAGE);
  const { results } = DealsPage.parse(parseDeals(page, { marketplace: "US" }));
  assert.equal(results[0].discount, "22% off");
  assert.equal(results[0].badge, "Limited time deal");
});

Deno.test("parseDeals() reads a card's deal id from its /deal/ link whole, with - and _ as deal_id takes them (probe IC)", () => {
  // Cut at the "-", the id named another deal than the card's link; deal_products reads it whole.
  const page = DEALS_PAGE.replace('data-deal-id="e5f6a7b8" ', "")
    .replace("/deal/e5f6a7b8?", "/deal/ab-cd_12?");
  assert.equal(page.includes("e5f6a7b8"), false);
  const card = parseDeals(page, { marketplace: "US" }).results[1];
  assert.equal(card.url, "https://www.amazon.com/deal/ab-cd_12");
  assert.equal(card.deal_id, "ab-cd_12");
});

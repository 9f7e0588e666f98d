// How a deal card is delimited and which of its elements give its id, ASIN and price. The corpus
// has no deals page: each case changes the hand-built DEALS_PAGE (tests/handbuilt_pages.ts) in
// one named place, in the card markup deals.ts reads.
import assert from "node:assert/strict";
import { parseDeals } from "../parsers/deals.ts";
import { DealsPage } from "../schemas/pages.ts";
import { DEALS_PAGE } from "./handbuilt_pages.ts";
import { changedPage } from "./page_edit.ts";

const US = { marketplace: "US" };

// The third card: no deal id, its ASIN on the card and in its product link.
const CARD3 =
  '<div data-testid="deal-card" class="DealCard-module__card_1u9yK" data-asin="B0C1H26C46">';
const CARD3_LINK =
  '<a class="a-link-normal" href="/dp/B0C1H26C46"><img src="https://m.media-amazon.com/images/I/61k.jpg" alt=""></a>';
const CARD3_DISCOUNT = '<div><span class="a-size-mini">-15%</span></div>';

const changed = (from: string, to: string) => changedPage(DEALS_PAGE, from, to);

function read(page: string) {
  return DealsPage.parse(parseDeals(page, US)).results;
}

Deno.test("a deal card's inner element carrying a deal id is part of that card, not a card of its own", () => {
  // [data-deal-id] also marks a card: the inner element, holding the card's product link, was
  // read again as a fourth deal.
  const page = changed(CARD3_LINK, `<div data-deal-id="c9d0e1f2">${CARD3_LINK}</div>`);
  const results = read(page);
  assert.deepEqual(results.map((r) => r.deal_id), ["a1b2c3d4", "e5f6a7b8", "c9d0e1f2"]);
  assert.deepEqual(results.map((r) => r.asin), ["B09B8V1LZ3", "", "B0C1H26C46"]);
});

Deno.test("a deal card without its own deal id takes the one on an element inside it", () => {
  const page = changed(CARD3_DISCOUNT, `<div data-deal-id="c9d0e1f2">${CARD3_DISCOUNT}</div>`);
  const results = read(page);
  assert.equal(results.length, 3);
  assert.equal(results[2].deal_id, "c9d0e1f2");
  assert.equal(results[2].discount, "-15%");
});

Deno.test("a deal card's price is the deal price, not a struck list price placed before it", () => {
  // Card 1 shows "$38.99" then "List: $49.99"; here the list price comes first.
  const page = changed(
    '<div class="a-row"><span class="a-price" data-a-color="base">',
    '<div class="a-row"><span class="a-price a-text-price"><span class="a-offscreen">$49.99</span></span>' +
      '<span class="a-price" data-a-color="base">',
  );
  assert.deepEqual(read(page)[0].price, { amount: 38.99, display: "$38.99", currency: "USD" });
});

Deno.test("a deal card whose ASIN is on an element inside it, with no product link, is that product's deal", () => {
  const page = changed(
    `${CARD3}\n  ${CARD3_LINK}`,
    '<div data-testid="deal-card" class="DealCard-module__card_1u9yK">\n  ' +
      '<div data-asin="B0C1H26C46"><img src="https://m.media-amazon.com/images/I/61k.jpg" alt=""></div>',
  );
  const results = read(page);
  assert.equal(results.length, 3);
  assert.equal(results[2].asin, "B0C1H26C46");
  assert.equal(results[2].url, "https://www.amazon.com/dp/B0C1H26C46");
});

Deno.test("a deal card's data-asin that is not an ASIN gives way to its product link's ASIN", () => {
  // Any text may sit in the attribute; it became the answer's asin and a /dp/ path.
  const page = changed(CARD3, CARD3.replace('data-asin="B0C1H26C46"', 'data-asin="../admin"'));
  const card = read(page)[2];
  assert.equal(card.asin, "B0C1H26C46");
  assert.equal(card.url, "https://www.amazon.com/dp/B0C1H26C46");
});

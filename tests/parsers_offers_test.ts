import assert from "node:assert/strict";
import { parseOffers } from "../parsers/offers.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { OffersPage } from "../schemas/pages.ts";
import { fixture, fixtureMarketplace, fixtureNames } from "./fixture.ts";
import { assertRobust } from "./robustness.ts";

async function page(name: string) {
  const html = await fixture(`offers/${name}`);
  return OffersPage.parse(parseOffers(html, { marketplace: fixtureMarketplace(`offers/${name}`) }));
}

const usd = (amount: number, display: string) => ({ amount, display, currency: "USD" });

Deno.test("parseOffers() reads the 2025 AOD main fragment: pinned buy box first, then 10 offers", async () => {
  const p = await page("amazon.com__wk-aod-main-B0BN72FYFG.html");
  assert.equal(p.asin, "B0BN72FYFG");
  assert.equal(p.offers.length, 11);
  assert.deepEqual(p.offers[0], {
    price: usd(347.99, "$347.99"),
    is_fba: false,
    seller: { id: "AUA7F6JLX2JA1", name: "DirectCertified" },
    is_prime: false,
    position: 1,
    shipping: "FREE delivery Monday, March 24.",
    condition: "Refurbished - Excellent",
    seller_rating: 75,
  });
  assert.deepEqual(p.offers[1], {
    price: usd(309.7, "$309.70"),
    is_fba: true, // ships from Amazon.com, isAmazonFulfilled=1
    seller: { id: "A37VHTD60S0G3C", name: "BuySPRY" },
    is_prime: true, // "Or Prime members get FREE delivery Friday, March 21"
    position: 2,
    shipping: "FREE delivery Monday, March 24",
    condition: "Refurbished - Acceptable",
    seller_rating: 95,
  });
  assert.deepEqual(p.offers.map((o) => o.position), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  assert.deepEqual(p.offers.map((o) => o.seller.name).slice(2, 5), [
    "Verizon Pre-Owned",
    "WirelessSource",
    "BREED",
  ]);
  assert.equal(p.offers[10].price?.amount, 342.94);
  assert.equal(p.offers[10].seller.id, "A31G8YJZ1LFU8F");
});

Deno.test("parseOffers() reads the 2025 AOD page fragment (offer list only, no pinned offer)", async () => {
  const p = await page("amazon.com__wk-aod-page-B0BN72FYFG.html");
  assert.equal(p.asin, "B0BN72FYFG");
  assert.equal(p.offers.length, 10);
  assert.equal(p.offers[0].seller.name, "BuySPRY");
  assert.equal(p.offers[0].position, 1);
  assert.deepEqual(p.offers[6].price, usd(334.95, "$334.95"));
  assert.equal(p.offers[6].shipping, "FREE delivery Friday, March 21.");
  assert.deepEqual(p.offers.map((o) => o.is_fba), [
    true,
    false,
    false,
    false,
    false,
    false,
    false,
    true,
    false,
    false,
  ]);
});

Deno.test("parseOffers() reads the AOD main fragment with only the pinned offer", async () => {
  const p = await page("amazon.com__wk-aod-main-B0741FGRG2-no-offers.html");
  assert.equal(p.asin, "B0741FGRG2");
  assert.equal(p.offers.length, 1);
  assert.deepEqual(p.offers[0].seller, { id: "A1PVJZ1CYRZAP3", name: "Mint Mobile" });
  assert.deepEqual(p.offers[0].price, usd(54, "$54.00"));
  assert.equal(p.offers[0].condition, "New");
  assert.equal(p.offers[0].seller_rating, 100);
  assert.equal(p.offers[0].is_fba, true);
});

Deno.test("parseOffers() reads the one-offer AOD page sold by Amazon Resale", async () => {
  const p = await page("amazon.com__wk-aod-page-B0D7HVCD8R-1offer.html");
  assert.equal(p.asin, "B0D7HVCD8R");
  assert.deepEqual(p.offers, [{
    price: usd(657.56, "$657.56"),
    is_fba: true,
    // The seller link goes to the Warehouse-Deals node, which names no seller id.
    seller: { id: null, name: "Amazon Resale" },
    is_prime: true,
    position: 1,
    shipping: "FREE delivery Monday, March 24",
    condition: "Used - Like New",
    seller_rating: null,
  }]);
});

Deno.test("parseOffers() reads the 2021 AOD panel (webapis test: 6 offers besides the pinned one)", async () => {
  const p = await page("amazon.com__webapis-aod-popover-B004OA758C.html");
  assert.equal(p.asin, "B004OA758C");
  // offerPopoverScraper.test.js asserts 6: it counts the #aod-offer list; we add the pinned buy box.
  assert.equal(p.offers.length, 7);
  assert.deepEqual(p.offers[0], {
    price: usd(14.97, "$14.97"),
    is_fba: true,
    seller: { id: null, name: "Amazon.com" },
    is_prime: false,
    position: 1,
    shipping: "+ $14.38 shipping",
    condition: "New",
    seller_rating: null,
  });
  assert.deepEqual(p.offers[4].seller, { id: "AAZRLVTNON75Z", name: "Triplenet Pricing INC" });
  assert.equal(p.offers[4].shipping, "+ $58.00 shipping");
  assert.equal(p.offers[4].seller_rating, 80);
  assert.equal(p.offers[4].is_fba, false);
});

Deno.test("parseOffers() reads the 2018 offer-listing page as amazon-page-parser expects", async () => {
  const p = await page("amazon.com__app-olp-0001982389.html");
  assert.equal(p.asin, "0001982389");
  // test_offer_listing_parser.py: 10 offers; condition "Used"/"Good" there is "Used - Good" here.
  const expected: [number, string, string, number, string][] = [
    [5.99, "owlsbooks", "A1TJP2EKS10VL4", 95, "Used - Good"],
    [5.99, "greattimebooks", "A16ET7DS3ZNK1W", 95, "Used - Good"],
    [2.0, "ALEXTHEFATDAWG-US", "A2RFJF90LNL7PE", 93, "Used - Good"],
    [5.99, "ThriftBooks - Motor City", "A1QJ4UH6FW3UH1", 93, "Used - Good"],
    [5.99, "-bearbooks-", "A2ENLOCYXEFS31", 94, "Used - Good"],
    [5.99, "Thriftbooks", "A365C2XG0O7B0H", 93, "Used - Acceptable"],
    [2.95, "greener_books_london", "A161AAYHQBTAQT", 91, "Used - Good"],
    [3.0, "worldofbooksusa", "A2W0XT7SMZ33XS", 88, "Used - Very Good"],
    [12.12, "GlassFrogBooks", "A2LAZA9IUFPA4W", 94, "Used - Good"],
    [8.0, "American Book Center", "A3RS1FL91NCFWQ", 62, "Used - Good"],
  ];
  assert.deepEqual(
    p.offers.map((
      o,
    ) => [o.price?.amount, o.seller.name, o.seller.id, o.seller_rating, o.condition]),
    expected,
  );
  assert.ok(p.offers.every((o) => !o.is_prime && !o.is_fba));
  assert.equal(p.offers[0].shipping, "FREE Shipping");
  assert.equal(p.offers[2].shipping, "+ $3.99 shipping");
  assert.equal(p.offers[9].shipping, "+ $4.14 shipping");
});

Deno.test("parseOffers() reads the 2020 offer-listing page with Prime FBA offers", async () => {
  const p = await page("amazon.com__app-olp-B07L6P7J2M.html");
  assert.equal(p.asin, "B07L6P7J2M");
  assert.deepEqual(
    p.offers.map((
      o,
    ) => [o.price?.amount, o.seller.name, o.seller.id, o.seller_rating, o.is_prime, o.is_fba]),
    [
      [19.99, "Oasis1270", "A1WNZAYT9WQDYM", 97, true, true],
      [24.99, "RULTO", "APF0ST32AI5H2", 92, true, true],
      [29.99, "Novilex", "AYDAPDJLLWM0W", 97, true, true],
    ],
  );
  // Only an estimated-tax note sits where the shipping charge would be.
  assert.equal(p.offers[0].shipping, "");
});

Deno.test("parseOffers() reads the 2021 offer-listing page (webapis test: 9 offers)", async () => {
  const p = await page("amazon.com__webapis-olp-B004OA758C.html");
  assert.equal(p.asin, "B004OA758C");
  assert.equal(p.offers.length, 9);
  assert.deepEqual(p.offers[0].seller, { id: "ATXPNO3SPGCJ4", name: "Mixed Bag Media" });
  assert.deepEqual(p.offers[0].price, usd(14.95, "$14.95"));
  assert.equal(p.offers[0].seller_rating, 88);
  // Row 3 shows Amazon's logo (alt "Amazon.com") instead of a seller link.
  assert.deepEqual(p.offers[2].seller, { id: null, name: "Amazon.com" });
  assert.equal(p.offers[2].is_fba, true);
  assert.deepEqual(p.offers.map((o) => o.is_fba), [
    true,
    true,
    true,
    true,
    true,
    true,
    true,
    false,
    false,
  ]);
});

Deno.test("parseOffers() reads the 2015 'Buying Choices' page", async () => {
  const p = await page("amazon.com__stayman-olp-1416532277-new.html");
  assert.equal(p.asin, "1416532277");
  assert.equal(p.offers.length, 10);
  assert.deepEqual(p.offers[0], {
    price: usd(11.56, "$11.56"),
    is_fba: false,
    seller: { id: "A3AKI0A2TT7D5A", name: "BRILANTI BOOKS" },
    is_prime: false,
    position: 1,
    shipping: "+ $3.99 shipping",
    condition: "New",
    seller_rating: 89,
  });
  // Row 3 is Amazon's: a logo without alt text, a Prime badge, shipping links for ATVPDKIKX0DER.
  assert.deepEqual(p.offers[2].seller, { id: null, name: "Amazon.com" });
  assert.equal(p.offers[2].is_prime, true);
  assert.equal(p.offers[2].is_fba, true);
  assert.equal(p.offers[2].seller_rating, null);
  assert.equal(p.offers[9].seller.name, "Prepbooks");
});

// The same old layout for used copies (olpOffer rows, ue_pty OfferListing/Used). Read off the
// page: 10 olpOffer rows; row 1 "$0.77", "Used - Good", "+ $3.99 shipping", seller link
// seller=A327JZFAPRTZ0D "BetterWorldBooksUK", "96% positive"; row 10 "$19.99", "Used -
// Acceptable", BookLovers of Bath (AK2HLLAXV3VO6), "90% positive"; no Prime badge, no FBA.
Deno.test("parseOffers() reads the 2015 'Buying Choices' page of used offers", async () => {
  const p = await page("amazon.com__stayman-olp-0751515736-used.html");
  assert.equal(p.asin, "0751515736");
  assert.equal(p.offers.length, 10);
  assert.deepEqual(p.offers[0], {
    price: usd(0.77, "$0.77"),
    is_fba: false,
    seller: { id: "A327JZFAPRTZ0D", name: "BetterWorldBooksUK" },
    is_prime: false,
    position: 1,
    shipping: "+ $3.99 shipping",
    condition: "Used - Good",
    seller_rating: 96,
  });
  assert.deepEqual(p.offers[9], {
    price: usd(19.99, "$19.99"),
    is_fba: false,
    seller: { id: "AK2HLLAXV3VO6", name: "BookLovers of Bath" },
    is_prime: false,
    position: 10,
    shipping: "+ $3.99 shipping",
    condition: "Used - Acceptable",
    seller_rating: 90,
  });
  assert.deepEqual(p.offers.map((o) => o.condition).slice(0, 3), [
    "Used - Good",
    "Used - Acceptable",
    "Used - Good",
  ]);
});

Deno.test("parseOffers() drops offer blocks with neither price nor seller", async () => {
  const name = "offers/amazon.com__wk-aod-page-B0BN72FYFG.html";
  const html = await fixture(name);
  const real = parseOffers(html, { marketplace: "US" });
  const first = html.indexOf('id="aod-offer"');
  const start = html.lastIndexOf("<", first);
  const stubbed = html.slice(0, start) + '<div id="aod-offer"></div>' + html.slice(start);
  assert.deepEqual(parseOffers(stubbed, { marketplace: "US" }), real);
  // Alone on a page that is no offers page, such a block is no offer at all.
  assert.throws(
    () =>
      parseOffers(`<html><body><div id="aod-offer"></div></body></html>`, { marketplace: "US" }),
    (e) => e instanceof ParseError && e.reason === "unrecognised",
  );
});

Deno.test("parseOffers() answers captcha and sign-in pages with ParseError 'blocked'", async () => {
  for (const name of fixtureNames("blocked")) {
    const html = await fixture(name);
    assert.throws(
      () => parseOffers(html, { marketplace: fixtureMarketplace(name) }),
      (e) => e instanceof ParseError && e.reason === "blocked",
      name,
    );
  }
});

Deno.test("parseOffers() returns a valid page or throws ParseError on truncated and junk input", async () => {
  for (const name of fixtureNames("offers")) {
    assertRobust(parseOffers, OffersPage, await fixture(name), fixtureMarketplace(name));
  }
});

/**
 * Pages that are not the one asked for (probe CN): the parsers of product pages, identifiers and
 * rating summaries read what a page shows and list the rest as missing, so a reviews page or an
 * error page at a product's address was answered as an empty product and charged, and a redirect
 * to another ASIN was answered under the ASIN asked for. Real corpus pages over the fake
 * marketplace.
 */
import assert from "node:assert/strict";
import { type Rig, startRig } from "./upstream_harness.ts";
import { DEAL_PRODUCTS_PAGE, SELLER_PROFILE_PAGE } from "./handbuilt_pages.ts";
import { fixture, searchingFor } from "./fixture.ts";

/** `from` redirects to B0G6KD54ZK's real product page, as the marketplace does a merged ASIN. */
function redirectToCharger(rig: Rig, from: string): void {
  rig.fake.redirect(from, "https://www.amazon.com/dp/B0G6KD54ZK");
  rig.fake.page(
    "https://www.amazon.com/dp/B0G6KD54ZK",
    "product/amazon.com__msheraz-B0G6KD54ZK.html",
  );
}

async function used(rig: Rig): Promise<number> {
  return ((await rig.call("/v1/usage")).body as { requests_used: number }).requests_used;
}

// What a marketplace error page at a product's address may hold: no page-type token, no product
// markup, not the wording of Amazon's own 404 or 503 pages.
const ERROR_PAGE =
  '<html><head><link rel="canonical" href="https://www.amazon.com/dp/B000000001">' +
  "<title>Amazon.com</title></head><body><p>Sorry! Something went wrong on our end.</p></body></html>";

for (
  const [name, page] of [
    ["a reviews page", "reviews/amazon.com__jachet-B01IPHVFUI.html"],
    ["a search page", "search/amazon.com__webapis-phone.html"],
    ["an error page", { html: ERROR_PAGE }],
  ] as const
) {
  Deno.test(`details and asin-to-gtin answer ${name} at a product's address with an uncharged 502`, async () => {
    await using rig = await startRig();
    rig.fake.page("https://www.amazon.com/dp/B000000001", page);
    for (const path of ["/v1/products/details", "/v1/utility/asin-to-gtin"]) {
      const r = await rig.call(`${path}?asin=B000000001`);
      assert.equal(r.status, 502, `${path}: ${JSON.stringify(r.body).slice(0, 300)}`);
      assert.equal((r.body.error as { code: string }).code, "upstream_error");
      assert.equal(r.headers.get("x-credits-cost"), "0");
    }
    assert.equal(await used(rig), 0);
  });
}

Deno.test("a product page is still read at a product's address (the check refuses only other pages)", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.com/dp/B0G6KD54ZK",
    "product/amazon.com__msheraz-B0G6KD54ZK.html",
  );
  const r = await rig.call("/v1/products/details?asin=B0G6KD54ZK");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.asin, "B0G6KD54ZK");
  assert.equal(await used(rig), 1);
});

Deno.test("asin-to-gtin redirected to another ASIN labels the identifiers with the page's ASIN and says so", async () => {
  await using rig = await startRig();
  redirectToCharger(rig, "https://www.amazon.com/dp/B000000001");
  const r = await rig.call("/v1/utility/asin-to-gtin?asin=B000000001");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  // The UPC on B0G6KD54ZK's page (its product details table).
  assert.equal(r.body.gtin, "753747482348");
  assert.equal(r.body.asin, "B0G6KD54ZK");
  assert.match(String(r.body.note), /B000000001 as B0G6KD54ZK/);
});

Deno.test("offers redirected to another ASIN are labelled with the page's ASIN, not the one asked for", async () => {
  await using rig = await startRig();
  const aod = (asin: string) =>
    `https://www.amazon.com/gp/product/ajax/?asin=${asin}&pc=dp&experienceId=aodAjaxMain`;
  rig.fake.redirect(aod("B000000002"), aod("B0BN72FYFG"));
  rig.fake.page(aod("B0BN72FYFG"), "offers/amazon.com__wk-aod-main-B0BN72FYFG.html");
  const r = await rig.call("/v1/products/offers?asin=B000000002");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.asin, "B0BN72FYFG");
  assert.equal(r.body.url, "https://www.amazon.com/dp/B0BN72FYFG");
  assert.ok((r.body.count as number) > 0);
});

Deno.test("reviews/top redirected to another ASIN labels the summary with that ASIN", async () => {
  await using rig = await startRig();
  redirectToCharger(rig, "https://www.amazon.com/product-reviews/B000000001");
  const r = await rig.call("/v1/products/reviews/top?asin=B000000001");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.asin, "B0G6KD54ZK");
  assert.match(String(r.body.url), /\/dp\/B0G6KD54ZK/);
});

Deno.test("reviews/top labels the summary with the ASIN of the page's reviewed product, however it was reached (probe CO)", async () => {
  await using rig = await startRig();
  const REVIEWS = "reviews/amazon.com__metaagent-dawn-B0BBPNPZTC.html";
  // Another product's reviews page at the address asked for, and the mobile form of a redirect.
  rig.fake.page("https://www.amazon.com/product-reviews/B000000003", REVIEWS);
  rig.fake.redirect(
    "https://www.amazon.com/product-reviews/B000000001",
    "https://www.amazon.com/gp/aw/d/B0BBPNPZTC",
  );
  rig.fake.page("https://www.amazon.com/gp/aw/d/B0BBPNPZTC", REVIEWS);
  for (const asked of ["B000000003", "B000000001"]) {
    const r = await rig.call(`/v1/products/reviews/top?asin=${asked}`);
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
    assert.equal(r.body.asin, "B0BBPNPZTC", asked);
    const reviews = await rig.call(`/v1/products/reviews?asin=${asked}`);
    assert.equal(reviews.body.asin, r.body.asin, "reviews and reviews/top agree");
  }
});

Deno.test("a product page at a reviews address is labelled with the ASIN it names, by reviews and reviews/top (probe CS)", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.com/product-reviews/B0CSPROBE1",
    "product/amazon.com__app-B07H57DNVV.html",
  );
  for (const path of ["/v1/products/reviews", "/v1/products/reviews/top"]) {
    const r = await rig.call(`${path}?asin=B0CSPROBE1`);
    assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.body).slice(0, 300)}`);
    assert.equal(r.body.asin, "B07H57DNVV", path);
  }
});

Deno.test("a promotion page reached under another id answers with the id the page states (probe CO)", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.com.br/promotion/psp/AZZZZZZZZZZZZZ",
    "promotion/amazon.com.br__amazingscraper-A2U0CQXJULUZFI.html",
  );
  const r = await rig.call("/v1/promotions?promo_id=AZZZZZZZZZZZZZ&marketplace=BR");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.promo_id, "A2U0CQXJULUZFI");
});

Deno.test("a search or product page at a promotion's address is an uncharged 404, not its tiles as eligible items", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.com/promotion/psp/A2P3X1AN29HWHX",
    "search/amazon.com__webapis-phone.html",
  );
  rig.fake.page(
    "https://www.amazon.com/promotion/psp/A1B2C3D4E5F6G7",
    "product/amazon.com__msheraz-B0G6KD54ZK.html",
  );
  for (const id of ["A2P3X1AN29HWHX", "A1B2C3D4E5F6G7"]) {
    const r = await rig.call(`/v1/promotions?promo_id=${id}`);
    assert.equal(r.status, 404, JSON.stringify(r.body).slice(0, 300));
    assert.equal(r.headers.get("x-credits-cost"), "0");
  }
  assert.equal(await used(rig), 0);
});

Deno.test("a seller profile or deal page reached under another id answers with the id the page states; an ended deal is an uncharged 404 (probe EC)", async () => {
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/sp?seller=AOTHERSELLER99", { html: SELLER_PROFILE_PAGE });
  rig.fake.page("https://www.amazon.com/deal/ZZZZ9999", { html: DEAL_PRODUCTS_PAGE });
  rig.fake.page("https://www.amazon.com/deal/EMPTY001", {
    html: DEAL_PRODUCTS_PAGE.replace(
      /(<[^>]*id="octopus-dlp-asin-stream"[^>]*>)[\s\S]*$/,
      "$1</ul></div></body></html>",
    ),
  });
  const seller = await rig.call("/v1/sellers/profile?seller_id=AOTHERSELLER99");
  assert.equal(seller.status, 200, JSON.stringify(seller.body).slice(0, 300));
  assert.equal(seller.body.seller_id, "A1EXAMPLE7SELLER");
  assert.equal(seller.body.url, "https://www.amazon.com/sp?seller=A1EXAMPLE7SELLER");
  const deal = await rig.call("/v1/deals/products?deal_id=ZZZZ9999");
  assert.equal(deal.status, 200, JSON.stringify(deal.body).slice(0, 300));
  assert.equal(deal.body.deal_id, "e5f6a7b8");
  const ended = await rig.call("/v1/deals/products?deal_id=EMPTY001");
  assert.equal(ended.status, 404, JSON.stringify(ended.body).slice(0, 300));
  assert.equal(ended.headers.get("x-credits-cost"), "0");
  assert.equal(await used(rig), 2);
});

Deno.test("gtin-to-asin of an all-zero GTIN is not confirmed by a page whose UPC is all zeros, a placeholder", async () => {
  await using rig = await startRig();
  const search = await fixture("search/amazon.com__pricechecker-portable-charger.html");
  rig.fake.page("https://www.amazon.com/s?k=000000000000", {
    html: searchingFor(search, "000000000000"),
  });
  // The top result's page lists "UPC 000000000000": no code at all, not the one asked for.
  const charger = await fixture("product/amazon.com__msheraz-B0G6KD54ZK.html");
  assert.ok(charger.includes("> 753747482348 <"));
  rig.fake.page("https://www.amazon.com/dp/B0CB1FW5FC", {
    html: charger.replace("> 753747482348 <", "> 000000000000 <"),
  });
  const r = await rig.call("/v1/utility/gtin-to-asin?gtin=000000000000");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal((r.body.match as { asin: string }).asin, "B0CB1FW5FC");
  assert.match(String(r.body.note), /^Unsure: /, "the top result is given as unconfirmed");
});

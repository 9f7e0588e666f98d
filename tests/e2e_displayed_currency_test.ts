/**
 * The displayed currency (issue 16.3): `currency` is the currency of the amount shown, read from
 * the price itself; with a postcode asked for, a page showing another currency was rendered for
 * a shopper elsewhere and is the uncharged location-mismatch error. Two real pages: the corpus
 * category listing that amazon.com served in Egyptian pounds, and a real product page whose
 * "$11.88" was edited (text only) to "EUR 11,88", as amazon.com shows it to a shopper in Europe.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { fixture } from "./fixture.ts";

const DP = "https://www.amazon.com/dp/B07H57DNVV";

Deno.test("a product page showing EUR on amazon.com: currency EUR; with a postcode, an uncharged mismatch", async () => {
  await using rig = await startRig();
  const html = (await fixture("product/amazon.com__app-B07H57DNVV.html")).replaceAll(
    "$11.88",
    "EUR 11,88",
  );
  rig.fake.page(DP, { html });
  const plain = await rig.call("/v1/products/details?asin=B07H57DNVV");
  assert.equal(plain.status, 200, JSON.stringify(plain.body));
  assert.deepEqual(plain.body.price, {
    amount: 11.88,
    display: "EUR 11,88",
    currency: "EUR",
    list_price: null,
  });
  const before = (await rig.call("/v1/usage")).body.requests_used;
  const zipped = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001");
  assert.equal(zipped.status, 502, JSON.stringify(zipped.body));
  assert.match(
    (zipped.body.error as { message: string }).message,
    /Delivery location mismatch: the page shows prices in EUR instead of USD/,
  );
  assert.equal(zipped.headers.get("x-credits-cost"), "0");
  assert.equal((await rig.call("/v1/usage")).body.requests_used, before);
});

Deno.test("a category listing in EGP: read as EGP; with a postcode, an uncharged mismatch", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.com/s?rh=n:13896617011",
    "category/amazon.com__azza-rh-n16225007011-n13896617011.html",
  );
  const zipped = await rig.call("/v1/products/category?category_id=13896617011&zip=10001");
  assert.equal(zipped.status, 502, JSON.stringify(zipped.body));
  assert.match(
    (zipped.body.error as { message: string }).message,
    /prices in EGP instead of USD for postcode '10001'/,
  );
  assert.equal(zipped.headers.get("x-credits-cost"), "0");
});

Deno.test("the marketplace's own currency with a postcode is served as usual", async () => {
  await using rig = await startRig();
  rig.fake.page(DP, "product/amazon.com__app-B07H57DNVV.html");
  const r = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001");
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal((r.body.price as { currency: string }).currency, "USD");
});

Deno.test("a search limit with a postcode whose first page shows another currency is not charged, nor the pages fetched with it", async () => {
  await using rig = await startRig();
  const grid = "category/amazon.com__azza-rh-n16225007011-n13896617011.html"; // EGP prices
  for (let p = 1; p <= 6; p++) {
    rig.fake.page(`https://www.amazon.com/s?k=ipad${p > 1 ? `&page=${p}` : ""}`, grid);
  }
  const r = await rig.call("/v1/products/search?query=ipad&limit=200&zip=10001");
  assert.equal(r.status, 502, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.headers.get("x-credits-cost"), "0");
  await new Promise((r) => setTimeout(r, 200)); // anything fetched ahead would have come by now
  // Pages 2-4 went out with the first (upstream/search_ahead.ts), and no page after it was read.
  assert.ok(rig.fake.pageRequests("/s?") <= 4, "no page fetched past the first's answer");
  const usage = await rig.call("/v1/usage");
  assert.equal((usage.body as { requests_used: number }).requests_used, 0);
});

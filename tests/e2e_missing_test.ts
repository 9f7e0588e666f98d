/**
 * Honest nulls (issue 16.6): details, seller profile and promotion answers list in `missing` the
 * fields the page did not show, so a client can tell "not on the page" from a value. Real pages
 * over HTTP; values read off the pages.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { fixture } from "./fixture.ts";
import { shiftJis } from "./legacy_charsets.ts";

Deno.test("details: `missing` names exactly the fields the page did not show", async () => {
  await using rig = await startRig();
  // A music CD page (2019): the byline names the artist, "Greta Van Fleet (Artist)", not a
  // brand, the page has no #feature-bullets and no variation twister; everything else is shown.
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  const cd = await rig.call("/v1/products/details?asin=B07H57DNVV");
  assert.equal(cd.status, 200, JSON.stringify(cd.body));
  assert.deepEqual(cd.body.missing, ["brand", "feature_bullets", "variants"]);
  assert.equal(cd.body.brand, "");
  assert.deepEqual(cd.body.feature_bullets, []);
  // The Japanese mobile page shows every field but variations (it has no twister).
  rig.fake.page(
    "https://www.amazon.co.jp/dp/B002XA6AU4",
    "product/amazon.co.jp__jack-mobile-shoeido-bouchuko.html",
  );
  const jp = await rig.call("/v1/products/details?asin=B002XA6AU4&marketplace=JP");
  assert.equal(jp.status, 200, JSON.stringify(jp.body));
  assert.deepEqual(jp.body.missing, ["variants"]);
});

Deno.test("details: a product the page says has no reviews has reviews_count 0, not missing", async () => {
  await using rig = await startRig();
  // amazon.ca (2019): the reviews widget's heading is "No customer reviews" (probe BM: listed as
  // missing, as if it could not be read); no rating is shown, so rating stays missing.
  rig.fake.page("https://www.amazon.ca/dp/B01GAWQSFW", "product/amazon.ca__app-B01GAWQSFW.html");
  const none = await rig.call("/v1/products/details?asin=B01GAWQSFW&marketplace=CA");
  assert.equal(none.status, 200, JSON.stringify(none.body));
  assert.equal(none.body.reviews_count, 0);
  assert.ok(!(none.body.missing as string[]).includes("reviews_count"));
  assert.ok((none.body.missing as string[]).includes("rating"));
  assert.ok(!("no_reviews_stated" in none.body), "the reading's flag is not in the answer");
});

Deno.test("details: a page that shows nothing of its stock lists in_stock as missing", async () => {
  await using rig = await startRig();
  // amazon.es (metascraper's fixture): no buy box and no price; #availability holds only the all-offers script,
  // and there is no out-of-stock box. in_stock's false is a default there, not read (probe BM).
  rig.fake.page(
    "https://www.amazon.es/dp/B01MUGXRT9",
    "product/amazon.es__metascraper-B01MUGXRT9.html",
  );
  const es = await rig.call("/v1/products/details?asin=B01MUGXRT9&marketplace=ES");
  assert.equal(es.status, 200, JSON.stringify(es.body));
  assert.equal(es.body.in_stock, false);
  assert.equal(es.body.availability, "");
  assert.ok((es.body.missing as string[]).includes("in_stock"), JSON.stringify(es.body.missing));
  assert.ok(!("stock_unread" in es.body), "the reading's flag is not in the answer");
  // A page that states its stock keeps in_stock out of missing, whichever way it reads.
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  const cd = await rig.call("/v1/products/details?asin=B07H57DNVV");
  assert.ok(!(cd.body.missing as string[]).includes("in_stock"));
});

Deno.test("the OpenAPI document describes `missing`", async () => {
  await using rig = await startRig();
  const doc = await (await fetch(`${rig.server.url}/openapi.json`)).json();
  const details = doc.components.schemas.DetailsResponse;
  assert.ok(details.required.includes("missing"));
  assert.match(details.properties.missing.description, /did not show/);
});

Deno.test("details: a page whose bytes are not in the charset it names is an uncharged 502, not U+FFFD", async () => {
  await using rig = await startRig();
  // The Japanese page in Shift_JIS under a UTF-8 header (a mirror that misstates it; probe CF):
  // read as UTF-8, its title, brand and facts were U+FFFD, answered and charged.
  const page = await fixture("product/amazon.co.jp__jack-mobile-shoeido-bouchuko.html");
  rig.fake.page("https://www.amazon.co.jp/dp/B002XA6AU4", {
    html: shiftJis(page),
    headers: [["content-type", "text/html; charset=UTF-8"]],
  });
  const r = await rig.call("/v1/products/details?asin=B002XA6AU4&marketplace=JP");
  assert.equal(r.status, 502, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.headers.get("x-credits-cost"), "0");
  const usage = await rig.call("/v1/usage");
  assert.equal((usage.body as { requests_used: number }).requests_used, 0);
});

Deno.test("details: a 410 Gone from the marketplace is a 404 not_found, uncharged, not a 502 to retry", async () => {
  await using rig = await startRig();
  // A product withdrawn for good: HTTP 410 with a plain body, not the marketplace's "dogs" page
  // (which a 404 would be recognised by whatever its status).
  rig.fake.page("https://www.amazon.com/dp/B000GONE00", {
    status: 410,
    html: "<html><head><title>Gone</title></head><body>This item is no longer here.</body></html>",
  });
  const r = await rig.call("/v1/products/details?asin=B000GONE00");
  assert.equal(r.status, 404, JSON.stringify(r.body));
  assert.equal((r.body.error as { code: string }).code, "not_found");
  assert.equal(r.headers.get("x-credits-cost"), "0");
  const usage = await rig.call("/v1/usage");
  assert.equal((usage.body as { requests_used: number }).requests_used, 0);
});

/**
 * Honest nulls (issue 16.6): details, seller profile and promotion answers list in `missing` the
 * fields the page did not show, so a client can tell "not on the page" from a value. Real pages
 * over HTTP; values read off the pages.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";

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

Deno.test("the OpenAPI document describes `missing`", async () => {
  await using rig = await startRig();
  const doc = await (await fetch(`${rig.server.url}/openapi.json`)).json();
  const details = doc.components.schemas.DetailsResponse;
  assert.ok(details.required.includes("missing"));
  assert.match(details.properties.missing.description, /did not show/);
});

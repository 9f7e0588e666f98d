/**
 * A page of another Amazon site served for the one asked for (a proxy, a cache or an archive
 * handing over the wrong host's page) is no answer: the page names its marketplace in its head
 * (`ue_mid`), and one naming another known marketplace is an uncharged 502 (probe FP: amazon.fr's
 * page answered for amazon.de, charged, labelled amazon.de, "En stock."). Real corpus pages.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { fixture } from "./fixture.ts";
import { pageMarketplaceId } from "../parsers/page_common.ts";
import { marketplace } from "../schemas/marketplaces.ts";

Deno.test("amazon.fr's product page served for amazon.de is an uncharged 502; served for amazon.fr, an answer", async () => {
  await using rig = await startRig();
  const fr = await fixture("product/amazon.fr__app-B07H57DNVV.html");
  assert.equal(pageMarketplaceId(fr), marketplace("FR").id);
  rig.fake.page("https://www.amazon.de/dp/B07H57DNVV", { html: fr });
  rig.fake.page("https://www.amazon.fr/dp/B07H57DNVV", { html: fr });
  const r = await rig.call("/v1/products/details?asin=B07H57DNVV&marketplace=DE");
  assert.equal(r.status, 502, JSON.stringify(r.body).slice(0, 300));
  assert.match(
    (r.body.error as { message: string }).message,
    /www\.amazon\.fr's, not www\.amazon\.de's/,
  );
  assert.equal(r.headers.get("x-credits-cost"), "0");
  assert.equal((await rig.call("/v1/usage")).body.requests_used, 0);
  const own = await rig.call("/v1/products/details?asin=B07H57DNVV&marketplace=FR");
  assert.equal(own.status, 200, JSON.stringify(own.body).slice(0, 300));
  assert.equal(own.body.url, "https://www.amazon.fr/dp/B07H57DNVV");
});

Deno.test("a search page of amazon.de served for amazon.fr is an uncharged 502", async () => {
  await using rig = await startRig();
  const de = await fixture("search/amazon.de__parsy-katzenfutter.html");
  assert.equal(pageMarketplaceId(de), marketplace("DE").id);
  rig.fake.page("https://www.amazon.fr/s?k=katzenfutter", { html: de });
  const r = await rig.call("/v1/products/search?query=katzenfutter&marketplace=FR");
  assert.equal(r.status, 502, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.headers.get("x-credits-cost"), "0");
});

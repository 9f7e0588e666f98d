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

type Rig = Awaited<ReturnType<typeof startRig>>;

/** `html` served at `url`, then `path` called: an uncharged 502, whose answer is returned. */
async function refusedAt(rig: Rig, url: string, html: string, path: string) {
  rig.fake.page(url, { html });
  const r = await rig.call(path);
  assert.equal(r.status, 502, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.headers.get("x-credits-cost"), "0");
  return r;
}

Deno.test("amazon.fr's product page served for amazon.de is an uncharged 502; served for amazon.fr, an answer", async () => {
  await using rig = await startRig();
  const fr = await fixture("product/amazon.fr__app-B07H57DNVV.html");
  assert.equal(pageMarketplaceId(fr), marketplace("FR").id);
  rig.fake.page("https://www.amazon.fr/dp/B07H57DNVV", { html: fr });
  const r = await refusedAt(
    rig,
    "https://www.amazon.de/dp/B07H57DNVV",
    fr,
    "/v1/products/details?asin=B07H57DNVV&marketplace=DE",
  );
  assert.match(
    (r.body.error as { message: string }).message,
    /www\.amazon\.fr's, not www\.amazon\.de's/,
  );
  assert.equal((await rig.call("/v1/usage")).body.requests_used, 0);
  const own = await rig.call("/v1/products/details?asin=B07H57DNVV&marketplace=FR");
  assert.equal(own.status, 200, JSON.stringify(own.body).slice(0, 300));
  assert.equal(own.body.url, "https://www.amazon.fr/dp/B07H57DNVV");
});

Deno.test("a page whose head runs past 256 KB is still checked (probe FW)", async () => {
  await using rig = await startRig();
  // 441 KB of styles in its head: its body starts near 500 KB.
  const de = await fixture("product/amazon.de__sapila-B008TLGFW4.html");
  assert.ok(de.search(/<body[\s>]/i) > 256 * 1024);
  assert.equal(pageMarketplaceId(de), marketplace("DE").id);
  await refusedAt(
    rig,
    "https://www.amazon.fr/dp/B008TLGFW4",
    de,
    "/v1/products/details?asin=B008TLGFW4&marketplace=FR",
  );
});

Deno.test("a search page of amazon.de served for amazon.fr is an uncharged 502", async () => {
  await using rig = await startRig();
  const de = await fixture("search/amazon.de__parsy-katzenfutter.html");
  assert.equal(pageMarketplaceId(de), marketplace("DE").id);
  await refusedAt(
    rig,
    "https://www.amazon.fr/s?k=katzenfutter",
    de,
    "/v1/products/search?query=katzenfutter&marketplace=FR",
  );
});

Deno.test("a page's own text naming a marketplace id refuses nothing: only the head is read (probe FS)", async () => {
  await using rig = await startRig();
  // The offers fragment has no head: a seller named so made every offers call of it refused.
  const aod = (await fixture("offers/amazon.com__wk-aod-main-B0BN72FYFG.html"))
    .replace(">DirectCertified </a>", ">ue_mid='A1PA6795UKMFR9' Shop</a>");
  assert.equal(pageMarketplaceId(aod), null);
  rig.fake.page(
    "https://www.amazon.com/gp/product/ajax/?asin=B0BN72FYFG&pc=dp&experienceId=aodAjaxMain",
    { html: aod },
  );
  const r = await rig.call("/v1/products/offers?asin=B0BN72FYFG");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  // And on a whole page, text of the body is not its head.
  const us = await fixture("product/amazon.com__app-B07H57DNVV.html");
  const inBody = us.replace(/(\bue_mid\s*=\s*['"])[A-Z0-9]+/, "$1X")
    .replace("<body", "<body><p>ue_mid = 'A1PA6795UKMFR9'</p");
  assert.equal(pageMarketplaceId(inBody), null);
});

/**
 * Edges of the data path from a fetched page to an answer, over real HTTP with the fake
 * marketplace serving corpus pages (some changed in one named place):
 * - the marketplace's "page not found" served with HTTP 200 is still an uncharged 404
 *   (upstream/fetch_page.ts);
 * - a details answer lists reviews_count in `missing` when the page shows no count, and only a page
 *   that says "No customer reviews" has a 0 that is read (upstream/envelopes.ts);
 * - asin-to-gtin names the most general code as gtin, whatever order the page lists them in;
 * - /v1/scrape is never answered from the result cache (upstream/result_cache.ts), though the
 *   endpoints are.
 */
import assert from "node:assert/strict";
import { PATIENT, startRig, usedCredits } from "./upstream_harness.ts";
import { fixture } from "./fixture.ts";
import { changedPage } from "./page_edit.ts";
import { NOT_FOUND_PAGE } from "./handbuilt_pages.ts";
import { CachingSource } from "../upstream/result_cache.ts";
import { ManualClock } from "../metering/clock.ts";

const CD = "product/amazon.com__app-B07H57DNVV.html"; // shows "33 customer reviews"
const CHARGER = "product/amazon.com__msheraz-B0G6KD54ZK.html"; // lists UPC 753747482348 only

Deno.test("the marketplace's 'page not found' served with HTTP 200 is an uncharged 404, not a 502 to retry", async () => {
  await using rig = await startRig(PATIENT);
  // The dogs-of-Amazon page under HTTP 200: the page, not its status, says there is no such product.
  rig.fake.page("https://www.amazon.com/dp/B000000000", { status: 200, html: NOT_FOUND_PAGE });
  const r = await rig.call("/v1/products/details?asin=B000000000");
  assert.equal(r.status, 404, JSON.stringify(r.body).slice(0, 300));
  assert.equal((r.body.error as { code: string }).code, "not_found");
  assert.equal(r.headers.get("x-credits-cost"), "0");
  assert.equal(await usedCredits(rig), 0);
});

Deno.test("details: a page that shows no reviews count, and does not say it has no reviews, lists reviews_count in missing", async () => {
  await using rig = await startRig(PATIENT);
  // The CD page without its ratings count: a 0 the page did not state is a default, not a value.
  const page = changedPage(
    await fixture(CD),
    '<span id="acrCustomerReviewText" class="a-size-base">33 customer reviews</span>',
    "",
  );
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", { html: page });
  const r = await rig.call("/v1/products/details?asin=B07H57DNVV");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.reviews_count, 0);
  const missing = r.body.missing as string[];
  assert.ok(missing.includes("reviews_count"), JSON.stringify(missing));
  // As saved, the page shows its count, which is then not missing.
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", CD);
  const shown = await rig.call("/v1/products/details?asin=B07H57DNVV");
  assert.equal(shown.body.reviews_count, 33);
  assert.ok(!(shown.body.missing as string[]).includes("reviews_count"));
});

Deno.test("asin-to-gtin names the EAN as gtin though the page lists the UPC before it", async () => {
  await using rig = await startRig(PATIENT);
  // The charger's details table with an EAN row (the EAN-13 of its UPC-A) after its UPC row.
  const upcRow =
    '<th class="a-color-secondary a-size-base prodDetSectionEntry"> UPC </th>  <td class="a-size-base prodDetAttrValue"> 753747482348 </td> </tr>';
  const page = changedPage(
    await fixture(CHARGER),
    upcRow,
    upcRow +
      '<tr> <th class="a-color-secondary a-size-base prodDetSectionEntry"> EAN </th>  <td class="a-size-base prodDetAttrValue"> 0753747482348 </td> </tr>',
  );
  rig.fake.page("https://www.amazon.com/dp/B0G6KD54ZK", { html: page });
  const r = await rig.call("/v1/utility/asin-to-gtin?asin=B0G6KD54ZK");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  const ids = r.body.identifiers as Record<string, string>;
  assert.deepEqual(Object.keys(ids), ["UPC", "EAN"], "the page's order");
  assert.equal(r.body.gtin, "0753747482348");
  assert.equal(r.body.note, null);
});

Deno.test("scrape is never answered from the result cache: a repeat fetches the page again, with no Age header", async () => {
  const clock = new ManualClock();
  await using rig = await startRig({
    ...PATIENT,
    wrap: (s, kv) => new CachingSource(s, kv, clock),
  });
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", CD);
  // The cache is on: a details repeat is served from it.
  await rig.call("/v1/products/details?asin=B07H57DNVV");
  const cached = await rig.call("/v1/products/details?asin=B07H57DNVV");
  assert.equal(cached.status, 200);
  assert.notEqual(cached.headers.get("age"), null);
  assert.equal(rig.fake.pageRequests("/dp/B07H57DNVV"), 1);

  const scrape = "/v1/scrape?url=" + encodeURIComponent("https://www.amazon.com/dp/B07H57DNVV");
  for (const n of [1, 2]) {
    clock.advance(30_000);
    const r = await rig.call(scrape);
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
    assert.equal(r.headers.get("age"), null, `scrape ${n}`);
    assert.equal(r.headers.get("x-credits-cost"), "2");
    assert.equal(rig.fake.pageRequests("/dp/B07H57DNVV"), 1 + n, `scrape ${n} fetched the page`);
  }
  const scrapeKeys: string[] = [];
  for await (const e of rig.server.kv.list({ prefix: ["result_cache", "scrape"] })) {
    scrapeKeys.push(JSON.stringify(e.key));
  }
  assert.deepEqual(scrapeKeys, [], "no scrape answer stored");
});

/**
 * Edges of a search's pages (upstream/search_pages.ts collectSearch, upstream/source.ts listing),
 * over real HTTP with the fake marketplace serving the ipad corpus page and pages derived from it:
 * - the 400-page cap: page 400 is read, no page past it is asked for;
 * - where a `limit` search ends: a page with no results ends it though it links a next one;
 * - which further pages belong to the search: its links' words are compared whatever their case,
 *   and with a postcode a page showing some prices in another currency ends the answer before it;
 * - what the answer says of itself: `total_results` is never below the items it holds, and a
 *   search without `sort` answers `sort: null`.
 */
import assert from "node:assert/strict";
import { PATIENT, startRig, usedCredits } from "./upstream_harness.ts";
import { asResultsPage, fixture, searchingFor } from "./fixture.ts";
import { changedPage } from "./page_edit.ts";
import { parseSearch } from "../parsers/search.ts";

// 16 results a page, none of them an ad, prices in dollars, "1-16 of 950 results", its links
// searching "ipad pro", a next page linked and page 20 named as the last.
const IPADS = "search/amazon.com__pavel-ipad-pro.html";

// ---- the 400-page cap ----

Deno.test("page 400, the last page a search may ask for, is fetched and answered", async () => {
  await using rig = await startRig(PATIENT);
  const ipads = await fixture(IPADS);
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=400", { html: asResultsPage(ipads, 400) });
  const r = await rig.call("/v1/products/search?query=ipad&page=400");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(rig.fake.pageRequests("page=400"), 1);
  assert.equal(r.body.page, 400);
  assert.equal(r.body.count, 16);
  assert.equal(r.headers.get("x-credits-cost"), "1");
});

Deno.test("a limit search reaching page 400 reads it and asks for no page past it, though it links one", async () => {
  await using rig = await startRig(PATIENT);
  const ipads = await fixture(IPADS);
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=399", { html: asResultsPage(ipads, 399) });
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=400", { html: asResultsPage(ipads, 400) });
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=401", { html: asResultsPage(ipads, 401) });
  assert.ok(parseSearch(asResultsPage(ipads, 400), { marketplace: "US" }).has_next_page);
  const r = await rig.call("/v1/products/search?query=ipad&page=399&limit=40");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(rig.fake.pageRequests("page=400"), 1);
  assert.equal(rig.fake.pageRequests("page=401"), 0);
  assert.equal(r.body.count, 32, "pages 399 and 400");
  // Amazon's results never pass page 400, nor can a caller ask for page 401.
  assert.equal(r.body.has_next_page, false);
  assert.equal(r.headers.get("x-credits-cost"), "2");
});

// ---- where a limit search ends ----

Deno.test("a limit search ends at a page holding no results, though that page links a next one", async () => {
  await using rig = await startRig(PATIENT);
  const ipads = await fixture(IPADS);
  // Page 2: an empty result list whose pagination (same words as page 1's) names page 3 next.
  const empty = `<html><body><div class="s-main-slot s-result-list"></div>No results.` +
    `<span class="s-pagination-strip"><span class="s-pagination-item s-pagination-selected">2</span>` +
    `<a href="/s?k=ipad+pro&amp;page=3" class="s-pagination-item s-pagination-next">Next</a>` +
    `</span></body></html>`;
  const read = parseSearch(empty, { marketplace: "US" });
  assert.equal(read.results.length, 0);
  assert.ok(read.has_next_page, "page 2 links a next page");
  assert.equal(read.links_query, "ipad pro");
  rig.fake.page("https://www.amazon.com/s?k=ipad", { html: ipads });
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=2", { html: empty });
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=3", { html: asResultsPage(ipads, 3) });
  const r = await rig.call("/v1/products/search?query=ipad&limit=20");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(rig.fake.pageRequests("page=2"), 1);
  assert.equal(rig.fake.pageRequests("page=3"), 0, "no page after the empty one is bought");
  assert.equal(r.body.count, 16);
  assert.equal(r.body.has_next_page, false);
  assert.equal(r.headers.get("x-credits-cost"), "2");
});

// ---- which further pages belong to the search ----

Deno.test("a further page whose links write the search words in other case is the same search's page", async () => {
  await using rig = await startRig(PATIENT);
  const ipads = await fixture(IPADS);
  const shouted = searchingFor(asResultsPage(ipads, 2), "IPAD Pro");
  assert.equal(parseSearch(shouted, { marketplace: "US" }).links_query, "IPAD Pro");
  rig.fake.page("https://www.amazon.com/s?k=ipad", { html: ipads });
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=2", { html: shouted });
  const r = await rig.call("/v1/products/search?query=ipad&limit=20");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.count, 20, "page 2's items follow page 1's");
  assert.equal(r.body.has_next_page, true);
  assert.equal(r.headers.get("x-credits-cost"), "2");
});

Deno.test("with a postcode, a further page showing some prices in another currency ends a limit search before it, uncharged", async () => {
  await using rig = await startRig(PATIENT);
  const ipads = await fixture(IPADS);
  // Page 2 in dollars but for one price in euros: it shares a currency with page 1, so only the
  // postcode's currency rule tells it was rendered for a shopper elsewhere.
  const mixed = changedPage(
    asResultsPage(ipads, 2),
    '<span class="a-offscreen">$1,049.00</span>',
    '<span class="a-offscreen">€1,049.00</span>',
    "first",
  );
  const currencies = parseSearch(mixed, { marketplace: "US" }).results.map((i) =>
    i.price?.currency
  );
  assert.ok(currencies.includes("EUR") && currencies.includes("USD"));
  rig.fake.page("https://www.amazon.com/s?k=ipad", { html: ipads });
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=2", { html: mixed });
  const r = await rig.call("/v1/products/search?query=ipad&limit=20&zip=10001");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(rig.fake.pageRequests("page=2"), 1);
  const results = r.body.results as { price: { currency: string } | null }[];
  assert.equal(results.length, 16, "page 1's items alone");
  assert.ok(results.every((i) => !i.price || i.price.currency === "USD"));
  assert.equal(r.body.has_next_page, true);
  // Page 2 was another shopper's page: given back.
  assert.equal(r.headers.get("x-credits-cost"), "1");
  assert.equal(await usedCredits(rig), 1);
});

// ---- what the answer says of itself ----

Deno.test("total_results is never below the items answered: a first page without a results banner over a two-page answer", async () => {
  await using rig = await startRig(PATIENT);
  const ipads = await fixture(IPADS);
  // A newer grid prints no "1-16 of N results": the page vouches for its own 16 results only.
  const bare = changedPage(ipads, "1-16 of 950 results", "Results");
  assert.equal(parseSearch(bare, { marketplace: "US" }).total_results, 16);
  rig.fake.page("https://www.amazon.com/s?k=ipad", { html: bare });
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=2", { html: asResultsPage(bare, 2) });
  const r = await rig.call("/v1/products/search?query=ipad&limit=20");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.count, 20);
  assert.equal(r.body.total_results, 20);
});

Deno.test("a search without sort answers sort null, whatever order the page's menu shows", async () => {
  await using rig = await startRig(PATIENT);
  const ipads = await fixture(IPADS);
  assert.equal(parseSearch(ipads, { marketplace: "US" }).sort_shown, "relevanceblender");
  rig.fake.page("https://www.amazon.com/s?k=ipad", { html: ipads });
  const r = await rig.call("/v1/products/search?query=ipad");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.ok("sort" in r.body);
  assert.equal(r.body.sort, null);
});

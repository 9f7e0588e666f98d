/**
 * Edges of a search's answer (upstream/source.ts listing, upstream/search_pages.ts collectSearch),
 * over real HTTP with the fake marketplace serving the ipad corpus page and pages derived from it:
 * - what a multi-page `limit` answer is labelled with (its sort, its total_results) is read off its
 *   first page, not off the last page read;
 * - what a `limit` search is charged when a page it fetched ahead fails, and when a further page
 *   holds only ads;
 * - an empty result list with `prime_only` outside the US is an empty answer, not a 502;
 * - results without an ASIN are not taken for repeats (at module level: the search parser emits
 *   none such, so HTTP cannot show it).
 */
import assert from "node:assert/strict";
import { PATIENT, startRig, usedCredits } from "./upstream_harness.ts";
import { asResultsPage, fixture } from "./fixture.ts";
import { changedPage } from "./page_edit.ts";
import { parseSearch } from "../parsers/search.ts";
import { collectSearch } from "../upstream/search_pages.ts";
import type { SearchPage } from "../schemas/pages.ts";
import type { ProductItem } from "../schemas/resources.ts";

// 16 results a page, none of them an ad, "1-16 of 950 results", sorted "relevanceblender", a next
// page linked and page 20 named as the last.
const IPADS = "search/amazon.com__pavel-ipad-pro.html";

// ---- the answer is labelled by its first page ----

Deno.test("a limit search is named by its first page's sort, though a later page read shows another", async () => {
  await using rig = await startRig(PATIENT);
  const ipads = await fixture(IPADS);
  // Page 1 sorted as asked (its sort menu selects "Price: Low to High"); page 2 in relevance
  // order, as saved.
  const sorted = changedPage(
    changedPage(ipads, 'value="relevanceblender" selected>', 'value="relevanceblender">'),
    'value="price-asc-rank">',
    'value="price-asc-rank" selected>',
  );
  assert.equal(parseSearch(sorted, { marketplace: "US" }).sort_shown, "price-asc-rank");
  rig.fake.page("https://www.amazon.com/s?k=ipad&s=price-asc-rank", { html: sorted });
  rig.fake.page("https://www.amazon.com/s?k=ipad&s=price-asc-rank&page=2", {
    html: asResultsPage(ipads, 2),
  });
  const r = await rig.call("/v1/products/search?query=ipad&sort=price_asc&limit=20");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(rig.fake.pageRequests("page=2"), 1, "the answer spans two pages");
  assert.equal(r.body.count, 20);
  assert.equal(r.body.sort, "price_asc");
});

Deno.test("a limit search's total_results is its first page's, though a later page states another", async () => {
  await using rig = await startRig(PATIENT);
  const ipads = await fixture(IPADS);
  rig.fake.page("https://www.amazon.com/s?k=ipad", { html: ipads });
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=2", {
    html: changedPage(asResultsPage(ipads, 2), "1-16 of 950 results", "17-32 of 2,000 results"),
  });
  const r = await rig.call("/v1/products/search?query=ipad&limit=20");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(rig.fake.pageRequests("page=2"), 1, "the answer spans two pages");
  assert.equal(r.body.count, 20);
  assert.equal(r.body.total_results, 950);
});

// ---- what a limit search is charged ----

Deno.test("a limit search pays for further pages the marketplace says do not exist, not for one that was blocked", async () => {
  await using rig = await startRig(PATIENT);
  // Only page 1 exists: pages 2 and 4 are the marketplace's 404, page 3 answers 503 on every try.
  // The first page names page 20 as the last, so 34 more items plan pages 2-4 at once.
  rig.fake.page("https://www.amazon.com/s?k=ipad", IPADS);
  rig.fake.fail("503", 20, "page=3");
  const r = await rig.call("/v1/products/search?query=ipad&limit=50");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.count, 16);
  assert.equal(r.body.has_next_page, false, "page 2's 404 ends the results");
  for (const n of [2, 3, 4]) assert.ok(rig.fake.pageRequests(`page=${n}`) > 0, `page ${n} asked`);
  assert.equal(rig.fake.pageRequests("page=5"), 0);
  assert.ok(rig.fake.injected["503"] > 0, "page 3 was refused");
  // Page 1, and pages 2 and 4 that the marketplace answered (404); blocked page 3 is given back.
  assert.equal(r.headers.get("x-credits-cost"), "3");
  assert.equal(await usedCredits(rig), 3);
});

Deno.test("a further page holding only ads, none of them seen before, is a page of the answer and the search goes on", async () => {
  await using rig = await startRig(PATIENT);
  const ipads = await fixture(IPADS);
  // Page 2: the ipad page's items renamed, every result card marked an ad (AdHolder).
  const adsOnly = asResultsPage(ipads, 2).replaceAll(
    'class="sg-col-20-of-24 s-result-item s-asin',
    'class="AdHolder sg-col-20-of-24 s-result-item s-asin',
  );
  const read = parseSearch(adsOnly, { marketplace: "US" });
  assert.equal(read.results.length, 16);
  assert.ok(read.results.every((r) => r.sponsored), "page 2 holds only ads");
  rig.fake.page("https://www.amazon.com/s?k=ipad", { html: ipads });
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=2", { html: adsOnly });
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=3", { html: asResultsPage(ipads, 3) });
  const r = await rig.call("/v1/products/search?query=ipad&limit=40");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  const results = r.body.results as { asin: string; sponsored: boolean }[];
  assert.equal(r.body.count, 40);
  assert.deepEqual(
    results.slice(16, 32).map((i) => i.asin),
    read.results.map((i) => i.asin),
    "page 2's ads follow page 1's items",
  );
  assert.ok(results.slice(16, 32).every((i) => i.sponsored));
  assert.equal(r.body.has_next_page, true);
  assert.equal(r.headers.get("x-credits-cost"), "3", "all three pages are in the answer");
});

// ---- prime_only outside the US ----

Deno.test("prime_only on a marketplace that does not filter it in its URL, for a query without results, is an empty 200 charged one page", async () => {
  await using rig = await startRig(PATIENT);
  // An empty result list (the shape parsers_search_test.ts reads as no results): nothing to mark
  // Prime, so nothing says the page cannot mark it.
  rig.fake.page("https://www.amazon.fr/s?k=qzxv", {
    html:
      `<html><body><div class="s-main-slot s-result-list"></div>No results for qzxv.</body></html>`,
  });
  const r = await rig.call("/v1/products/search?query=qzxv&marketplace=FR&prime_only=true");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.count, 0);
  assert.deepEqual(r.body.results, []);
  assert.equal(r.headers.get("x-credits-cost"), "1");
});

// ---- results without an ASIN ----

const item = (asin: string) =>
  ({
    asin,
    sponsored: false,
    prime: false,
    title: asin || "untitled",
    url: "",
    position: 0,
  }) as unknown as ProductItem;

Deno.test("results without an ASIN are kept: nothing makes them repeats of one another", async () => {
  const pages: Record<number, ProductItem[]> = {
    1: [item(""), item("B000000001")],
    2: [item(""), item("B000000002")],
  };
  const got = await collectSearch<number>({
    firstPage: 1,
    limit: 10,
    fetchPage: (n) => Promise.resolve(n),
    read: (n) =>
      ({
        results: pages[n] ?? [],
        has_next_page: n < 2,
        total_results: 4,
      }) as unknown as SearchPage,
    chargePage: () => Promise.resolve(true),
    refundPages: () => Promise.resolve(),
    keep: () => true,
  });
  assert.deepEqual(got.results.map((r) => r.asin), ["", "B000000001", "", "B000000002"]);
  assert.equal(got.has_next_page, false);
});

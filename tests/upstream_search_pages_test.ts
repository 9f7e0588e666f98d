/**
 * Reading search results over pages, on pages given as data. collectSearch (upstream/search_pages.ts):
 * a further page holding only items already read ends the search and is given back, items already
 * read are left out, and an ASIN advertised on one page is still a result on another (probe CT).
 * lookUpGtin (upstream/gtin_lookup.ts): the product a result's page shows is the answer.
 */
import assert from "node:assert/strict";
import { collectSearch } from "../upstream/search_pages.ts";
import type { SearchPage } from "../schemas/pages.ts";
import type { ProductItem } from "../schemas/resources.ts";

const item = (asin: string, sponsored: boolean) =>
  ({ asin, sponsored, prime: false, title: asin, url: "", position: 0 }) as unknown as ProductItem;

function collect(pages: Record<number, ProductItem[]>, keep: (i: ProductItem) => boolean) {
  const last = Math.max(...Object.keys(pages).map(Number));
  const spent = { charged: 1, refunded: 0 };
  const got = collectSearch<number>({
    firstPage: 1,
    limit: 20,
    fetchPage: (n) => Promise.resolve(n),
    read: (n) =>
      ({
        results: pages[n] ?? [],
        has_next_page: n < last,
        total_results: 99,
      }) as unknown as SearchPage,
    chargePage: () => Promise.resolve(++spent.charged > 0),
    refundPages: (n) => Promise.resolve(void (spent.refunded += n)),
    keep,
  });
  return got.then((r) => ({ ...r, ...spent, asins: r.results.map((i) => i.asin) }));
}

Deno.test("an ASIN advertised on one page is kept as a result on a later one, with or without ads", async () => {
  const pages = {
    1: [item("B0SPONSOR1", true), item("B000000001", false)],
    2: [item("B0SPONSOR1", false), item("B000000002", false)],
    3: [item("B000000003", false)],
  };
  const organic = await collect(pages, (i) => !i.sponsored);
  assert.deepEqual(organic.asins, ["B000000001", "B0SPONSOR1", "B000000002", "B000000003"]);
  const all = await collect(pages, () => true);
  assert.deepEqual(all.asins, [
    "B0SPONSOR1",
    "B000000001",
    "B0SPONSOR1",
    "B000000002",
    "B000000003",
  ]);
  assert.equal(all.refunded, 0);
});

Deno.test("a further page of items already read, ads and results alike, ends the search and is given back", async () => {
  const first = [item("B0SPONSOR1", true), item("B000000001", false)];
  const got = await collect(
    { 1: first, 2: [...first], 3: [item("B000000003", false)] },
    () => true,
  );
  assert.deepEqual(got.asins, ["B0SPONSOR1", "B000000001"]);
  assert.equal(got.has_next_page, false);
  assert.equal(got.charged - got.refunded, 1, "only the first page paid");
});

Deno.test("gtin-to-asin: the product a result's page shows is the answer, and not among the other matches (probe CT)", async () => {
  const { lookUpGtin } = await import("../upstream/gtin_lookup.ts");
  const results = ["B0AAAAAAAA", "B0BBBBBBBB", "B0CCCCCCCC"].map((a) => item(a, false));
  // The top result's page is B0BBBBBBBB's (a merged product), and lists the code.
  const found = await lookUpGtin("753747482348", results, (asin) =>
    Promise.resolve(
      asin === "B0AAAAAAAA" ? { asin: "B0BBBBBBBB", identifiers: { UPC: "753747482348" } } : null,
    ));
  assert.equal(found.asin, "B0BBBBBBBB");
  assert.equal(found.match.asin, "B0AAAAAAAA");
  assert.deepEqual(found.other_matches, ["B0CCCCCCCC"]);
  assert.match(found.note ?? "", /B0AAAAAAAA as B0BBBBBBBB/);
});

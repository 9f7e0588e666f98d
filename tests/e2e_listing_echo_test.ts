/**
 * The labels a listing's answer echoes (upstream/listing_shown.ts), seen over HTTP with corpus
 * pages changed in one named place: what a page's pagination links say only relabels the answer
 * when it is a well-formed label of that kind of listing, and a page whose links say nothing is the
 * listing asked for. A wrong label is a charged wrong answer, and a wrong 502 an answer withheld.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { fixture, searchingFor } from "./fixture.ts";

const SEARCH = "search/amazon.com__alaa-laptop.html"; // links: /s?k=laptop&page=N
const CATEGORY = "category/amazon.com__azza-rh-n16225007011-n13896617011.html"; // i=computers-intl-ship
const STOREFRONT = "seller_products/amazon.com__app-storefront-A2DP2EEPU3VU45.html"; // i=merchant-items&me=…

/** `page` with every copy of `from` written as `to`; fails if the page holds none. */
function everywhere(page: string, from: string, to: string): string {
  assert.ok(page.includes(from), `not on the page: ${from}`);
  return page.replaceAll(from, to);
}

Deno.test("storefront links paging i=merchant-items without a seller tell nothing: a storefront or a category is answered as asked", async () => {
  await using rig = await startRig();
  // The edit: the seller (`me=`) taken out of the storefront's pagination links.
  const html = everywhere(await fixture(STOREFRONT), "me=A2DP2EEPU3VU45&amp;", "");
  rig.fake.page("https://www.amazon.com/s?me=A1B2C3D4E5F6G7", { html });
  const seller = await rig.call("/v1/sellers/products?seller_id=A1B2C3D4E5F6G7");
  // Read as a category's page, this was an uncharged 502 for a storefront's own page.
  assert.equal(seller.status, 200, JSON.stringify(seller.body).slice(0, 300));
  assert.equal(seller.body.seller_id, "A1B2C3D4E5F6G7");
  assert.ok((seller.body.count as number) > 0);
  rig.fake.page("https://www.amazon.com/s?i=electronics", { html });
  const category = await rig.call("/v1/products/category?category_id=electronics");
  assert.equal(category.status, 200, JSON.stringify(category.body).slice(0, 300));
  // The storefront's alias is no category: "merchant-items" is never a category_id.
  assert.equal(category.body.category_id, "electronics");
});

Deno.test("a search echoes the words its links search up to the longest query a search takes, compared in any case", async () => {
  await using rig = await startRig();
  const page = await fixture(SEARCH);
  // The edit: the links' `k=` made 300 and then 301 characters.
  const longest = "a".repeat(300);
  rig.fake.page("https://www.amazon.com/s?k=longq", { html: searchingFor(page, longest) });
  const at = await rig.call("/v1/products/search?query=longq");
  assert.equal(at.status, 200, JSON.stringify(at.body).slice(0, 300));
  assert.equal(at.body.query, longest, "300 characters are a query a client could ask");
  rig.fake.page("https://www.amazon.com/s?k=longr", { html: searchingFor(page, longest + "b") });
  const past = await rig.call("/v1/products/search?query=longr");
  assert.equal(past.status, 200, JSON.stringify(past.body).slice(0, 300));
  assert.equal(past.body.query, "longr", "no query of 301 characters is echoed");
  // The edit: the links' `k=laptop` spelled `k=Laptop`; "laptop" was asked, the same words.
  rig.fake.page("https://www.amazon.com/s?k=laptop", { html: searchingFor(page, "Laptop") });
  const cased = await rig.call("/v1/products/search?query=laptop");
  assert.equal(cased.status, 200, JSON.stringify(cased.body).slice(0, 300));
  assert.equal(cased.body.query, "laptop");
});

Deno.test("a category page whose links carry an alias that is no alias keeps the category asked for, never that text", async () => {
  await using rig = await startRig();
  // The edit: the links' alias `computers-intl-ship` written `computers.intl.ship`, which no
  // alias is (probe EU: page text becomes a label only when it is a well-formed id).
  const garbled = everywhere(
    await fixture(CATEGORY),
    "i=computers-intl-ship",
    "i=computers.intl.ship",
  );
  rig.fake.page("https://www.amazon.com/s?i=electronics", { html: garbled });
  const r = await rig.call("/v1/products/category?category_id=electronics");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.category_id, "electronics");
  // And without a department path to label it with, the alias text itself is not echoed.
  const pathless = everywhere(garbled, 'id="n/13896617011"', 'id="n/x y"');
  rig.fake.page("https://www.amazon.com/s?i=software", { html: pathless });
  const bare = await rig.call("/v1/products/category?category_id=software");
  assert.equal(bare.status, 200, JSON.stringify(bare.body).slice(0, 300));
  assert.equal(bare.body.category_id, "software");
});

/**
 * Kept sections by id (parsers/sections.ts). Pages repeat ids: the metascraper book and Kindle
 * pages hold three `#detailBullets_feature_div` elements, the rank row in one after the first, so
 * `byIds` gives every element of an id, not only the first. A tag that repeats an attribute has
 * the first one's value, as HTML says (the tokenizer drops later duplicates).
 */
import assert from "node:assert/strict";
import { parseProduct } from "../parsers/product.ts";
import { byId, byIds, captureSections } from "../parsers/sections.ts";
import { text } from "../parsers/dom.ts";
import { fixture, fixtureMarketplace } from "./fixture.ts";

async function product(name: string) {
  return parseProduct(await fixture(name), { marketplace: fixtureMarketplace(name) });
}

Deno.test("product_facts: the rank row of a later element with a repeated detail-section id is read", async () => {
  // amazon.com Kindle page: "Best Sellers Rank: #41,328 in Kindle Store (See Top 100 in Kindle
  // Store) #41 in Political Fiction (Kindle Store) #118 in Political Fiction (Books) #264 in
  // International Mystery & Crime (Kindle Store)", in a #detailBullets_feature_div after the first.
  const kindle = await product("product/amazon.com__metascraper-kindle-B0011UCPM4.html");
  assert.equal(
    kindle.product_facts["Best Sellers Rank"],
    "#41,328 in Kindle Store (See Top 100 in Kindle Store) #41 in Political Fiction (Kindle Store) " +
      "#118 in Political Fiction (Books) #264 in International Mystery & Crime (Kindle Store)",
  );
  assert.deepEqual(kindle.bestsellers_rank, [
    { rank: 41328, category: "Kindle Store" },
    { rank: 41, category: "Political Fiction (Kindle Store)" },
    { rank: 118, category: "Political Fiction (Books)" },
    { rank: 264, category: "International Mystery & Crime (Kindle Store)" },
  ]);
  // amazon.co.uk book: "Best Sellers Rank: 929,084 in Books (See Top 100 in Books) 4,687 in …".
  const book = await product("product/amazon.co.uk__metascraper-book-1849757097.html");
  assert.equal(
    book.product_facts["Best Sellers Rank"],
    "929,084 in Books (See Top 100 in Books) 4,687 in Vegetarian & Vegan Cooking " +
      "6,832 in Quick & Easy Meals 132,507 in Home & Garden (Books)",
  );
  assert.equal(book.bestsellers_rank.length, 4);
});

Deno.test("captureSections(): byIds gives every kept element of each id, in page order, ids in the order asked", () => {
  const c = captureSections(
    `<body><div id="b">B1</div><div id="a">A1</div><p>x</p><div id="a">A2</div>` +
      `<div id="b">B2</div><div id="c">C</div></body>`,
    { ids: new Set(["a", "b"]) },
  );
  assert.deepEqual(byIds(c, ["a", "b", "c"]).map((el) => text(el)), ["A1", "A2", "B1", "B2"]);
  assert.equal(text(byId(c, "a")), "A1");
});

Deno.test("captureSections(): a repeated attribute has its first value, in kept sections and in watched tags", () => {
  const seen: Record<string, string>[] = [];
  const c = captureSections(
    `<form id="addToCart"><input type="hidden" id="ASIN" name="ASIN" value="B0011UCPM4" ` +
      `value="B000000000"></form><meta name="keywords" content="first" content="second">`,
    { ids: new Set(["addToCart"]), tags: new Set(["meta"]), onTag: (_, a) => seen.push(a) },
  );
  assert.equal(byId(c, "ASIN")?.attribs.value, "B0011UCPM4");
  assert.deepEqual(seen, [{ name: "keywords", content: "first" }]);
});

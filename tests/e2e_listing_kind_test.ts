/**
 * A category's or a seller storefront's answer is the listing its page pages through (its
 * pagination links: `k`, `me`, `i`, `rh`), not the one asked for (probe ES): a keyword search's
 * page, or another kind of listing, is an uncharged 502; another seller's storefront is labelled
 * with that seller, and a page of another alias with the category it shows.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { fixture, searchingFor } from "./fixture.ts";

const SEARCH = "search/amazon.com__alaa-laptop.html"; // links: /s?k=laptop&page=N
const OLD_SEARCH = "search/amazon.de__amznscrp-plastikfrei-flasche.html"; // rh=i:aps,k:…
const CATEGORY = "category/amazon.com__azza-rh-n16225007011-n13896617011.html"; // i=computers-intl-ship
const STOREFRONT = "seller_products/amazon.com__app-storefront-A2DP2EEPU3VU45.html"; // me=A2DP2EEPU3VU45

Deno.test("a keyword search's or another listing's page answered as a storefront or a category is an uncharged 502", async () => {
  await using rig = await startRig();
  const cases: [string, string, string, RegExp][] = [
    [
      "/s?me=A1B2C3D4E5F6G7",
      SEARCH,
      "/v1/sellers/products?seller_id=A1B2C3D4E5F6G7",
      /keyword search's page instead of a seller's storefront/,
    ],
    [
      "/s?me=A1B2C3D4E5F6G8",
      CATEGORY,
      "/v1/sellers/products?seller_id=A1B2C3D4E5F6G8",
      /category listing's page instead of a seller's storefront/,
    ],
    [
      "/s?rh=n:283155",
      SEARCH,
      "/v1/products/category?category_id=283155",
      /keyword search's page instead of a category listing/,
    ],
    [
      "/s?i=stripbooks",
      SEARCH,
      "/v1/products/category?category_id=stripbooks",
      /keyword search's page instead of a category listing/,
    ],
    [
      "/s?rh=n:283156",
      STOREFRONT,
      "/v1/products/category?category_id=283156",
      /seller's storefront's page instead of a category listing/,
    ],
    // And a search answered with a category's or a storefront's page (probe FD).
    [
      "/s?k=catpage",
      CATEGORY,
      "/v1/products/search?query=catpage",
      /category listing's page instead of a keyword search/,
    ],
    [
      "/s?k=storepage",
      STOREFRONT,
      "/v1/products/search?query=storepage",
      /seller's storefront's page instead of a keyword search/,
    ],
  ];
  for (const [url, page, call, message] of cases) {
    rig.fake.page(`https://www.amazon.com${url}`, page);
    const r = await rig.call(call);
    assert.equal(r.status, 502, `${call}: ${JSON.stringify(r.body).slice(0, 300)}`);
    assert.match((r.body.error as { message: string }).message, message, call);
    assert.equal(r.headers.get("x-credits-cost"), "0", call);
  }
  rig.fake.page("https://www.amazon.de/s?rh=n:64187031", OLD_SEARCH);
  const old = await rig.call("/v1/products/category?category_id=64187031&marketplace=DE");
  assert.equal(old.status, 502, JSON.stringify(old.body).slice(0, 300));
  assert.equal((await rig.call("/v1/usage")).body.requests_used, 0);
});

Deno.test("a storefront is labelled with the seller its page shows; a category with the one its page shows", async () => {
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/s?me=A1B2C3D4E5F6G7", STOREFRONT);
  const other = await rig.call("/v1/sellers/products?seller_id=A1B2C3D4E5F6G7");
  assert.equal(other.status, 200, JSON.stringify(other.body).slice(0, 300));
  assert.equal(other.body.seller_id, "A2DP2EEPU3VU45");
  assert.ok((other.body.count as number) > 0);
  rig.fake.page("https://www.amazon.com/s?me=A2DP2EEPU3VU45", STOREFRONT);
  const own = await rig.call("/v1/sellers/products?seller_id=A2DP2EEPU3VU45");
  assert.equal(own.body.seller_id, "A2DP2EEPU3VU45");
  // A slug whose page pages through another alias: the node its department path ends at.
  rig.fake.page("https://www.amazon.com/s?i=stripbooks", CATEGORY);
  const slug = await rig.call("/v1/products/category?category_id=stripbooks");
  assert.equal(slug.status, 200, JSON.stringify(slug.body).slice(0, 300));
  assert.equal(slug.body.category_id, "13896617011");
  rig.fake.page("https://www.amazon.com/s?i=computers-intl-ship", CATEGORY);
  const same = await rig.call("/v1/products/category?category_id=computers-intl-ship");
  assert.equal(same.body.category_id, "computers-intl-ship");
});

Deno.test("labels from a page are well-formed ids, tested before their case is changed (probe EU)", async () => {
  await using rig = await startRig();
  // A department step whose id is page text: no path, and the label asked for.
  const hostile = (await fixture(CATEGORY)).replace(
    'id="n/13896617011"',
    'id="n/ZZ Call +1-800-555-0199 <img src=x onerror=alert(1)>"',
  );
  rig.fake.page("https://www.amazon.com/s?rh=n:2335752012", { html: hostile });
  const node = await rig.call("/v1/products/category?category_id=2335752012");
  assert.equal(node.status, 200, JSON.stringify(node.body).slice(0, 300));
  assert.equal(node.body.category_id, "2335752012");
  assert.deepEqual(node.body.breadcrumb, []);
  // "ﬀ" upper-cases to "FF": a seller the page never names.
  const ligature = (await fixture(STOREFRONT)).replaceAll(
    "me=A2DP2EEPU3VU45",
    "me=A2DP2EEPU3VU\ufb00",
  );
  rig.fake.page("https://www.amazon.com/s?me=A1B2C3D4E5F6G7", { html: ligature });
  const seller = await rig.call("/v1/sellers/products?seller_id=A1B2C3D4E5F6G7");
  assert.equal(seller.status, 200, JSON.stringify(seller.body).slice(0, 300));
  assert.equal(seller.body.seller_id, "A1B2C3D4E5F6G7");
  // An alias in another case is the same alias.
  rig.fake.page(
    "https://www.amazon.in/s?i=Electronics",
    "search/amazon.in__vedant-rh-n6612025031.html",
  );
  const cased = await rig.call("/v1/products/category?category_id=Electronics&marketplace=IN");
  assert.equal(cased.status, 200, JSON.stringify(cased.body).slice(0, 300));
  assert.equal(cased.body.category_id, "Electronics");
});

Deno.test("a search is labelled with the words its page's links search, when they are not the ones asked for (probe FD)", async () => {
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/s?k=otherq", SEARCH); // its links search "laptop"
  const other = await rig.call("/v1/products/search?query=otherq");
  assert.equal(other.status, 200, JSON.stringify(other.body).slice(0, 300));
  assert.equal(other.body.query, "laptop");
  // Echoed as the links spell them, up to the longest query a search takes (probe FF).
  const spelled = (await fixture(SEARCH)).replaceAll("k=laptop", "k=Laptop+Pro");
  rig.fake.page("https://www.amazon.com/s?k=mixedq", { html: spelled });
  assert.equal((await rig.call("/v1/products/search?query=mixedq")).body.query, "Laptop Pro");
  const long = "a".repeat(250);
  rig.fake.page("https://www.amazon.com/s?k=longq", {
    html: (await fixture(SEARCH)).replaceAll("k=laptop", `k=${long}`),
  });
  assert.equal((await rig.call("/v1/products/search?query=longq")).body.query, long);
  // The words asked for, in another case or spacing, are the same words.
  rig.fake.page("https://www.amazon.com/s?k=Laptop", SEARCH);
  const same = await rig.call("/v1/products/search?query=%20Laptop");
  assert.equal(same.body.query, "Laptop");
  // An older layout's words, in a `k:` step of `rh`.
  rig.fake.page("https://www.amazon.de/s?k=flaschen", OLD_SEARCH);
  const old = await rig.call("/v1/products/search?query=flaschen&marketplace=DE");
  assert.equal(old.body.query, "plastikfrei flasche");
});

Deno.test("gtin-to-asin takes only a search for the GTIN: a storefront's, a category's or other words' page is an uncharged 502 (probe FH)", async () => {
  await using rig = await startRig();
  const cases: [string, string][] = [
    ["0012345678905", STOREFRONT],
    ["0012345678912", CATEGORY],
    ["0012345678929", SEARCH], // its links search "laptop"
    ["00000000", SEARCH], // no digits but zeros, as "laptop" has none (probe FI)
  ];
  for (const [gtin, page] of cases) {
    rig.fake.page(`https://www.amazon.com/s?k=${gtin}`, page);
    const r = await rig.call(`/v1/utility/gtin-to-asin?gtin=${gtin}`);
    assert.equal(r.status, 502, `${gtin}: ${JSON.stringify(r.body).slice(0, 300)}`);
    assert.equal(r.headers.get("x-credits-cost"), "0", gtin);
  }
  // Words whose digits spell the GTIN are another search all the same (probe FI).
  rig.fake.page("https://www.amazon.com/s?k=12345670", {
    html: searchingFor(await fixture(SEARCH), "laptop case 12345670"),
  });
  const spelled = await rig.call("/v1/utility/gtin-to-asin?gtin=12345670");
  assert.equal(spelled.status, 502, JSON.stringify(spelled.body).slice(0, 300));
  assert.equal((await rig.call("/v1/usage")).body.requests_used, 0);
  assert.equal(rig.fake.pageRequests("/dp/"), 0, "no result's page looked at");
});

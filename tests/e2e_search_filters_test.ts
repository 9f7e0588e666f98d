/**
 * What a listing's page shows decides what its answer says (probe EM): results outside the price
 * range asked for are left out, a page marking no result as Prime cannot answer `prime_only`
 * where it is applied after parsing, and a category page of another node is labelled with its
 * own. The sort a page shows is checked in e2e_upstream_urls_test.ts.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { asResultsPage, fixture, onSite } from "./fixture.ts";

Deno.test("search: results whose price is outside min_price–max_price are left out", async () => {
  await using rig = await startRig();
  // Its 16 results cost $15.99 to $1,049: a page that ignored the range asked for.
  rig.fake.page(
    "https://www.amazon.com/s?k=ipad&rh=p_36:20000-60000",
    "search/amazon.com__pavel-ipad-pro.html",
  );
  const r = await rig.call("/v1/products/search?query=ipad&min_price=200&max_price=600");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  const amounts = (r.body.results as { price: { amount: number } | null }[])
    .map((x) => x.price?.amount);
  assert.ok(amounts.length > 0 && amounts.length < 16, `${amounts.length} results`);
  assert.ok(amounts.every((a) => a === undefined || (a >= 200 && a <= 600)), `${amounts}`);
  assert.deepEqual(
    (r.body.results as { position: number }[]).map((x) => x.position),
    amounts.map((_, i) => i + 1),
  );
});

Deno.test("search: prime_only off the US on a page marking no result as Prime is an uncharged 502, not an empty answer", async () => {
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.fr/s?k=headphones", "search/amazon.fr__imen-headphones.html");
  const r = await rig.call("/v1/products/search?query=headphones&marketplace=FR&prime_only=true");
  assert.equal(r.status, 502, JSON.stringify(r.body).slice(0, 300));
  assert.match((r.body.error as { message: string }).message, /marks no result as Prime/);
  assert.equal(r.headers.get("x-credits-cost"), "0");
  // The DE page marks its Prime results: those are kept.
  rig.fake.page(
    "https://www.amazon.de/s?k=katzenfutter",
    "search/amazon.de__parsy-katzenfutter.html",
  );
  const de = await rig.call(
    "/v1/products/search?query=katzenfutter&marketplace=DE&prime_only=true",
  );
  assert.equal(de.status, 200, JSON.stringify(de.body).slice(0, 300));
  assert.ok((de.body.results as { prime: boolean }[]).every((x) => x.prime));
  assert.ok((de.body.count as number) > 0);
});

Deno.test("category: a page of another node is labelled with the node its department path ends at", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.com/s?rh=n:2335752012",
    "category/amazon.com__azza-rh-n16225007011-n13896617011.html",
  );
  const r = await rig.call("/v1/products/category?category_id=2335752012");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.category_id, "13896617011");
  // The node asked for on its path: labelled as asked.
  rig.fake.page(
    "https://www.amazon.com/s?rh=n:16225007011",
    "category/amazon.com__azza-rh-n16225007011-n13896617011.html",
  );
  const parent = await rig.call("/v1/products/category?category_id=16225007011");
  assert.equal(parent.body.category_id, "16225007011");
});

Deno.test("search: the price range is applied in the marketplace's own money only, and a limit search of pages keeping nothing ends (probe EN)", async () => {
  await using rig = await startRig();
  // amazon.com shown in Egyptian pounds: EGP 2,286 to 80,569, about $46 to $1,650. The corpus's
  // page is a category's: its pagination links are made a search's (upstream/listing_shown.ts).
  const grid = (await fixture("category/amazon.com__azza-rh-n16225007011-n13896617011.html"))
    .replaceAll(
      "i=computers-intl-ship&amp;bbn=16225007011&amp;rh=n%3A16225007011%2Cn%3A13896617011",
      "k=computer",
    );
  rig.fake.page("https://www.amazon.com/s?k=computer&rh=p_36:0-200000", { html: grid });
  const egp = await rig.call("/v1/products/search?query=computer&min_price=0&max_price=2000");
  assert.equal(egp.status, 200, JSON.stringify(egp.body).slice(0, 300));
  assert.equal(egp.body.count, 33);
  // The same in won, a code the price parser does not name: still not dollars (probe EP).
  const krw = grid.replaceAll("EGP", "KRW");
  rig.fake.page("https://www.amazon.com/s?k=pc&rh=p_36:0-200000", { html: krw });
  const won = await rig.call("/v1/products/search?query=pc&min_price=0&max_price=2000");
  assert.equal(won.body.count, 33);
  // Or in a dollar with letters before it, which the parser does not name either (probe EQ).
  const hk = onSite(grid.replaceAll("EGP", "HK$"), "DE");
  rig.fake.page("https://www.amazon.de/s?k=pc&rh=p_36:0-200000", { html: hk });
  const hkd = await rig.call(
    "/v1/products/search?query=pc&marketplace=DE&min_price=0&max_price=2000",
  );
  assert.equal(hkd.body.count, 33);
  // Pages that ignore the range asked for ($15.99 to $1,049 for at least $2,000).
  const html = await fixture("search/amazon.com__pavel-ipad-pro.html");
  for (let p = 1; p <= 30; p++) {
    rig.fake.page(`https://www.amazon.com/s?k=ipad&rh=p_36:200000-${p > 1 ? `&page=${p}` : ""}`, {
      html: asResultsPage(html, p),
    });
  }
  const r = await rig.call("/v1/products/search?query=ipad&min_price=2000&limit=50");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.count, 0);
  assert.equal(r.body.has_next_page, true);
  // The three pages read: after a page keeping none, further pages go one at a time (probe EO).
  assert.equal(r.headers.get("x-credits-cost"), "3");
  // A price whose currency is not read is taken in the marketplace's money (probe EO: an unread
  // yen sign let every result past max_price).
  rig.fake.page(
    "https://www.amazon.co.jp/s?k=iphone&rh=p_36:-1000",
    "search/amazon.co.jp__hjzdm-iphone-utf16.html",
  );
  const jp = await rig.call("/v1/products/search?query=iphone&marketplace=JP&max_price=10");
  assert.equal(jp.status, 200, JSON.stringify(jp.body).slice(0, 300));
  const prices = (jp.body.results as { price: { amount: number; currency: string } | null }[])
    .map((x) => x.price);
  assert.ok(prices.every((p) => p === null || p.amount <= 10), JSON.stringify(prices.slice(0, 3)));
});

Deno.test("search: min_price and max_price are inclusive; a result priced exactly at either bound is kept", async () => {
  await using rig = await startRig();
  // Its results include $199.00 and $599.00 exactly, and $176.41 and $619.95 just outside.
  rig.fake.page(
    "https://www.amazon.com/s?k=ipad&rh=p_36:19900-59900",
    "search/amazon.com__pavel-ipad-pro.html",
  );
  const r = await rig.call("/v1/products/search?query=ipad&min_price=199&max_price=599");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  const amounts = (r.body.results as { price: { amount: number } | null }[])
    .map((x) => x.price?.amount);
  assert.deepEqual(
    amounts.filter((a) => a !== undefined).sort((a, b) => a! - b!),
    [199, 204, 290, 378, 399.99, 547, 599],
  );
});

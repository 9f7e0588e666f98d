/**
 * The upstream URL of every parameter (upstream/README.md), checked through real HTTP: the fake
 * marketplace serves a corpus page only at the exact URL the README names, so a call that asks
 * Amazon for anything else gets the marketplace's 404 and fails the test. Covers every search
 * sort, the price filter in hundredths, the Prime refinement (in the URL on US, applied to the
 * parsed results elsewhere), departments, the review filters, first and further pages of every
 * paginated endpoint, browse nodes against slugs, and the marketplace's host (issue 18).
 */
import assert from "node:assert/strict";
import { type Rig, startRig } from "./upstream_harness.ts";
import { asResultsPage, fixture } from "./fixture.ts";
import { SELLER_PROFILE_PAGE } from "./handbuilt_pages.ts";

const SEARCH = "search/amazon.com__pricechecker-portable-charger.html";
const SEARCH_DE = "search/amazon.de__parsy-katzenfutter.html";
const REVIEWS = "reviews/amazon.com__metaagent-dawn-B0BBPNPZTC.html";
const BEST = "bestsellers/amazon.com__parsy-zgbs-hi.html";

/** Serves `page` at `upstream` only, calls `path`, and says which upstream paths were asked. */
async function asks(rig: Rig, path: string, upstream: string, page: string | { html: string }) {
  rig.fake.page(upstream, page);
  const before = rig.fake.requests.length;
  const r = await rig.call(path);
  const asked = rig.fake.requests.slice(before).map((q) => `${q.host}${q.path}`);
  assert.equal(r.status, 200, `${path} asked for ${asked.join(", ")}: ${JSON.stringify(r.body)}`);
  return r.body;
}

Deno.test("search: every sort, the price filter in hundredths, departments, and further pages reach Amazon's own parameters", async () => {
  await using rig = await startRig({ plan: "scale" });
  const sorts: Record<string, string> = {
    relevance: "relevanceblender",
    price_asc: "price-asc-rank",
    price_desc: "price-desc-rank",
    rating: "review-rank",
    newest: "date-desc-rank",
    bestseller: "exact-aware-popularity-rank",
  };
  const page = await fixture(SEARCH);
  for (const [sort, key] of Object.entries(sorts)) {
    // The page in that order: its sort menu has the key selected.
    const sorted = page.replace(/(selected="" value=")relevanceblender"/, `$1${key}"`);
    assert.notEqual(sorted === page, key !== "relevanceblender");
    const body = await asks(
      rig,
      `/v1/products/search?query=tea&sort=${sort}`,
      `https://www.amazon.com/s?k=tea&s=${key}`,
      { html: sorted },
    );
    assert.equal(body.sort, sort);
  }
  // A page in another order than asked is answered as the order it is in (probe EM).
  const unsorted = await asks(
    rig,
    "/v1/products/search?query=mug&sort=price_asc",
    "https://www.amazon.com/s?k=mug&s=price-asc-rank",
    SEARCH,
  );
  assert.equal(unsorted.sort, "relevance");
  await asks(
    rig,
    "/v1/products/search?query=tea&min_price=10&max_price=50.5",
    "https://www.amazon.com/s?k=tea&rh=p_36:1000-5050",
    SEARCH,
  );
  await asks(
    rig,
    "/v1/products/search?query=tea&min_price=0.99",
    "https://www.amazon.com/s?k=tea&rh=p_36:99-",
    SEARCH,
  );
  await asks(
    rig,
    "/v1/products/search?query=tea&max_price=20",
    "https://www.amazon.com/s?k=tea&rh=p_36:-2000",
    SEARCH,
  );
  await asks(
    rig,
    "/v1/products/search?query=tea&department=grocery",
    "https://www.amazon.com/s?k=tea&i=grocery",
    SEARCH,
  );
  // Page 1 is the URL a browser shows, with no page parameter; further pages carry it.
  const first = await asks(
    rig,
    "/v1/products/search?query=mug&page=1",
    "https://www.amazon.com/s?k=mug",
    SEARCH,
  );
  assert.equal(first.page, 1);
  const third = await asks(
    rig,
    "/v1/products/search?query=mug&page=3",
    "https://www.amazon.com/s?k=mug&page=3",
    { html: asResultsPage(await fixture(SEARCH), 3) }, // a page 3, as the answer is labelled
  );
  assert.equal(third.page, 3);
});

Deno.test("prime_only: Amazon's refinement in the URL on US, the parsed results filtered elsewhere", async () => {
  await using rig = await startRig({ plan: "scale" });
  await asks(
    rig,
    "/v1/products/search?query=tea&prime_only=true&min_price=5&max_price=6",
    "https://www.amazon.com/s?k=tea&rh=p_36:500-600,p_85:2470955011",
    SEARCH,
  );
  const all = await asks(
    rig,
    "/v1/products/search?query=katzenfutter&marketplace=DE",
    "https://www.amazon.de/s?k=katzenfutter",
    SEARCH_DE,
  );
  const prime = await asks(
    rig,
    "/v1/products/search?query=katzenfutter&marketplace=de&prime_only=true",
    "https://www.amazon.de/s?k=katzenfutter",
    SEARCH_DE,
  );
  const results = prime.results as { prime: boolean; asin: string }[];
  const allResults = all.results as { prime: boolean; asin: string }[];
  assert.ok(
    results.length > 0 && results.length < allResults.length,
    `${results.length} of ${allResults.length}`,
  );
  assert.ok(results.every((r) => r.prime));
  assert.deepEqual(
    results.map((r) => r.asin),
    allResults.filter((r) => r.prime).map((r) => r.asin),
  );
  assert.equal(prime.marketplace, "DE");
});

Deno.test("reviews: star, sort, verified_only and further pages become Amazon's review filters", async () => {
  await using rig = await startRig({ plan: "scale" });
  await asks(
    rig,
    "/v1/products/reviews?asin=B0BBPNPZTC",
    "https://www.amazon.com/product-reviews/B0BBPNPZTC",
    REVIEWS,
  );
  const stars: Record<string, string> = {
    all: "all_stars",
    five: "five_star",
    four: "four_star",
    three: "three_star",
    two: "two_star",
    one: "one_star",
  };
  for (const [star, key] of Object.entries(stars)) {
    await asks(
      rig,
      `/v1/products/reviews?asin=B0BBPNPZTC&star=${star}`,
      `https://www.amazon.com/product-reviews/B0BBPNPZTC?filterByStar=${key}`,
      REVIEWS,
    );
  }
  await asks(
    rig,
    "/v1/products/reviews?asin=B0BBPNPZTC&sort=recent&verified_only=true&page=2",
    "https://www.amazon.com/product-reviews/B0BBPNPZTC?sortBy=recent&reviewerType=avp_only_reviews&pageNumber=2",
    REVIEWS,
  );
  await asks(
    rig,
    "/v1/products/reviews?asin=B0BBPNPZTC&sort=helpful",
    "https://www.amazon.com/product-reviews/B0BBPNPZTC?sortBy=helpful",
    REVIEWS,
  );
});

Deno.test("best sellers, category and seller storefront: first and further pages, browse nodes and slugs", async () => {
  await using rig = await startRig({ plan: "scale" });
  await asks(rig, "/v1/bestsellers?category=hi", "https://www.amazon.com/gp/bestsellers/hi", BEST);
  const second = await asks(
    rig,
    "/v1/bestsellers?category=hi&page=2",
    "https://www.amazon.com/gp/bestsellers/hi?pg=2",
    BEST,
  );
  assert.equal(second.category !== undefined, true);
  await asks(rig, "/v1/bestsellers", "https://www.amazon.com/gp/bestsellers", BEST);
  // A tree node as /v1/utility/categories lists it.
  await asks(
    rig,
    "/v1/bestsellers?category=hi/552684",
    "https://www.amazon.com/gp/bestsellers/hi/552684",
    BEST,
  );
  // The search page, its pagination links made those of each listing (upstream/listing_shown.ts).
  const html = await fixture(SEARCH);
  const listing = (param: string) => ({ html: html.replaceAll("k=portable+charger", param) });
  await asks(
    rig,
    "/v1/products/category?category_id=172282",
    "https://www.amazon.com/s?rh=n:172282",
    listing("rh=n%3A172282"),
  );
  const node = await asks(
    rig,
    "/v1/products/category?category_id=172282&page=2&sort=price-asc-rank",
    "https://www.amazon.com/s?rh=n:172282&s=price-asc-rank&page=2",
    listing("rh=n%3A172282"),
  );
  assert.equal(node.category_id, "172282");
  await asks(
    rig,
    "/v1/products/category?category_id=electronics",
    "https://www.amazon.com/s?i=electronics",
    listing("i=electronics"),
  );
  await asks(
    rig,
    "/v1/sellers/products?seller_id=A2DP2EEPU3VU45",
    "https://www.amazon.com/s?me=A2DP2EEPU3VU45",
    listing("me=A2DP2EEPU3VU45"),
  );
  const seller = await asks(
    rig,
    "/v1/sellers/products?seller_id=A2DP2EEPU3VU45&page=4",
    "https://www.amazon.com/s?me=A2DP2EEPU3VU45&page=4",
    { html: asResultsPage(listing("me=A2DP2EEPU3VU45").html, 4) },
  );
  assert.equal(seller.page, 4);
  assert.equal(seller.seller_id, "A2DP2EEPU3VU45");
});

Deno.test("seller profile: asks Amazon for /sp?seller=<id>, the profile page itself", async () => {
  await using rig = await startRig({ plan: "scale" });
  const body = await asks(
    rig,
    "/v1/sellers/profile?seller_id=A1EXAMPLE7SELLER",
    "https://www.amazon.com/sp?seller=A1EXAMPLE7SELLER",
    { html: SELLER_PROFILE_PAGE },
  );
  assert.equal(body.seller_id, "A1EXAMPLE7SELLER");
});

Deno.test("search: a price in hundredths is rounded to the nearest, not cut (19.99 is 1999, as 19.99 * 100 is 1998.99…)", async () => {
  await using rig = await startRig({ plan: "scale" });
  await asks(
    rig,
    "/v1/products/search?query=tea&min_price=19.99&max_price=29.99",
    "https://www.amazon.com/s?k=tea&rh=p_36:1999-2999",
    SEARCH,
  );
  await asks(
    rig,
    "/v1/products/search?query=tea&min_price=0.29",
    "https://www.amazon.com/s?k=tea&rh=p_36:29-",
    SEARCH,
  );
});

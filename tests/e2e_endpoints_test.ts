/**
 * Every endpoint that has a corpus page, end to end over real HTTP: gateway → upstream source →
 * browser transport → fake marketplace (`origin:`) → parser → a 200 whose body the endpoint's
 * response schema accepts, charged what the spec says.
 */
import { judgeReviews } from "../upstream/reviews_answer.ts";
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { fixture, onSite, searchingFor } from "./fixture.ts";
import { DATA_ENDPOINTS } from "../schemas/endpoints.ts";

function schemaOf(path: string) {
  return DATA_ENDPOINTS.find((e) => e.path === path)!.response;
}

async function expectValid(rig: Awaited<ReturnType<typeof startRig>>, call: string, cost = "1") {
  const r = await rig.call(call);
  assert.equal(r.status, 200, `${call}: ${JSON.stringify(r.body).slice(0, 300)}`);
  assert.equal(r.headers.get("x-credits-cost"), cost);
  const path = call.split("?")[0];
  const checked = schemaOf(path).safeParse(r.body);
  assert.ok(checked.success, `${call} fails its schema`);
  // deno-lint-ignore no-explicit-any -- the tests read the answers' fields freely
  return r.body as Record<string, any>;
}

Deno.test("search returns the corpus page's results with the request's fields", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.de/s?k=katzenfutter&s=price-asc-rank",
    "search/amazon.de__parsy-katzenfutter.html",
  );
  const body = await expectValid(
    rig,
    "/v1/products/search?query=katzenfutter&marketplace=DE&sort=price_asc",
  );
  assert.equal(body.query, "katzenfutter");
  // The page's sort menu shows it in relevance order: so says the answer (probe EM).
  assert.equal(body.sort, "relevance");
  assert.equal(body.marketplace, "DE");
  assert.equal(body.page, 1);
  assert.equal(body.count, 60);
  assert.equal(body.results.length, 60);
  assert.ok(
    body.results.every((r: { url: string }) => r.url.startsWith("https://www.amazon.de/dp/")),
  );
  assert.deepEqual(body.results.map((r: { position: number }) => r.position).slice(0, 3), [
    1,
    2,
    3,
  ]);
});

Deno.test("search with include_sponsored=false drops sponsored placements", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.de/s?k=katzenfutter",
    "search/amazon.de__parsy-katzenfutter.html",
  );
  const body = await expectValid(
    rig,
    "/v1/products/search?query=katzenfutter&marketplace=DE&include_sponsored=false",
  );
  assert.equal(body.count, 48);
  assert.ok(body.results.every((r: { sponsored: boolean }) => !r.sponsored));
});

Deno.test("details of a product page", async () => {
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  const body = await expectValid(rig, "/v1/products/details?asin=B07H57DNVV");
  assert.equal(body.asin, "B07H57DNVV");
  assert.equal(body.title, "Anthem Of The Peaceful Army");
});

Deno.test("details carry no control characters that a page puts in its text", async () => {
  await using rig = await startRig();
  const html = (await fixture("product/amazon.com__app-B07H57DNVV.html"))
    .replaceAll("Anthem Of The Peaceful Army", "Anthem\x00 Of\x1b[31m The\x07 Peaceful\x9b Army");
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", { html });
  const body = await expectValid(rig, "/v1/products/details?asin=B07H57DNVV");
  assert.equal(body.title, "Anthem Of[31m The Peaceful Army");
  const controls: string[] = [];
  JSON.stringify(body, (_k, v) => {
    // deno-lint-ignore no-control-regex -- the characters this test looks for
    if (typeof v === "string" && /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/.test(v)) controls.push(v);
    return v;
  });
  assert.deepEqual(controls, []);
});

Deno.test("offers from the all-offers-display fragment", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.com/gp/product/ajax/?asin=B0BN72FYFG&pc=dp&experienceId=aodAjaxMain",
    "offers/amazon.com__wk-aod-main-B0BN72FYFG.html",
  );
  const body = await expectValid(rig, "/v1/products/offers?asin=B0BN72FYFG");
  assert.equal(body.asin, "B0BN72FYFG");
  assert.equal(body.url, "https://www.amazon.com/dp/B0BN72FYFG");
  assert.ok(body.count > 0);
  assert.equal(body.count, body.offers.length);
});

Deno.test("reviews: reviews, summary, and a note when a star filter could not be applied", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.com/product-reviews/B0BBPNPZTC",
    "reviews/amazon.com__metaagent-dawn-B0BBPNPZTC.html",
  );
  rig.fake.page(
    "https://www.amazon.com/product-reviews/B0BBPNPZTC?filterByStar=one_star",
    "reviews/amazon.com__metaagent-dawn-B0BBPNPZTC.html",
  );
  const plain = await expectValid(rig, "/v1/products/reviews?asin=B0BBPNPZTC");
  assert.equal(plain.count, 10);
  assert.equal(plain.authenticated, false);
  assert.equal(plain.filters_applied, false);
  assert.equal(plain.note, null);

  const filtered = await expectValid(rig, "/v1/products/reviews?asin=B0BBPNPZTC&star=one");
  assert.equal(filtered.filters_applied, false);
  assert.match(filtered.note, /star=one could not be applied/);
});

Deno.test("reviews: a page that states the page number asked for (its canonical link) is that page, signed in or not", async () => {
  await using rig = await startRig();
  // Its head: <link rel="canonical" href="…/product-reviews/B0BN72FYFG?pageNumber=10" />.
  const p10 = "reviews/amazon.com__wk-B0BN72FYFG-p10.html";
  rig.fake.page("https://www.amazon.com/product-reviews/B0BN72FYFG?pageNumber=10", p10);
  rig.fake.page("https://www.amazon.com/product-reviews/B0BN72FYFG?pageNumber=3", p10);
  const ten = await expectValid(rig, "/v1/products/reviews?asin=B0BN72FYFG&page=10");
  assert.equal(ten.authenticated, false);
  assert.equal(ten.page, 10);
  assert.equal(ten.note, null);
  assert.equal(ten.filters_applied, true);
  // The same page answered for page 3 states page 10: page 3 was not applied, and the answer is
  // the page it states.
  const three = await expectValid(rig, "/v1/products/reviews?asin=B0BN72FYFG&page=3");
  assert.equal(three.page, 10);
  assert.match(three.note, /page 3 could not be applied/);
  // Answered for page 1, it is page 10 all the same, and says so (probe DP: labelled page 1).
  rig.fake.page("https://www.amazon.com/product-reviews/B0BN72FYFG", p10);
  const one = await expectValid(rig, "/v1/products/reviews?asin=B0BN72FYFG");
  assert.equal(one.page, 10);
  assert.equal(one.note, "The marketplace answered page 10 of the reviews.");
});

Deno.test("reviews are authenticated only with an operator-supplied session cookie", async () => {
  await using rig = await startRig({
    env: { UPSTREAM_COOKIES_US: "at-main=signed-in-token; sess-at-main=x" },
  });
  // A page read signed in ("Hello, Waseem"): a visitor's page says the session did not count.
  rig.fake.page(
    "https://www.amazon.com/product-reviews/B0BN72FYFG?pageNumber=10",
    "reviews/amazon.com__wk-B0BN72FYFG-p10.html",
  );
  const body = await expectValid(rig, "/v1/products/reviews?asin=B0BN72FYFG&page=10");
  assert.equal(body.authenticated, true);
  const sent = rig.fake.requests.find((r) => r.path.startsWith("/product-reviews/"))!;
  assert.match(sent.cookie, /at-main=signed-in-token/);
});

Deno.test("reviews signed in: a sort the page's sort menu contradicts is not applied, whatever its URL kept (probe ES)", async () => {
  await using rig = await startRig({
    env: {
      UPSTREAM_COOKIES_US: "at-main=signed-in-token; sess-at-main=x",
      UPSTREAM_COOKIES_NL: "at-acbnl=signed-in-token; sess-at-acbnl=x",
    },
  });
  // Its sort menu marks no option: it shows the first, "Top reviews" (helpful).
  const top = "reviews/amazon.com__wk-B0BN72FYFG-p10.html";
  rig.fake.page(
    "https://www.amazon.com/product-reviews/B0BN72FYFG?sortBy=recent&pageNumber=10",
    top,
  );
  rig.fake.page(
    "https://www.amazon.com/product-reviews/B0BN72FYFG?sortBy=helpful&pageNumber=10",
    top,
  );
  const recent = await expectValid(rig, "/v1/products/reviews?asin=B0BN72FYFG&page=10&sort=recent");
  assert.equal(recent.authenticated, true);
  assert.equal(recent.filters_applied, false);
  assert.match(recent.note, /sort=recent could not be applied/);
  const helpful = await expectValid(
    rig,
    "/v1/products/reviews?asin=B0BN72FYFG&page=10&sort=helpful",
  );
  assert.equal(helpful.filters_applied, true, JSON.stringify(helpful.note));
  // amazon.nl's page marks "Most recent" selected.
  rig.fake.page(
    "https://www.amazon.nl/product-reviews/B08N5WRWNW?sortBy=recent",
    "reviews/amazon.nl__heartquake-nl-B08N5WRWNW.html",
  );
  const nl = await expectValid(
    rig,
    "/v1/products/reviews?asin=B08N5WRWNW&marketplace=NL&sort=recent",
  );
  assert.equal(nl.authenticated, true);
  assert.equal(nl.filters_applied, true, JSON.stringify(nl.note));
});

/** A product page that expires the operator's sign-in cookies, as a marketplace signing out does. */
async function serveSignOut(rig: Awaited<ReturnType<typeof startRig>>): Promise<void> {
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", {
    html: await fixture("product/amazon.com__app-B07H57DNVV.html"),
    headers: [
      ["set-cookie", "at-main=; Domain=.amazon.com; Path=/; Max-Age=0"],
      ["set-cookie", "sess-at-main=; Domain=.amazon.com; Path=/; Max-Age=0"],
    ],
  });
}

Deno.test("reviews are not said to be authenticated once the marketplace has ended the operator's session, and the operator is told", async () => {
  const lines: Record<string, unknown>[] = [];
  await using rig = await startRig({
    env: { UPSTREAM_COOKIES_US: "at-main=signed-in-token; sess-at-main=x" },
    browser: { log: (l) => void lines.push(l) },
  });
  await serveSignOut(rig);
  rig.fake.page(
    "https://www.amazon.com/product-reviews/B0BBPNPZTC",
    "reviews/amazon.com__metaagent-dawn-B0BBPNPZTC.html",
  );
  await expectValid(rig, "/v1/products/details?asin=B07H57DNVV");
  assert.deepEqual(lines.filter((l) => l.event === "upstream_signed_out"), [
    { event: "upstream_signed_out", marketplace: "US" },
  ]);
  const body = await expectValid(rig, "/v1/products/reviews?asin=B0BBPNPZTC");
  const sent = rig.fake.requests.find((r) => r.path.startsWith("/product-reviews/"))!;
  assert.doesNotMatch(sent.cookie, /at-main/);
  assert.equal(body.authenticated, false, "read signed out, and said so");
});

Deno.test("reviews read signed out while the session's cookies were sent are not authenticated, and the operator is told once (probe EH)", async () => {
  const lines: Record<string, unknown>[] = [];
  await using rig = await startRig({
    // The whole header of a browser, as operators paste it: session-id outlives a sign-out.
    env: { UPSTREAM_COOKIES_US: "session-id=123-456; at-main=signed-in-token; sess-at-main=x" },
    browser: { log: (l) => void lines.push(l) },
  });
  // The marketplace answers a visitor's page ("Hello, sign in") though the cookies went with it.
  rig.fake.page(
    "https://www.amazon.com/product-reviews/B0BBPNPZTC?pageNumber=3",
    "reviews/amazon.com__metaagent-dawn-B0BBPNPZTC.html",
  );
  for (let i = 0; i < 2; i++) {
    const body = await expectValid(rig, "/v1/products/reviews?asin=B0BBPNPZTC&page=3");
    assert.equal(body.authenticated, false);
    assert.equal(body.filters_applied, false);
    assert.equal(body.page, 1, "the page it states: its canonical link names no page");
    assert.match(body.note, /page 3 could not be applied/);
  }
  const sent = rig.fake.requests.filter((r) => r.path.startsWith("/product-reviews/"));
  assert.equal(sent.length, 2);
  assert.ok(sent.every((r) => /at-main=signed-in-token/.test(r.cookie)), "the session was sent");
  assert.deepEqual(lines.filter((l) => l.event === "upstream_signed_out"), [
    { event: "upstream_signed_out", marketplace: "US" },
  ]);
});

Deno.test("a session whose sign-in cookies the marketplace ended is signed out, whatever other cookies stay (probe EH)", async () => {
  await using rig = await startRig({
    env: { UPSTREAM_COOKIES_US: "session-id=123-456; at-main=signed-in-token; sess-at-main=x" },
  });
  await serveSignOut(rig);
  // A signed-in page all the same: only the cookies can tell here.
  rig.fake.page(
    "https://www.amazon.com/product-reviews/B0BN72FYFG?pageNumber=10",
    "reviews/amazon.com__wk-B0BN72FYFG-p10.html",
  );
  await expectValid(rig, "/v1/products/details?asin=B07H57DNVV");
  const body = await expectValid(rig, "/v1/products/reviews?asin=B0BN72FYFG&page=10");
  const sent = rig.fake.requests.find((r) => r.path.startsWith("/product-reviews/"))!;
  assert.match(sent.cookie, /session-id=123-456/);
  assert.equal(body.authenticated, false);
});

Deno.test("a reviews page that states its number is the proof of it, whatever the answered URL kept", () => {
  // Signed in, the URL kept pageNumber=3, the page states 5: not applied, and labelled 5 (probe
  // DR: answered as applied).
  const url = "https://www.amazon.com/product-reviews/B0BN72FYFG?pageNumber=3";
  const v = judgeReviews({ page: 3 }, [], url, true, 5);
  assert.deepEqual([v.page, v.filters_applied], [5, false]);
  assert.match(v.note!, /page 3 could not be applied/);
  assert.deepEqual(judgeReviews({ page: 3 }, [], url, true, 3).filters_applied, true);
  assert.deepEqual(judgeReviews({ page: 3 }, [], url, true, null).filters_applied, true);
});

Deno.test("reviews/top gives the rating summary", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.it/product-reviews/B07747FR44",
    "reviews/amazon.it__megascraper-B07747FR44-p1.html",
  );
  const body = await expectValid(rig, "/v1/products/reviews/top?asin=B07747FR44&marketplace=IT");
  assert.equal(body.marketplace, "IT");
  assert.ok(body.summary.total_ratings > 0);
});

Deno.test("bestsellers of a category slug", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.com/gp/bestsellers/hi",
    "bestsellers/amazon.com__parsy-zgbs-hi.html",
  );
  const body = await expectValid(rig, "/v1/bestsellers?category=hi");
  assert.equal(body.count, 30);
  assert.equal(body.results[0].rank, 1);
});

Deno.test("categories from the best sellers landing page", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.in/gp/bestsellers",
    "bestsellers/amazon.in__santapan-gp-bestsellers.html",
  );
  const body = await expectValid(rig, "/v1/utility/categories?marketplace=IN");
  assert.ok(body.count > 5);
  assert.equal(body.categories[0].type, "bestsellers_slug");
});

Deno.test("category browsing by browse node", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.in/s?rh=n:6612025031",
    "search/amazon.in__vedant-rh-n6612025031.html",
  );
  const body = await expectValid(
    rig,
    "/v1/products/category?category_id=6612025031&marketplace=IN",
  );
  assert.equal(body.category_id, "6612025031");
  assert.equal(body.count, 33);
});

Deno.test("seller products from the storefront search", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.com/s?me=A2DP2EEPU3VU45",
    "seller_products/amazon.com__app-storefront-A2DP2EEPU3VU45.html",
  );
  const body = await expectValid(rig, "/v1/sellers/products?seller_id=A2DP2EEPU3VU45");
  assert.equal(body.seller_id, "A2DP2EEPU3VU45");
  assert.ok(body.count > 0);
});

Deno.test("asin-to-gtin gives the product page's identifiers, the UPC as gtin", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.com/dp/B0G6KD54ZK",
    "product/amazon.com__msheraz-B0G6KD54ZK.html",
  );
  const body = await expectValid(rig, "/v1/utility/asin-to-gtin?asin=B0G6KD54ZK");
  assert.deepEqual(body.identifiers, { UPC: "753747482348" });
  assert.equal(body.gtin, "753747482348");
  assert.equal(body.note, null);
});

Deno.test("asin-to-gtin says so in note when the page lists no identifiers", async () => {
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  const body = await expectValid(rig, "/v1/utility/asin-to-gtin?asin=B07H57DNVV");
  assert.equal(body.gtin, "");
  assert.match(body.note, /lists no UPC/);
});

/**
 * The search for EAN 0753747482348 finds the charger grid; its first organic result, B0CB1FW5FC,
 * redirects to B0G6KD54ZK (as the marketplace does a merged product: the corpus holds no page of
 * B0CB1FW5FC), whose page lists UPC 753747482348, which that EAN is.
 */
async function chargerPages(
  rig: {
    fake: {
      page(url: string, page: string | { html: string }): unknown;
      redirect(a: string, b: string): unknown;
    };
  },
) {
  const search = await fixture("search/amazon.com__pricechecker-portable-charger.html");
  rig.fake.page("https://www.amazon.com/s?k=0753747482348", {
    html: searchingFor(search, "0753747482348"),
  });
  rig.fake.redirect("https://www.amazon.com/dp/B0CB1FW5FC", "https://www.amazon.com/dp/B0G6KD54ZK");
  rig.fake.page(
    "https://www.amazon.com/dp/B0G6KD54ZK",
    "product/amazon.com__msheraz-B0G6KD54ZK.html",
  );
}

Deno.test("gtin-to-asin confirms the match on its product page (EAN-13 of a UPC-A)", async () => {
  await using rig = await startRig();
  await chargerPages(rig);
  const body = await expectValid(rig, "/v1/utility/gtin-to-asin?gtin=0753747482348");
  // The product whose page lists the code is the one its page names, said so in `note` (probe CS:
  // the search result's ASIN was given, unremarked, for another product's page).
  assert.equal(body.asin, "B0G6KD54ZK");
  assert.equal(body.match.asin, "B0CB1FW5FC");
  assert.equal(
    body.note,
    "The marketplace shows the search result B0CB1FW5FC as B0G6KD54ZK, whose page lists GTIN 0753747482348.",
  );
  assert.ok(body.other_matches.length > 0);
  assert.ok(!body.other_matches.includes("B0CB1FW5FC"));
  // The top result carried the code: no other product page was fetched to confirm it.
  assert.equal(rig.fake.pageRequests("/dp/B0CB1FW5FC"), 1);
  assert.equal(rig.fake.pageRequests("/dp/"), 2, "the result's address and its redirect");
});

Deno.test("gtin-to-asin notes an unsure match, and 404s when the search finds nothing", async () => {
  await using rig = await startRig();
  const ipads = await fixture("search/amazon.com__pavel-ipad-pro.html");
  rig.fake.page("https://www.amazon.com/s?k=012345678905", {
    html: searchingFor(ipads, "012345678905"),
  });
  const unsure = await expectValid(rig, "/v1/utility/gtin-to-asin?gtin=012345678905");
  assert.equal(unsure.asin, "B0BJLF2BRM");
  assert.match(unsure.note, /^Unsure/);
  assert.equal(rig.fake.pageRequests("/dp/"), 3, "the top 3 results were looked at");

  rig.fake.page("https://www.amazon.com/s?k=00000000", {
    html:
      `<html><body><div class="s-main-slot s-result-list"></div><span>No results for 00000000.</span></body></html>`,
  });
  const none = await rig.call("/v1/utility/gtin-to-asin?gtin=00000000");
  assert.equal(none.status, 404);
  assert.equal(none.headers.get("x-credits-cost"), "0");
});

Deno.test("gtin-to-asin confirms a code its product page lists second in one row", async () => {
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/s?k=7301433156092", {
    html: searchingFor(await fixture("search/amazon.com__pavel-ipad-pro.html"), "7301433156092"),
  });
  // The row "EAN ‎0730143315609, 7301433156092" (probe DP: only the first code was looked at, so
  // the second was answered as an unsure match, charged).
  rig.fake.page("https://www.amazon.com/dp/B0BJLF2BRM", {
    html: onSite(await fixture("product/amazon.com.br__mzmvyp-B0D6NN6TM7.html"), "US"),
  });
  const body = await expectValid(rig, "/v1/utility/gtin-to-asin?gtin=7301433156092");
  assert.equal(body.asin, "B0D6NN6TM7");
  assert.match(body.note, /whose page lists GTIN 7301433156092\.$/);
  const asinToGtin = await expectValid(rig, "/v1/utility/asin-to-gtin?asin=B0BJLF2BRM");
  assert.deepEqual(asinToGtin.identifiers, { EAN: "0730143315609" }, "the answer keeps the first");
});

Deno.test("gtin-to-asin whose candidates' pages cannot be read fails uncharged; once they can, the match is confirmed", async () => {
  await using rig = await startRig();
  await chargerPages(rig);
  // Every product page answers 503 through the retries (probe BC: a charged "Unsure: the pages
  // list no UPC" answer, cached for a day).
  rig.fake.fail("503", 20, "/dp/");
  const failed = await rig.call("/v1/utility/gtin-to-asin?gtin=0753747482348");
  assert.ok(failed.status >= 500, `status ${failed.status}`);
  assert.equal(failed.headers.get("x-credits-cost"), "0");
  assert.ok(rig.fake.pageRequests("/dp/") > 0);

  rig.fake.recover();
  const confirmed = await expectValid(rig, "/v1/utility/gtin-to-asin?gtin=0753747482348");
  assert.equal(confirmed.asin, "B0G6KD54ZK");
  assert.equal(confirmed.match.asin, "B0CB1FW5FC");
  assert.match(confirmed.note, /B0CB1FW5FC as B0G6KD54ZK/);
});

Deno.test("scrape detects the page type and costs 2", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.com/gp/bestsellers/hi",
    "bestsellers/amazon.com__parsy-zgbs-hi.html",
  );
  const body = await expectValid(
    rig,
    "/v1/scrape?url=" + encodeURIComponent("https://www.amazon.com/gp/bestsellers/hi?ref=zg_bs"),
    "2",
  );
  assert.equal(body.type, "bestsellers");
  assert.equal(body.marketplace, "US");
  assert.equal((body.data.results as unknown[]).length, 30);
});

Deno.test("scrape refuses a non-marketplace URL with 422 before charging", async () => {
  await using rig = await startRig();
  const r = await rig.call(
    "/v1/scrape?url=" + encodeURIComponent("https://evil.example.com/dp/B07H57DNVV"),
  );
  assert.equal(r.status, 422);
  const detail = (r.body.detail as { loc: string[] }[])[0];
  assert.deepEqual(detail.loc, ["query", "url"]);
  assert.equal(rig.fake.requests.length, 0);
  const usage = await rig.call("/v1/usage");
  assert.equal((usage.body as { requests_used: number }).requests_used, 0);
});

Deno.test("scrape does not follow a redirect off the marketplace hosts", async () => {
  await using rig = await startRig();
  rig.fake.redirect("https://www.amazon.com/gp/redirect.html", "https://evil.example.com/");
  const r = await rig.call(
    "/v1/scrape?url=" + encodeURIComponent("https://www.amazon.com/gp/redirect.html"),
  );
  assert.equal(r.status, 502);
  assert.equal(r.headers.get("x-credits-cost"), "0");
});

Deno.test("scrape of a page whose only offer mark is an empty offer block is an uncharged 502", async () => {
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/sp?seller=A1", {
    html: `<html><body><div id="seller-name">x</div><div id="aod-offer"></div></body></html>`,
  });
  const r = await rig.call(
    "/v1/scrape?url=" + encodeURIComponent("https://www.amazon.com/sp?seller=A1"),
  );
  assert.equal(r.status, 502, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.headers.get("x-credits-cost"), "0");
});

Deno.test("scrape reads a product page through the parser registry", async () => {
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  const body = await expectValid(
    rig,
    "/v1/scrape?url=" + encodeURIComponent("https://www.amazon.com/dp/B07H57DNVV"),
    "2",
  );
  assert.equal(body.type, "product");
  assert.equal(body.data.asin, "B07H57DNVV");
  assert.equal(body.data.title, "Anthem Of The Peaceful Army");
});

Deno.test("scrape: the host written with a final dot is the same host, asked for as written without it (probe GY)", async () => {
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  for (const host of ["WWW.AMAZON.COM.", "www.amazon.com"]) {
    const body = await expectValid(
      rig,
      "/v1/scrape?url=" + encodeURIComponent(`https://${host}/dp/B07H57DNVV`),
      "2",
    );
    assert.equal(body.data.title, "Anthem Of The Peaceful Army", host);
    assert.equal(body.url, "https://www.amazon.com/dp/B07H57DNVV", host);
  }
  const hosts = rig.fake.requests.filter((r) => r.path.includes("/dp/")).map((r) => r.host);
  assert.deepEqual(hosts, ["www.amazon.com", "www.amazon.com"]);
});

Deno.test("review details: the corpus's 2016 review page answers its own review, and is an uncharged 404 for another", async () => {
  await using rig = await startRig();
  for (const id of ["R12J0UJC4DRYLC", "RWANTED0001"]) {
    rig.fake.page(
      `https://www.amazon.com/gp/customer-reviews/${id}`,
      "reviews/amazon.com__weih-B003EM8008-p3837.html",
    );
  }
  const own = await expectValid(
    rig,
    "/v1/products/reviews/details?asin=B003EM8008&review_id=R12J0UJC4DRYLC",
  );
  assert.equal(own.review.id, "R12J0UJC4DRYLC");
  assert.equal(own.asin, "B003EM8008", "the product its page names");
  // Asked under another product, it is still the product the page names (probe EH).
  const asked = await expectValid(
    rig,
    "/v1/products/reviews/details?asin=B000000009&review_id=R12J0UJC4DRYLC",
  );
  assert.equal(asked.asin, "B003EM8008");
  // A page naming no product: no product, not the one asked for (probe EH).
  const page = await fixture("reviews/amazon.com__weih-B003EM8008-p3837.html");
  const unnamed = page.replace(/B003EM8008/g, "");
  assert.notEqual(unnamed, page);
  rig.fake.page("https://www.amazon.com/gp/customer-reviews/R12J0UJC4DRYLC", { html: unnamed });
  const none = await expectValid(
    rig,
    "/v1/products/reviews/details?asin=B000000009&review_id=R12J0UJC4DRYLC",
  );
  assert.equal(none.asin, "");
  const other = await rig.call(
    "/v1/products/reviews/details?asin=B003EM8008&review_id=RWANTED0001",
  );
  assert.equal(other.status, 404, JSON.stringify(other.body));
  assert.equal(other.headers.get("x-credits-cost"), "0");
});

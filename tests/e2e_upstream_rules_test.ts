/**
 * Upstream rules that once had no test able to fail (issue 18, items 3–7), over real HTTP with
 * the real browser transport against the fake marketplace serving corpus pages.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { fixture } from "./fixture.ts";
import { asinFromUrl } from "../parsers/page_text.ts";

const PRODUCT = "product/amazon.com__app-B07H57DNVV.html";

Deno.test("an upstream 429 is retried with a fresh session, and the later 200 answers the call (18.3)", async () => {
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", PRODUCT);
  rig.fake.page("https://www.amazon.com/dp/B0CL5KNB9M", PRODUCT);
  const first = await rig.call("/v1/products/details?asin=B0CL5KNB9M");
  assert.equal(first.status, 200);
  rig.fake.fail("429", 1, "/dp/B07H57DNVV");
  const r = await rig.call("/v1/products/details?asin=B07H57DNVV");
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.asin, "B07H57DNVV");
  assert.equal(r.headers.get("x-credits-cost"), "1");
  const tries = rig.fake.requests.filter((q) => q.path === "/dp/B07H57DNVV");
  assert.equal(tries.length, 2, "one 429, one retry");
  assert.match(
    tries[0].cookie,
    /session-id=/,
    "the first try used the session of the earlier call",
  );
  assert.notEqual(tries[1].cookie, tries[0].cookie, "the retry starts a fresh session");
});

Deno.test("Amazon's 'page not found' page served with HTTP 200 is an uncharged 404 not_found, not retried (18.4)", async () => {
  await using rig = await startRig();
  const dogs = `<!doctype html><html><head><title>Page Not Found</title></head><body>` +
    `<a href="/ref=cs_404_logo"></a><b>Looking for something?</b> We're sorry. The Web address you entered is not a ` +
    `functioning page on our site.</body></html>`;
  rig.fake.page("https://www.amazon.com/dp/B0NOTHERE1", { html: dogs, status: 200 });
  const r = await rig.call("/v1/products/details?asin=B0NOTHERE1");
  assert.equal(r.status, 404, JSON.stringify(r.body));
  assert.equal((r.body.error as { code: string }).code, "not_found");
  assert.equal(r.headers.get("x-credits-cost"), "0");
  assert.equal(rig.fake.pageRequests("/dp/B0NOTHERE1"), 1);
});

Deno.test("a sign-in wall is answered after exactly one upstream request, uncharged (18.5)", async () => {
  await using rig = await startRig();
  const wall = await fixture("blocked/amazon.de__epic-reviews-signin-wall.html");
  rig.fake.page("https://www.amazon.de/product-reviews/B07H57DNVV", { html: wall, status: 200 });
  const r = await rig.call("/v1/products/reviews?asin=B07H57DNVV&marketplace=DE");
  assert.equal(r.status, 503, JSON.stringify(r.body));
  assert.equal((r.body.error as { code: string }).code, "upstream_blocked");
  assert.equal(r.headers.get("x-credits-cost"), "0");
  assert.equal(rig.fake.pageRequests("/product-reviews/"), 1, "no retry for a sign-in wall");
  // And its message says no retries were made (probe CU).
  assert.doesNotMatch((r.body.error as { message: string }).message, /after retries/);
});

Deno.test("an ASIN read from a lower-case URL is upper-cased (18.6)", async () => {
  assert.equal(asinFromUrl("https://www.amazon.com/dp/b07h57dnvv"), "B07H57DNVV");
  assert.equal(asinFromUrl("https://www.amazon.com/gp/product/b07h57dnvv/ref=x"), "B07H57DNVV");
  assert.equal(asinFromUrl("https://www.amazon.com/product-reviews/b07h57dnvv?x=1"), "B07H57DNVV");
  assert.equal(
    asinFromUrl("https://www.amazon.com/gp/product/ajax/?asin=b07h57dnvv&pc=dp"),
    "B07H57DNVV",
  );
  // Over HTTP: a product page whose only ASIN is its lower-case canonical link.
  await using rig = await startRig();
  const page = (await fixture(PRODUCT))
    .replace(/<input[^>]*(?:id|name)=["']ASIN["'][^>]*>/gi, "")
    .replace(/(<link rel="canonical" href="[^"]*\/dp\/)B07H57DNVV/i, "$1b07h57dnvv");
  assert.match(page, /\/dp\/b07h57dnvv/, "the canonical link is lower-case in the served page");
  rig.fake.page("https://www.amazon.com/dp/b07h57dnvv", { html: page });
  const r = await rig.call(
    `/v1/scrape?url=${encodeURIComponent("https://www.amazon.com/dp/b07h57dnvv")}`,
  );
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal((r.body.data as { asin: string }).asin, "B07H57DNVV");
});

Deno.test("list_price is null when the struck-through price is not above the price (18.7)", async () => {
  await using rig = await startRig();
  const html = await fixture("search/amazon.com__pavel-ipad-pro.html");
  // B0BJLF2BRM shows $1,049.00 with a struck-through $1,099.00.
  for (
    const [struck, expected] of [["$1,099.00", 1099], ["$1,049.00", null], [
      "$999.00",
      null,
    ]] as const
  ) {
    const q = `ipad${expected ?? struck.replace(/\D/g, "")}`;
    rig.fake.page(`https://www.amazon.com/s?k=${q}`, {
      html: html.replaceAll("$1,099.00", struck),
    });
    const r = await rig.call(`/v1/products/search?query=${q}`);
    assert.equal(r.status, 200);
    const item =
      (r.body.results as { asin: string; price: { amount: number; list_price: number | null } }[])
        .find((x) => x.asin === "B0BJLF2BRM")!;
    assert.equal(item.price.amount, 1049);
    assert.equal(item.price.list_price, expected, `struck ${struck}`);
  }
});

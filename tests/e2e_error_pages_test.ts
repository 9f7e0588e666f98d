/**
 * Block pages that arrive with HTTP 200 (issue 18 sweep): Amazon's captcha (amazon.de), its
 * "Tut uns Leid" throttling page and the "dogs of Amazon" 503 page are each retried on a fresh
 * session like a robot check, and a later real page answers the call; served on every attempt,
 * they end in an uncharged 503 upstream_blocked. Real corpus pages over the fake marketplace.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { fixture } from "./fixture.ts";

const BLOCKS = [
  "blocked/amazon.de__epic-captcha.html",
  "blocked/amazon.de__epic-503-tut-uns-leid.html",
  "blocked/amazon.com__cagan-dogs-of-amazon-503.html",
  "blocked/amazon.com__msheraz-captcha.html",
];
const URL_DE = "https://www.amazon.de/dp/B01LW7X0JJ";

for (const block of BLOCKS) {
  Deno.test(`a block page served with HTTP 200 is retried, then the real page answers: ${block}`, async () => {
    await using rig = await startRig();
    const html = await fixture(block);
    // The first request gets the block page with 200, every later one the product page.
    let served = 0;
    rig.fake.page(URL_DE, "product/amazon.de__app-B01LW7X0JJ.html");
    const original = rig.fake.page.bind(rig.fake);
    original(URL_DE, { html, status: 200 });
    const first = rig.call("/v1/products/details?asin=B01LW7X0JJ&marketplace=DE");
    while (rig.fake.pageRequests("/dp/B01LW7X0JJ") === 0) {
      await new Promise((r) => setTimeout(r, 2));
    }
    served++;
    original(URL_DE, "product/amazon.de__app-B01LW7X0JJ.html");
    const r = await first;
    assert.equal(served, 1);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(rig.fake.pageRequests("/dp/B01LW7X0JJ"), 2, "one retry");
    assert.equal(r.body.asin, "B01LW7X0JJ");
  });

  Deno.test(`a block page served with HTTP 200 on every attempt is an uncharged 503: ${block}`, async () => {
    await using rig = await startRig();
    rig.fake.page(URL_DE, { html: await fixture(block), status: 200 });
    const r = await rig.call("/v1/products/details?asin=B01LW7X0JJ&marketplace=DE");
    assert.equal(r.status, 503, JSON.stringify(r.body));
    assert.equal((r.body.error as { code: string }).code, "upstream_blocked");
    assert.equal(r.headers.get("x-credits-cost"), "0");
    assert.equal(rig.fake.pageRequests("/dp/B01LW7X0JJ"), 3, "the first try and two retries");
  });
}

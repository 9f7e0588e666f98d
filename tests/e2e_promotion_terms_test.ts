/**
 * What a promotion that shows only its terms costs (probe IC): the terms are an answer, charged one
 * credit; the same page without them shows no promotion, an uncharged 404. The hand-built
 * PROMOTION_PAGE over the fake marketplace, its title heading and product list removed.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { PROMOTION_PAGE } from "./handbuilt_pages.ts";

const TERMS_ONLY = PROMOTION_PAGE
  .replace("<h1><span>Save 20% on select kitchen items</span></h1>", "")
  .replace(/<ul id="productInfoList"[\s\S]*<\/ul>/, "");
// The same page of an ended promotion: its terms gone too, its id still on the page.
const NOTHING_SHOWN = TERMS_ONLY
  .replace(/<div id="promotionTerms"[^]*?<\/div>/, "")
  .replace("/promotion/psp/A2P3X1AN29HWHX", "/promotion/psp/AENDEDPROMO1");

Deno.test("a promotion page showing only its terms is answered 200 and charged; without them it is an uncharged 404", async () => {
  assert.ok(!TERMS_ONLY.includes("<h1>") && !TERMS_ONLY.includes("productGrid"));
  assert.ok(TERMS_ONLY.includes("promotionTerms") && !NOTHING_SHOWN.includes("promotionTerms"));
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/promotion/psp/A2P3X1AN29HWHX", { html: TERMS_ONLY });
  rig.fake.page("https://www.amazon.com/promotion/psp/AENDEDPROMO1", { html: NOTHING_SHOWN });

  const terms = await rig.call("/v1/promotions?promo_id=A2P3X1AN29HWHX");
  assert.equal(terms.status, 200, JSON.stringify(terms.body).slice(0, 300));
  assert.equal(terms.headers.get("x-credits-cost"), "1");
  assert.equal(terms.body.terms, "Discount applies at checkout. Offer valid while supplies last.");
  assert.equal(terms.body.promo_id, "A2P3X1AN29HWHX");

  const nothing = await rig.call("/v1/promotions?promo_id=AENDEDPROMO1");
  assert.equal(nothing.status, 404, JSON.stringify(nothing.body).slice(0, 300));
  assert.equal(nothing.headers.get("x-credits-cost"), "0");

  const usage = await rig.call("/v1/usage");
  assert.equal((usage.body as { requests_used: number }).requests_used, 1);
});

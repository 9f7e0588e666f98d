/**
 * What the answers around a page's reading say of what the page did not show, over real HTTP with
 * the fake marketplace: a product page without best-seller ranks, a seller profile without its
 * positive-feedback share and a promotion without its schedule list those fields in `missing`;
 * and a book's GTIN is its ISBN-13 (the most general code), though its page lists the ISBN-10
 * first.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { PROMOTION_PAGE, SELLER_PROFILE_PAGE } from "./handbuilt_pages.ts";

Deno.test("details: a product page that shows no best-seller rank lists bestsellers_rank in missing", async () => {
  await using rig = await startRig();
  // A 2023 page whose product-details table holds no "Best Sellers Rank" row.
  rig.fake.page(
    "https://www.amazon.com/dp/B0CD9645MM",
    "product/amazon.com__matous-B0CD9645MM-missing-desc.html",
  );
  const r = await rig.call("/v1/products/details?asin=B0CD9645MM");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.deepEqual(r.body.bestsellers_rank, []);
  const missing = r.body.missing as string[];
  assert.ok(missing.includes("bestsellers_rank"), JSON.stringify(missing));
});

Deno.test("asin-to-gtin: a book's gtin is its ISBN-13, though its page lists the ISBN-10 first", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.com/dp/0131103628",
    "product/amazon.com__app-book-0131103628.html",
  );
  const r = await rig.call("/v1/utility/asin-to-gtin?asin=0131103628");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  const ids = r.body.identifiers as Record<string, string>;
  assert.deepEqual(Object.keys(ids), ["ISBN_10", "ISBN_13"], "the page's order");
  assert.equal(r.body.gtin, ids.ISBN_13);
  assert.equal(r.body.note, null);
});

Deno.test("seller profile: a page that shows no positive-feedback share lists positive_pct in missing", async () => {
  await using rig = await startRig();
  const page = SELLER_PROFILE_PAGE.replace("<b>93% positive</b>", "");
  assert.notEqual(page, SELLER_PROFILE_PAGE);
  rig.fake.page("https://www.amazon.com/sp?seller=A1EXAMPLE7SELLER", { html: page });
  const r = await rig.call("/v1/sellers/profile?seller_id=A1EXAMPLE7SELLER");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.positive_pct, 0);
  assert.deepEqual(r.body.missing, ["positive_pct"]);
});

Deno.test("promotion: a page that shows no schedule lists ends_at and starts_at in missing", async () => {
  await using rig = await startRig();
  const page = PROMOTION_PAGE.replace(/<div id="promotionSchedule"[^]*?<\/div>/, "");
  assert.notEqual(page, PROMOTION_PAGE);
  rig.fake.page("https://www.amazon.com/promotion/psp/A2P3X1AN29HWHX", { html: page });
  const r = await rig.call("/v1/promotions?promo_id=A2P3X1AN29HWHX");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.ends_at, null);
  assert.equal(r.body.starts_at, null);
  assert.deepEqual(r.body.missing, ["ends_at", "starts_at"]);
});

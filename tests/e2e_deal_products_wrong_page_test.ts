/**
 * A page at a deal's address that is not a deal page at all: an error page, or a product page the
 * marketplace served instead. Neither says the deal ended, so it is not the uncharged 404 of an
 * ended deal (e2e_wrong_page_test.ts) but a page not understood: an uncharged 502. Over the fake
 * marketplace.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";

// What a marketplace error page may hold: no page-type token, no deal markup, not the wording of
// Amazon's own 404 or 503 pages.
const ERROR_PAGE = "<html><head><title>Amazon.com</title></head><body>" +
  "<p>Sorry! Something went wrong on our end.</p></body></html>";

for (
  const [name, page] of [
    ["an error page", { html: ERROR_PAGE }],
    ["a product page", "product/amazon.com__webapis-B004OA758C.html"],
  ] as const
) {
  Deno.test(`deals/products answers ${name} at a deal's address with an uncharged 502, not an ended deal's 404`, async () => {
    await using rig = await startRig();
    rig.fake.page("https://www.amazon.com/deal/e5f6a7b8", page);
    const r = await rig.call("/v1/deals/products?deal_id=e5f6a7b8");
    assert.equal(r.status, 502, JSON.stringify(r.body).slice(0, 300));
    assert.equal((r.body.error as { code: string }).code, "upstream_error");
    assert.equal(r.headers.get("x-credits-cost"), "0");
    const usage = await rig.call("/v1/usage");
    assert.equal((usage.body as { requests_used: number }).requests_used, 0);
  });
}

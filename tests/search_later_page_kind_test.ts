/**
 * A further page of a `limit` search is checked for the kind of listing it pages through, as the
 * first is: a seller storefront's page answered as page 2 of a keyword search was merged into the
 * answer (14 of 30 items the seller's) and charged two credits (probe HW, S03).
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { asResultsPage, fixture } from "./fixture.ts";
import { parseSearch } from "../parsers/search.ts";

const SEARCH = "search/amazon.com__pavel-ipad-pro.html"; // 16 organic results, links a page 2
const STOREFRONT = "seller_products/amazon.com__app-storefront-A2DP2EEPU3VU45.html";

/** The storefront's page as the marketplace might answer page 2, stating `stated` as its page. */
async function storefrontAsPage(stated: 1 | 2): Promise<string> {
  const html = asResultsPage(await fixture(STOREFRONT), 2);
  return stated === 2 ? html.replace(/(class="a-selected"><a [^>]*>)1</, "$12<") : html;
}

for (const stated of [2, 1] as const) {
  Deno.test(`a search's page 2 that is a storefront's page (stating page ${stated}) is given back: the answer is page 1's, one credit, has_next_page true`, async () => {
    const page2 = await storefrontAsPage(stated);
    const read = parseSearch(page2, { marketplace: "US" });
    // What makes it another listing: its links page through a seller, and name no search words.
    assert.equal(read.links_seller, "A2DP2EEPU3VU45");
    assert.equal(read.links_query, null);
    assert.equal(read.page_stated ? read.page : stated, stated);
    await using rig = await startRig();
    rig.fake.page("https://www.amazon.com/s?k=ipad", { html: await fixture(SEARCH) });
    rig.fake.page("https://www.amazon.com/s?k=ipad&page=2", { html: page2 });
    const r = await rig.call("/v1/products/search?query=ipad&limit=30");
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
    assert.equal(r.body.count, 16, "page 1's results only");
    const sellers = new Set(parseSearch(page2, { marketplace: "US" }).results.map((x) => x.asin));
    const results = r.body.results as { asin: string }[];
    assert.equal(results.filter((x) => sellers.has(x.asin)).length, 0, "none of the storefront's");
    // Another listing's page says nothing of where this search ends.
    assert.equal(r.body.has_next_page, true);
    assert.equal(r.headers.get("x-credits-cost"), "1");
    const usage = await rig.call("/v1/usage");
    assert.equal((usage.body as { requests_used: number }).requests_used, 1);
  });
}

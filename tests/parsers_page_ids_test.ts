/**
 * Ids a page hands out are ids: a seller's, a deal's, a department's alias and a best sellers slug
 * are taken only in the form the parameters that take them back accept, as a page's attribute may
 * hold any text (probes EW, EX: `../../admin?x=<img …>` answered as a seller id, a deal id and a
 * category id).
 */
import assert from "node:assert/strict";
import { parseOffers } from "../parsers/offers.ts";
import { parseDeals } from "../parsers/deals.ts";
import { parseCategories } from "../parsers/categories.ts";
import { fixture } from "./fixture.ts";
import { DEALS_PAGE } from "./handbuilt_pages.ts";

const HOSTILE = "../../admin?x=&lt;img src=x onerror=alert(1)&gt;";

Deno.test("offers: a seller link's id that is no merchant token is null", async () => {
  const html = await fixture("offers/amazon.com__app-olp-0001982389.html");
  const before = parseOffers(html, { marketplace: "US" }).offers.map((o) => o.seller.id);
  assert.ok(before.includes("A1TJP2EKS10VL4"), JSON.stringify(before));
  const hostile = html.replaceAll(
    "seller=A1TJP2EKS10VL4",
    `seller=${encodeURIComponent("../../admin")}`,
  )
    .replace("seller=", "seller=a1tjp2eks10vl4x");
  const after = parseOffers(hostile, { marketplace: "US" }).offers.map((o) => o.seller.id);
  assert.equal(after.length, before.length);
  for (const id of after) assert.ok(id === null || /^[A-Z0-9]{8,20}$/.test(id), String(id));
  assert.ok(!after.includes("A1TJP2EKS10VL4"));
});

Deno.test("deals: a card's deal id that is no id is null", () => {
  const deals =
    parseDeals(DEALS_PAGE.replace('data-deal-id="a1b2c3d4"', `data-deal-id="${HOSTILE}"`), {
      marketplace: "US",
    }).results;
  assert.deepEqual(deals.map((d) => d.deal_id), [null, "e5f6a7b8", null]);
});

Deno.test("deals: a card's deal id is taken whole, 1 to 64 of [A-Za-z0-9_-], or not at all (probe EW)", () => {
  const idOf = (id: string) =>
    parseDeals(DEALS_PAGE.replace('data-deal-id="a1b2c3d4"', `data-deal-id="${id}"`), {
      marketplace: "US",
    }).results[0].deal_id;
  const longest = "aZ0_-".repeat(12) + "abcd"; // 64 characters
  assert.equal(longest.length, 64);
  for (const ok of ["a1b2c3d4", "A-b_9", longest]) assert.equal(idOf(ok), ok);
  // A space, markup, a dot or one character too many: none of it is an id, though it holds some.
  for (const bad of ["a1b2 c3d4", "a1b2&lt;b&gt;", "a1b2.c3d4", longest + "e"]) {
    assert.equal(idOf(bad), null, bad);
  }
});

Deno.test("categories: a search-bar option whose alias is no alias is not listed", async () => {
  const name = "categories/amazon.ca__amzorders-homepage-searchdropdown.html";
  const html = await fixture(name);
  const ids = (h: string) => parseCategories(h, { marketplace: "CA" }).categories.map((c) => c.id);
  const before = ids(html);
  assert.ok(before.includes("alexa-skills"));
  const after = ids(
    html.replace(
      "search-alias=alexa-skills",
      `search-alias=${encodeURIComponent("../x?<b> evil")}`,
    ),
  );
  assert.equal(after.length, before.length - 1);
  assert.ok(!after.some((id) => id.includes("evil")), JSON.stringify(after));
});

Deno.test("categories: a best sellers tree link whose slug is no slug is not listed", async () => {
  const html = await fixture("bestsellers/amazon.com__parsy-zgbs-hi.html");
  const ids = (h: string) => parseCategories(h, { marketplace: "US" }).categories.map((c) => c.id);
  const before = ids(html);
  assert.ok(before.includes("hi/552684"));
  const after = ids(
    html.replace("/zgbs/hi/552684/ref=zg_bs_nav_hi_1", "/zgbs/../../admin/ref=zg_bs_nav_hi_1"),
  );
  assert.equal(after.length, before.length - 1);
  assert.ok(!after.some((id) => id.includes("admin") || id.includes("..")), JSON.stringify(after));
});

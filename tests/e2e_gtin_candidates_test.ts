/**
 * gtin-to-asin past its top search result, end to end: the charger grid searched for EAN
 * 0753747482348 (organic results B0CB1FW5FC at position 3, B0GTM5NV64 at 4, B0GYR6GXWN at 5),
 * and product pages made from the charger's real page (B0G6KD54ZK, "UPC 753747482348") by giving
 * it another ASIN or another code. A 200 answer is charged, so a wrong match is a wrong answer
 * paid for; a candidate's page that could not be read is the call's uncharged failure instead.
 */
import assert from "node:assert/strict";
import { type Rig, startRig } from "./upstream_harness.ts";
import { fixture, searchingFor } from "./fixture.ts";

const GTIN = "0753747482348";
const CALL = `/v1/utility/gtin-to-asin?gtin=${GTIN}`;

/** The charger grid as the answer to a search for GTIN. */
async function serveSearch(rig: Rig, edit: (html: string) => string = (h) => h): Promise<void> {
  const search = await fixture("search/amazon.com__pricechecker-portable-charger.html");
  rig.fake.page(`https://www.amazon.com/s?k=${GTIN}`, {
    html: edit(searchingFor(search, GTIN)),
  });
}

/** The charger's product page as `asin`'s, listing `upc` (by default its own, the GTIN's). */
async function serveProduct(rig: Rig, asin: string, upc = "753747482348"): Promise<void> {
  const charger = await fixture("product/amazon.com__msheraz-B0G6KD54ZK.html");
  assert.ok(charger.includes("> 753747482348 <"));
  const html = charger.replaceAll("B0G6KD54ZK", asin).replace("> 753747482348 <", `> ${upc} <`);
  rig.fake.page(`https://www.amazon.com/dp/${asin}`, { html });
}

/** A product page that lists no UPC, EAN or GTIN (an album's), as `asin`'s. */
async function serveProductListingNone(rig: Rig, asin: string): Promise<void> {
  const album = await fixture("product/amazon.com__app-B07H57DNVV.html");
  rig.fake.page(`https://www.amazon.com/dp/${asin}`, {
    html: album.replaceAll("B07H57DNVV", asin),
  });
}

/** Every result card but `asin`'s marked as an ad: the search's only organic result is `asin`. */
function onlyOrganic(asin: string): (html: string) => string {
  return (html) =>
    html.replace(
      /<div class="([^"]*)"( data-asin="([A-Z0-9]{10})"[^>]*data-component-type="s-search-result")/g,
      (card, cls: string, rest: string, a: string) =>
        a === asin || cls.split(" ").includes("AdHolder")
          ? card
          : `<div class="${cls} AdHolder"${rest}`,
    );
}

// deno-lint-ignore no-explicit-any -- the tests read the answers' fields freely
type Answer = Record<string, any>;

async function answered(rig: Rig): Promise<Answer> {
  const r = await rig.call(CALL);
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.headers.get("x-credits-cost"), "1");
  return r.body as Answer;
}

Deno.test("gtin-to-asin answers the second result when only its page lists the code, as the first match, unremarked", async () => {
  await using rig = await startRig();
  await serveSearch(rig);
  // The top result is another item the loose digit search found (a bundle's code).
  await serveProduct(rig, "B0CB1FW5FC", "753747482331");
  await serveProduct(rig, "B0GTM5NV64");
  const body = await answered(rig);
  // The top result with an "Unsure" note would be a wrong product, charged.
  assert.equal(body.asin, "B0GTM5NV64");
  assert.equal(body.match.asin, "B0GTM5NV64");
  assert.equal(body.note, null, "its own page confirms it: nothing to remark");
  // The match is the answer's first, whatever place the search gave it (4th, after two ads).
  assert.equal(body.match.position, 1);
  assert.equal(body.other_matches[0], "B0CB1FW5FC");
  assert.ok(!body.other_matches.includes("B0GTM5NV64"));
  assert.equal(rig.fake.pageRequests("/dp/B0GTM5NV64"), 1, "the next results were confirmed");
});

Deno.test("gtin-to-asin whose result pages list other codes, and none, says no page lists the GTIN", async () => {
  await using rig = await startRig();
  await serveSearch(rig);
  await serveProduct(rig, "B0CB1FW5FC", "753747482331");
  await serveProductListingNone(rig, "B0GTM5NV64");
  // B0GYR6GXWN's page is gone (404): it lists none.
  const body = await answered(rig);
  assert.equal(body.asin, "B0CB1FW5FC");
  assert.equal(body.match.asin, "B0CB1FW5FC");
  // A page listed a code, only not this one: saying the pages list no code would misstate why.
  assert.equal(
    body.note,
    `Unsure: no product page among the first results lists GTIN ${GTIN}; the top search result is given.`,
  );
  assert.equal(rig.fake.pageRequests("/dp/"), 3, "the top 3 results were looked at");
});

Deno.test("gtin-to-asin whose only candidate's page cannot be read fails uncharged; once it can, the match is confirmed", async () => {
  await using rig = await startRig();
  await serveSearch(rig, onlyOrganic("B0CB1FW5FC"));
  await serveProduct(rig, "B0CB1FW5FC");
  // Its page answers 503 through the retries (probe BC, for one candidate: a charged "Unsure"
  // answer, cached for a day).
  rig.fake.fail("503", 20, "/dp/");
  const failed = await rig.call(CALL);
  // The page's own error: the marketplace refused it.
  assert.equal(failed.status, 503, JSON.stringify(failed.body));
  assert.equal((failed.body.error as { code: string }).code, "upstream_blocked");
  assert.equal(failed.headers.get("x-credits-cost"), "0");
  assert.ok(rig.fake.pageRequests("/dp/B0CB1FW5FC") > 0);
  assert.equal(rig.fake.pageRequests("/dp/"), rig.fake.pageRequests("/dp/B0CB1FW5FC"));

  rig.fake.recover();
  const body = await answered(rig);
  assert.equal(body.asin, "B0CB1FW5FC");
  assert.equal(body.note, null);
  assert.deepEqual(body.other_matches, []);
});

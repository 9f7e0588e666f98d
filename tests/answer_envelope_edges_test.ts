/**
 * Edges of the answers around a page's reading and of the result cache in front of them, over
 * real HTTP with the fake marketplace: what `missing` says of a seller profile without its star
 * rating and of a promotion whose schedule cannot be read, which code `gtin` names when a page
 * lists several, how long an offers answer is served from the cache, and that the cache's size
 * bound is in bytes (a KV value's limit), not in characters. Then two rules of reading a page
 * (upstream/page_read.ts), as unit tests of readPage since the route's answer is the same either
 * way: Amazon's 404 page is not parsed, and a page's text budget is twice its length.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { fixture } from "./fixture.ts";
import { NOT_FOUND_PAGE, PROMOTION_PAGE, SELLER_PROFILE_PAGE } from "./handbuilt_pages.ts";
import { readPage } from "../upstream/page_read.ts";
import { CachingSource } from "../upstream/result_cache.ts";
import { ManualClock } from "../metering/clock.ts";

async function cacheKeys(kv: Deno.Kv): Promise<string[]> {
  const keys: string[] = [];
  for await (const e of kv.list({ prefix: ["result_cache"] })) keys.push(String(e.key[1]));
  return keys;
}

Deno.test("missing: a seller profile that shows no star rating lists rating, its 0 being no rating", async () => {
  await using rig = await startRig();
  // The stars go; the "93% positive … (1,234 ratings)" line stays, so only the rating is unread.
  const page = SELLER_PROFILE_PAGE.replace(/<i class="a-icon a-icon-star[^]*?<\/i>/, "");
  assert.notEqual(page, SELLER_PROFILE_PAGE);
  rig.fake.page("https://www.amazon.com/sp?seller=A1EXAMPLE7SELLER", { html: page });
  const r = await rig.call("/v1/sellers/profile?seller_id=A1EXAMPLE7SELLER");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.rating, 0);
  assert.equal(r.body.positive_pct, 93);
  assert.equal(r.body.ratings_count, 1234);
  assert.deepEqual(r.body.missing, ["rating"]);
});

Deno.test("missing: a promotion whose schedule says no readable dates lists ends_at and starts_at", async () => {
  await using rig = await startRig();
  // A client deciding whether a promotion is still on must not take a null end for "no end".
  const page = PROMOTION_PAGE.replace(
    /(<div id="promotionSchedule"[^>]*><span>)[^<]*/,
    "$1While supplies last",
  );
  assert.notEqual(page, PROMOTION_PAGE);
  rig.fake.page("https://www.amazon.com/promotion/psp/A2P3X1AN29HWHX", { html: page });
  const r = await rig.call("/v1/promotions?promo_id=A2P3X1AN29HWHX");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.title, "Save 20% on select kitchen items");
  assert.equal(r.body.ends_at, null);
  assert.equal(r.body.starts_at, null);
  assert.deepEqual(r.body.missing, ["ends_at", "starts_at"]);
});

Deno.test("asin-to-gtin: a page listing a UPC and then a GTIN answers the GTIN as gtin, both in identifiers", async () => {
  await using rig = await startRig();
  // The charger's real page ("UPC 753747482348"), with a GTIN row added after the UPC's: the
  // most general code wins whatever the page's order.
  const charger = await fixture("product/amazon.com__msheraz-B0G6KD54ZK.html");
  const upcRow = /<tr> <th[^>]*> UPC <\/th>\s*<td[^>]*> 753747482348 <\/td> <\/tr>/;
  assert.ok(upcRow.test(charger));
  const html = charger.replace(
    upcRow,
    (row) =>
      `${row}<tr> <th class="a-color-secondary a-size-base prodDetSectionEntry"> Global Trade Identification Number </th>` +
      ` <td class="a-size-base prodDetAttrValue"> 00753747482348 </td> </tr>`,
  );
  rig.fake.page("https://www.amazon.com/dp/B0G6KD54ZK", { html });
  const r = await rig.call("/v1/utility/asin-to-gtin?asin=B0G6KD54ZK");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.deepEqual(r.body.identifiers, {
    UPC: "753747482348",
    GLOBAL_TRADE_IDENTIFICATION_NUMBER: "00753747482348",
  });
  assert.equal(r.body.gtin, "00753747482348");
  assert.equal(r.body.note, null);
});

Deno.test("result cache: an offers answer is served from the cache for 5 minutes, then fetched again", async () => {
  // Offers (prices, stock of other sellers) go stale fastest: the shortest TTL of all endpoints.
  const clock = new ManualClock();
  await using rig = await startRig({ wrap: (s, kv) => new CachingSource(s, kv, clock) });
  rig.fake.page(
    "https://www.amazon.com/gp/product/ajax/?asin=B0BN72FYFG&pc=dp&experienceId=aodAjaxMain",
    "offers/amazon.com__wk-aod-main-B0BN72FYFG.html",
  );
  const path = "/v1/products/offers?asin=B0BN72FYFG";
  const first = await rig.call(path);
  assert.equal(first.status, 200, JSON.stringify(first.body).slice(0, 300));
  assert.equal(first.headers.get("age"), null);

  clock.advance(5 * 60_000 - 1_000);
  const cached = await rig.call(path);
  assert.equal(cached.headers.get("age"), "299");
  assert.deepEqual(cached.body, first.body);
  assert.equal(rig.fake.pageRequests("experienceId=aodAjaxMain"), 1);

  clock.advance(2_000); // 5 minutes and a second after the fetch
  const fresh = await rig.call(path);
  assert.equal(fresh.status, 200, JSON.stringify(fresh.body).slice(0, 300));
  assert.equal(fresh.headers.get("age"), null, "fetched again, not a 301 s old answer");
  assert.equal(rig.fake.pageRequests("experienceId=aodAjaxMain"), 2);
});

Deno.test("result cache: an answer under 60,000 characters but over 60,000 bytes in UTF-8 is not cached", async () => {
  const clock = new ManualClock();
  await using rig = await startRig({ wrap: (s, kv) => new CachingSource(s, kv, clock) });
  // Long French terms: every "é" and "è" is one character and two bytes. The answer stays within
  // a KV value's 64 KiB as the store writes it (Latin-1 text, a byte a character), so a bound
  // counted in characters would keep it, while the 60,000 bytes the cache allows are exceeded.
  const clause = "Réservé aux élèves éligibles, créé et géré été après été. ";
  const terms = clause.repeat(900).trim();
  const page = PROMOTION_PAGE.replace(
    /(<div id="promotionTerms"[^>]*><span>)[^<]*/,
    (_, open: string) => open + terms,
  );
  rig.fake.page("https://www.amazon.com/promotion/psp/A2P3X1AN29HWHX", { html: page });
  const path = "/v1/promotions?promo_id=A2P3X1AN29HWHX";
  const first = await rig.call(path);
  assert.equal(first.status, 200, JSON.stringify(first.body).slice(0, 300));
  assert.equal(first.body.terms, terms);
  const json = JSON.stringify(first.body);
  assert.ok(json.length < 60_000, `${json.length} characters`);
  assert.ok(new TextEncoder().encode(json).length > 60_000);

  clock.advance(60_000); // well within the promotion TTL
  const second = await rig.call(path);
  assert.equal(second.status, 200);
  assert.equal(second.headers.get("age"), null, "not served from the cache");
  assert.deepEqual(second.body, first.body);
  assert.equal(rig.fake.pageRequests("/promotion/psp/A2P3X1AN29HWHX"), 2);
  assert.deepEqual(await cacheKeys(rig.server.kv), []);

  // The same answer in ASCII, as long in characters, fits in bytes too and is kept.
  const ascii = terms.replace(/[éè]/g, "e");
  rig.fake.page("https://www.amazon.com/promotion/psp/A2P3X1AN29HWHX", {
    html: page.replace(terms, ascii),
  });
  clock.advance(60_000);
  const plain = await rig.call(path);
  assert.equal(plain.body.terms, ascii);
  assert.deepEqual(await cacheKeys(rig.server.kv), ["promotion"]);
});

Deno.test("page reading: Amazon's 404 page served with HTTP 200 is named not_found and not handed to the parser", () => {
  // A page the call answers 404 for anyway: parsing it would only spend page-worker time, and
  // PageOutcome's contract is that `parsed` is absent for Amazon's 404 page.
  for (const parser of ["product", "promotion", "auto"] as const) {
    const read = readPage({
      parser,
      url: "https://www.amazon.com/dp/B000000000",
      marketplace: "US",
      status: 200,
      contentType: "text/html; charset=utf-8",
      wantLocation: false,
    }, new TextEncoder().encode(NOT_FOUND_PAGE));
    assert.equal(read.detection.kind, "not_found", parser);
    assert.equal(read.parsed, undefined, `${parser}: ${JSON.stringify(read.parsed)}`);
  }
});

/**
 * A search page whose result banner holds `fill` inside `levels` nested spans (the banner reader
 * reads each level's text, so `levels` copies), after `padding` characters of markup no reader
 * reads as text.
 */
function bannerPage(levels: number, fill: string, padding: number): string {
  return `<!doctype html><html><head><script>ue_pty='Search';</script>` +
    `<!--${"-".repeat(padding)}--></head><body><div data-component-type="s-result-info-bar"><h2>` +
    `${"<span>".repeat(levels)}${fill}${"</span>".repeat(levels)}</h2></div>` +
    `<div class="s-main-slot"><div data-component-type="s-search-result" data-asin="B000000001">` +
    `<h2><a href="/dp/B000000001"><span>Item</span></a></h2>` +
    `<span class="a-price"><span class="a-offscreen">$1.00</span></span></div></div></body></html>`;
}

Deno.test("page reading: a page may read up to twice its own length in text, not more", () => {
  const fill = "a ".repeat(512 * 1024); // 1 MiB
  const read = (html: string) =>
    readPage({
      parser: "search",
      url: "https://www.amazon.com/s?k=x",
      marketplace: "US",
      status: 200,
      contentType: "text/html",
      wantLocation: false,
    }, new TextEncoder().encode(html)).parsed;
  // 2 MiB of text read off a page of 1.5 MiB: within the budget, above the 1 MiB floor.
  const within = read(bannerPage(2, fill, 512 * 1024));
  assert.ok(within?.ok, JSON.stringify(within).slice(0, 300));
  // 3 MiB read off a page of 1 MiB: past it, an unread page (an uncharged 502 at the route).
  const past = read(bannerPage(3, fill, 0));
  assert.equal(past?.ok, false);
  assert.match((past as { message: string }).message, /characters of text/);
});

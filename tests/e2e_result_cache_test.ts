import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { CachingSource } from "../upstream/result_cache.ts";
import { ManualClock } from "../metering/clock.ts";
import { asResultsPage, fixture } from "./fixture.ts";

const DETAILS = "/v1/products/details?asin=B07H57DNVV";
const PAGE = "https://www.amazon.com/dp/B07H57DNVV";

Deno.test("a repeat within the TTL is served from the cache, still charged, with an Age header", async () => {
  const clock = new ManualClock();
  await using rig = await startRig({ wrap: (s, kv) => new CachingSource(s, kv, clock) });
  rig.fake.page(PAGE, "product/amazon.com__app-B07H57DNVV.html");
  const first = await rig.call(DETAILS);
  assert.equal(first.status, 200);
  assert.equal(first.headers.get("age"), null);
  assert.equal(rig.fake.pageRequests("/dp/B07H57DNVV"), 1);

  clock.advance(90_000);
  const second = await rig.call(`/v1/products/details?marketplace=US&asin=B07H57DNVV`);
  assert.equal(second.status, 200);
  assert.deepEqual(second.body, first.body);
  assert.equal(second.headers.get("age"), "90");
  assert.equal(second.headers.get("x-credits-cost"), "1");
  assert.equal(rig.fake.pageRequests("/dp/B07H57DNVV"), 1, "no second upstream fetch");

  // Read by a clock behind the writer's (another instance's, or one stepped back): Age 0, not
  // negative (probe FK).
  clock.advance(-95_000);
  const behind = await rig.call(DETAILS);
  assert.equal(behind.headers.get("age"), "0");
  clock.advance(5_000);

  clock.advance(15 * 60_000); // past the details TTL
  const third = await rig.call(DETAILS);
  assert.equal(third.status, 200);
  assert.equal(third.headers.get("age"), null);
  assert.equal(rig.fake.pageRequests("/dp/B07H57DNVV"), 2);
  const usage = await (await rig.server.get("/v1/usage", rig.key)).json();
  assert.equal(usage.requests_used, 4);
});

Deno.test("different parameters and failed calls are not served from the cache", async () => {
  const clock = new ManualClock();
  await using rig = await startRig({ wrap: (s, kv) => new CachingSource(s, kv, clock) });
  rig.fake.page(PAGE, "product/amazon.com__app-B07H57DNVV.html");
  rig.fake.fail("robot", 10, "/dp/B07H57DNVV");
  const blocked = await rig.call(DETAILS);
  assert.equal(blocked.status, 503);
  const zipCall = await rig.call(`${DETAILS}&marketplace=UK`);
  assert.notEqual(zipCall.status, 200, "another marketplace is another upstream page");
  const keys: string[] = [];
  for await (const e of rig.server.kv.list({ prefix: ["result_cache"] })) {
    keys.push(JSON.stringify(e.key));
  }
  assert.deepEqual(keys, [], "nothing failed was cached");
});

Deno.test("an answer that fails its schema is not cached: the fixed page is fetched at once", async () => {
  const clock = new ManualClock();
  await using rig = await startRig({ wrap: (s, kv) => new CachingSource(s, kv, clock) });
  const good = await fixture("product/amazon.com__app-B07H57DNVV.html");
  // A count beyond a safe integer: the parser reads it, the details schema refuses it (502).
  const bad = good.replace("33 customer reviews", "99999999999999999999 customer reviews");
  rig.fake.page(PAGE, { html: bad });
  const refused = await rig.call(DETAILS);
  assert.equal(refused.status, 502);
  assert.equal(refused.headers.get("x-credits-cost"), "0");
  rig.fake.page(PAGE, { html: good });
  clock.advance(60_000);
  const fixed = await rig.call(DETAILS);
  assert.equal(fixed.status, 200, "the page, fixed, is fetched again within the TTL");
  assert.equal(rig.fake.pageRequests("/dp/B07H57DNVV"), 2);
});

Deno.test("endpoints that take the same parameters each have their own cache entries: offers after details on one ASIN are offers", async () => {
  const clock = new ManualClock();
  await using rig = await startRig({ wrap: (s, kv) => new CachingSource(s, kv, clock) });
  rig.fake.page(
    "https://www.amazon.com/dp/B0BN72FYFG",
    "product/amazon.com__wk-B0BN72FYFG-renewed.html",
  );
  rig.fake.page(
    "https://www.amazon.com/gp/product/ajax/?asin=B0BN72FYFG&pc=dp&experienceId=aodAjaxMain",
    "offers/amazon.com__wk-aod-main-B0BN72FYFG.html",
  );
  const details = await rig.call("/v1/products/details?asin=B0BN72FYFG");
  assert.equal(details.status, 200, JSON.stringify(details.body).slice(0, 300));
  clock.advance(60_000); // within both endpoints' TTLs
  const offers = await rig.call("/v1/products/offers?asin=B0BN72FYFG");
  assert.equal(offers.status, 200, JSON.stringify(offers.body).slice(0, 300));
  assert.equal(offers.headers.get("age"), null, "fetched, not the details answer from the cache");
  assert.equal(offers.body.asin, "B0BN72FYFG");
  const list = offers.body.offers as unknown[];
  assert.ok(Array.isArray(list) && list.length > 0, JSON.stringify(offers.body).slice(0, 300));
  assert.equal(offers.body.count, list.length);
  assert.equal(rig.fake.pageRequests("experienceId=aodAjaxMain"), 1);
  // Each is served from its own entry on a repeat.
  clock.advance(60_000);
  const again = await rig.call("/v1/products/details?asin=B0BN72FYFG");
  assert.deepEqual(again.body, details.body);
  assert.equal(again.headers.get("age"), "120");
  const offersAgain = await rig.call("/v1/products/offers?asin=B0BN72FYFG");
  assert.deepEqual(offersAgain.body, offers.body);
  assert.equal(offersAgain.headers.get("age"), "60");
  assert.equal(rig.fake.pageRequests("/dp/B0BN72FYFG"), 1);
  assert.equal(rig.fake.pageRequests("experienceId=aodAjaxMain"), 1);
});

Deno.test("a search with limit is never served from the cache: a repeat fetches its pages again and pays one credit each", async () => {
  const clock = new ManualClock();
  await using rig = await startRig({ wrap: (s, kv) => new CachingSource(s, kv, clock) });
  const html = await fixture("search/amazon.com__pavel-ipad-pro.html");
  for (let p = 1; p <= 6; p++) {
    rig.fake.page(`https://www.amazon.com/s?k=ipad${p > 1 ? `&page=${p}` : ""}`, {
      html: asResultsPage(html, p),
    });
  }
  const path = "/v1/products/search?query=ipad&limit=40";
  const first = await rig.call(path);
  assert.equal(first.status, 200, JSON.stringify(first.body).slice(0, 300));
  assert.equal(first.body.count, 40); // 16-item pages: three of them
  assert.equal(first.headers.get("x-credits-cost"), "3");
  assert.equal(rig.fake.pageRequests("/s?"), 3);
  clock.advance(60_000); // within the search TTL
  const second = await rig.call(path);
  assert.equal(second.status, 200, JSON.stringify(second.body).slice(0, 300));
  assert.equal(second.headers.get("age"), null);
  assert.equal(second.body.count, 40);
  assert.equal(second.headers.get("x-credits-cost"), "3", "one credit per upstream page fetched");
  assert.equal(rig.fake.pageRequests("/s?"), 6, "its pages fetched again");
  const usage = await rig.call("/v1/usage");
  assert.equal((usage.body as { requests_used: number }).requests_used, 6);
  const keys: string[] = [];
  for await (const e of rig.server.kv.list({ prefix: ["result_cache"] })) {
    keys.push(JSON.stringify(e.key));
  }
  assert.deepEqual(keys, [], "no limit search kept");
});

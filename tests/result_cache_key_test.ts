/**
 * Result-cache keys tell parameters apart exactly as given (probe HN, K5): a search for "iPad"
 * and one for "ipad" are two upstream pages and two cache entries, never one served for the other.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { CachingSource } from "../upstream/result_cache.ts";
import { ManualClock } from "../metering/clock.ts";
import { asResultsPage, fixture } from "./fixture.ts";
import { hashKey } from "../metering/api_key.ts";

Deno.test("searches whose words differ only in case are cached apart: the second is fetched, not served with Age", async () => {
  const clock = new ManualClock();
  await using rig = await startRig({ wrap: (s, kv) => new CachingSource(s, kv, clock) });
  const html = await fixture("search/amazon.com__pavel-ipad-pro.html");
  rig.fake.page("https://www.amazon.com/s?k=iPad", { html: asResultsPage(html, 1) });
  rig.fake.page("https://www.amazon.com/s?k=ipad", { html: asResultsPage(html, 1) });
  const upper = await rig.call("/v1/products/search?query=iPad");
  assert.equal(upper.status, 200);
  clock.advance(30_000);
  const lower = await rig.call("/v1/products/search?query=ipad");
  assert.equal(lower.status, 200);
  assert.equal(lower.headers.get("age"), null, "not the other query's cache entry");
  assert.equal(rig.fake.pageRequests("/s?"), 2, "two upstream fetches");
  const again = await rig.call("/v1/products/search?query=iPad");
  assert.equal(again.headers.get("age"), "30", "each query keeps its own entry");
  assert.equal(rig.fake.pageRequests("/s?"), 2);
});

Deno.test("hashKey is the SHA-256 of the value exactly as given, case included", () => {
  const token = "AbC_" + "0F".repeat(8);
  assert.notEqual(hashKey(token), hashKey(token.toLowerCase()));
  assert.equal(
    hashKey("ABC"),
    "b5d4045c3f466fa91fe2cc6abe79232a1a57cdf104f7a26e716e0a1e2789df78",
  );
});

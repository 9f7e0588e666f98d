/**
 * How close two identical readings of a product may be and still be one point of its price
 * history (upstream/price_history.ts): calls that shared one upstream fetch are one reading, but a
 * page read again a little later is an observation of its own. Real HTTP through the rig, the
 * fake marketplace serving the real product page, the history's clock moved by hand.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { HistorySource } from "../upstream/price_history.ts";
import type { DataSource } from "../upstream/data_source.ts";

const DP = "https://www.amazon.com/dp/B07H57DNVV";
const PAGE = "product/amazon.com__app-B07H57DNVV.html";

Deno.test("history: the same reading 5 s later is no new point, 15 s later it is one", async () => {
  let at = Date.parse("2025-03-01T12:00:00Z");
  let history: HistorySource | undefined;
  await using rig = await startRig({
    wrap: (
      source: DataSource,
      kv: Deno.Kv,
    ) => (history = new HistorySource(source, kv, { now: () => at })),
  });
  rig.fake.page(DP, PAGE);
  for (const after of [0, 5_000, 10_000]) {
    at += after;
    const r = await rig.call("/v1/products/details?asin=B07H57DNVV");
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
    await history!.settled();
  }
  const r = await rig.call("/v1/products/history?asin=B07H57DNVV");
  assert.equal(r.status, 200, JSON.stringify(r.body));
  // The page unchanged each time: only the spacing decides. Newest first.
  assert.deepEqual((r.body.points as { observed_at: string }[]).map((p) => p.observed_at), [
    "2025-03-01T12:00:15.000Z",
    "2025-03-01T12:00:00.000Z",
  ]);
  // Three readings of the page, not one fetch shared: what the window merged was a repeat.
  assert.equal(rig.fake.pageRequests("/dp/B07H57DNVV"), 3);
});

/**
 * Price history at its bounds, over real HTTP with the fake marketplace: two readings the clock
 * cannot tell apart still get their own, ordered times; a product stored over the 1,000-point
 * bound (by an earlier process, or one that forgot its count) is trimmed on this process's first
 * append; and the history answer holds at most 1,000 points whatever the store holds.
 */
import assert from "node:assert/strict";
import { type Rig, startRig } from "./upstream_harness.ts";
import { fixture } from "./fixture.ts";
import { HISTORY_POINTS, HistorySource, type Observation } from "../upstream/price_history.ts";
import { systemClock } from "../metering/clock.ts";
import type { DataSource } from "../upstream/data_source.ts";
import { parseProduct } from "../parsers/product.ts";
import { envelope } from "../upstream/envelopes.ts";
import { KV } from "../metering/kv_layout.ts";

const DP = "https://www.amazon.com/dp/B07H57DNVV";
const PAGE = "product/amazon.com__app-B07H57DNVV.html";

/** A rig whose source records history on `clock`; `settled` waits for the appends started. */
async function historyRig(clock = systemClock) {
  let history: HistorySource | undefined;
  const rig = await startRig({
    wrap: (source: DataSource, kv: Deno.Kv) => (history = new HistorySource(source, kv, clock)),
  });
  return { rig, settled: () => history!.settled() };
}

/** Stores `n` observations of B07H57DNVV as the page reads, 1 ms apart; the newest's time. */
async function stored(rig: Rig, n: number): Promise<number> {
  const reading = envelope.details(
    {},
    "US",
    { url: DP, authenticated: false },
    parseProduct(await fixture(PAGE), { marketplace: "US" }),
  );
  const t0 = Date.now() - 3_600_000 - n;
  for (let i = 0; i < n; i += 100) {
    const op = rig.server.kv.atomic();
    for (let j = i; j < Math.min(n, i + 100); j++) {
      const point: Observation = {
        observed_at: new Date(t0 + j).toISOString(),
        price: reading.price,
        in_stock: true,
        rating: reading.rating,
        reviews_count: reading.reviews_count,
        bestsellers_rank: reading.bestsellers_rank,
      };
      op.set(KV.history("US", "B07H57DNVV", t0 + j, "0000test"), point);
    }
    assert.ok((await op.commit()).ok);
  }
  return t0 + n - 1;
}

async function storedCount(rig: Rig): Promise<number> {
  return (await Array.fromAsync(rig.server.kv.list({ prefix: KV.historyOf("US", "B07H57DNVV") })))
    .length;
}

Deno.test("history: two readings at the same clock time get distinct observed_at, newest first", async () => {
  const at = Date.parse("2025-03-01T12:00:00Z");
  const { rig, settled } = await historyRig({ now: () => at });
  await using _ = rig;
  rig.fake.page(DP, PAGE);
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV")).status, 200);
  await settled();
  const page = await fixture(PAGE);
  rig.fake.page(DP, { html: page.replaceAll("$11.88", "$10.50") });
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV")).status, 200);
  await settled();
  const r = await rig.call("/v1/products/history?asin=B07H57DNVV");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  const points = r.body.points as { observed_at: string; price: { amount: number } }[];
  assert.deepEqual(points.map((p) => [p.observed_at, p.price.amount]), [
    ["2025-03-01T12:00:00.001Z", 10.5],
    ["2025-03-01T12:00:00.000Z", 11.88],
  ]);
});

Deno.test("history: a product stored over the bound is trimmed to 1,000 on this process's first append", async () => {
  const { rig, settled } = await historyRig();
  await using _ = rig;
  const before = await stored(rig, HISTORY_POINTS + 5);
  rig.fake.page(DP, PAGE);
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV")).status, 200);
  await settled();
  assert.equal(await storedCount(rig), HISTORY_POINTS);
  const [newest] = await Array.fromAsync(
    rig.server.kv.list<Observation>({ prefix: KV.historyOf("US", "B07H57DNVV") }, {
      reverse: true,
      limit: 1,
    }),
  );
  assert.ok(Date.parse(newest.value.observed_at) > before, "the new reading is kept");
});

Deno.test("history: the answer holds the newest 1,000 points however many are stored", async () => {
  const { rig } = await historyRig();
  await using _ = rig;
  const newest = await stored(rig, HISTORY_POINTS + 20);
  assert.equal(await storedCount(rig), HISTORY_POINTS + 20);
  const r = await rig.call("/v1/products/history?asin=B07H57DNVV");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  const points = r.body.points as { observed_at: string }[];
  assert.equal(points.length, HISTORY_POINTS);
  assert.equal(points[0].observed_at, new Date(newest).toISOString());
  assert.equal(points.at(-1)!.observed_at, new Date(newest - HISTORY_POINTS + 1).toISOString());
});

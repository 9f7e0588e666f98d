/**
 * Price history's cost to the call that produces it (issue 17.3): details calls through a data
 * source that answers at once, with and without HistorySource in front (appends to a KV file,
 * not awaited by the call), 64 at a time, in alternating rounds. Prints calls/s and the work the
 * append adds per call, against what an uncached details call costs anyway.
 */
import { HistorySource } from "../upstream/price_history.ts";
import type { DataSource } from "../upstream/data_source.ts";
import { systemClock } from "../metering/clock.ts";
import { parseProduct } from "../parsers/product.ts";
import { DATA_ENDPOINTS } from "../schemas/endpoints.ts";
import { fixture } from "../tests/fixture.ts";
import { median } from "./median.ts";
import { removeKvFiles } from "../core/kv_files.ts";

const CALLS = 4_000;
const CONCURRENCY = 64;

async function rate(source: DataSource, asinOf: (i: number) => string): Promise<number> {
  const details = DATA_ENDPOINTS.find((e) => e.name === "details")!;
  let next = 0;
  const t = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < CALLS) {
      const i = next++;
      await source.fetch({
        endpoint: details,
        params: { asin: asinOf(i) },
        chargePage: () => Promise.resolve(false),
      });
    }
  }));
  return CALLS / ((performance.now() - t) / 1000);
}

export async function benchHistory(rounds = 5): Promise<void> {
  const body = parseProduct(await fixture("product/amazon.com__app-B07H57DNVV.html"), {
    marketplace: "US",
  });
  const inner: DataSource = { fetch: () => Promise.resolve(body) };
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(kvPath);
  const recorded = new HistorySource(inner, kv, systemClock);
  const bare: number[] = [];
  const withHistory: number[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      bare.push(await rate(inner, (i) => `B0${String(i % 500).padStart(8, "0")}`));
      withHistory.push(await rate(recorded, (i) => `B0${String(i % 500).padStart(8, "0")}`));
      await recorded.settled();
    }
  } finally {
    kv.close();
    await removeKvFiles(kvPath);
  }
  const b = median(bare), h = median(withHistory);
  console.log(
    `price history (details calls answered at once, ${CONCURRENCY} at a time, medians of ${rounds} rounds; KV file):`,
  );
  const addedUs = (1 / h - 1 / b) * 1e6;
  console.log(`  without history ${b.toFixed(0).padStart(8)} calls/s`);
  console.log(`  with history    ${h.toFixed(0).padStart(8)} calls/s`);
  console.log(
    `  history adds ${
      addedUs.toFixed(1)
    } µs of serving-thread work per details call (not awaited ` +
      "by the call); an uncached details call costs 9.5–24 ms of CPU (bench workers), so " +
      `${((addedUs / 9_500) * 100).toFixed(2)}% of the cheapest`,
  );
}

if (import.meta.main) await benchHistory();

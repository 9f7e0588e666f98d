/**
 * The app the gateway benchmarks load: the real app on a real KV file (BENCH_KV, else a temporary
 * one removed on exit), one plan with room for any load, and a data source that answers at once.
 */
import { createApp } from "../app.ts";
import { systemClock } from "../metering/clock.ts";
import { Plans } from "../metering/plans.ts";
import { BENCH_BODY } from "./bench_body.ts";
import { removeKvFilesSync } from "../core/kv_files.ts";

export async function benchApp(maxKeys: number) {
  const kvPath = Deno.env.get("BENCH_KV") ?? await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(kvPath);
  const plans = new Plans([{
    id: "bench",
    credits: 1_000_000_000,
    rate_limit_per_sec: 1_000_000,
    max_keys: maxKeys,
    groups: ["products"],
  }]);
  globalThis.addEventListener("unload", () => kvPath !== ":memory:" && removeKvFilesSync(kvPath));
  return createApp({
    kv,
    plans,
    clock: systemClock,
    dataSource: { fetch: () => Promise.resolve(BENCH_BODY) },
  });
}

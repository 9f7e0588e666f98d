/**
 * The gateway benchmark's subject: the real app on a real KV file, with a data source that
 * answers at once, and one account whose key every request uses (the hot-account case).
 */
import { createApp } from "../app.ts";
import { systemClock } from "../metering/clock.ts";
import { Plans } from "../metering/plans.ts";
import { BENCH_BODY } from "./bench_body.ts";

const kvPath = Deno.env.get("BENCH_KV") ?? await Deno.makeTempFile({ suffix: ".kv" });
const kv = await Deno.openKv(kvPath);
const plans = new Plans([{
  id: "bench",
  credits: 1_000_000_000,
  rate_limit_per_sec: 1_000_000,
  max_keys: 1,
  groups: ["products"],
}]);
const { app, deps } = createApp({
  kv,
  plans,
  clock: systemClock,
  dataSource: { fetch: () => Promise.resolve(BENCH_BODY) },
});
const account = await deps.accounts.create("bench@example.com", "bench");
const { value } = await deps.accounts.createKey(account.id);
const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, app.fetch);
console.log(
  JSON.stringify({
    url: `http://127.0.0.1:${server.addr.port}/v1/products/offers?asin=B07H57DNVV`,
    key: value,
  }),
);
globalThis.addEventListener("unload", () => kvPath !== ":memory:" && Deno.removeSync(kvPath));
for (const sig of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(sig, () => Deno.exit(0));

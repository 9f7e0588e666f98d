/**
 * `deno task bench`: every figure next to its baseline measured in the same run, with the ratio.
 * Timings are only ever compared here, never asserted in tests.
 */
import { benchGateway, haveWrk, type LoadResult } from "./gateway.ts";
import { benchParsers } from "./parsers.ts";
import { benchUpstream } from "./upstream.ts";
import { benchPageWorkers } from "./page_workers.ts";
import { benchHistory } from "./history.ts";
import { benchMeteringSpread } from "./metering_spread.ts";

const only = Deno.args[0];

if (!only || only === "gateway") {
  if (!(await haveWrk())) {
    console.log(
      "gateway: wrk not found; install it with `apt-get install -y wrk` (Debian) and run again",
    );
  } else {
    const rounds = 5, seconds = 2;
    for (const connections of [64, 256]) {
      const { bare, deferred, durable, metered } = await benchGateway(rounds, seconds, connections);
      const line = (name: string, r: LoadResult) =>
        `  ${name.padEnd(14)}${r.rps.toFixed(0).padStart(8)} req/s  p50 ${
          r.p50.toFixed(2)
        } ms  p99 ${r.p99.toFixed(2)} ms`;
      const times = (r: { rps: number }, base: { rps: number }) => (r.rps / base.rps).toFixed(2);
      console.log(
        `gateway (wrk, 2 threads, ${connections} connections; medians of ${rounds} interleaved ${seconds} s runs; ` +
          "one hot account on a KV file):",
      );
      console.log(line("bare Hono", bare));
      console.log(line("metered call", metered));
      console.log(`  ratio metered/bare: ${times(metered, bare)} (target ≥ 0.50)`);
      const versus = (name: string, r: LoadResult) =>
        `${line(name, r)}  (${times(r, bare)} × bare; metered/${name.split(" ")[0]} ${
          times(metered, r)
        })`;
      console.log(versus("deferred Hono", deferred));
      console.log(
        "    the same six headers, released in waves after an in-memory KV read; no metering",
      );
      console.log(versus("durable Hono", durable));
      console.log(
        "    released in waves after one checked commit to a KV file each, one in flight, as a meter\n" +
          "    whose 200s are durable and whose admissions are exact must be; no metering: the ceiling",
      );
    }
  }
}

if (!only || only === "parsers") await benchParsers();

if (!only || only === "upstream") await benchUpstream();

if (!only || only === "workers") await benchPageWorkers();

if (!only || only === "history") await benchHistory();

if (!only || only === "spread") await benchMeteringSpread();

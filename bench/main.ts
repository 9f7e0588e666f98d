/**
 * `deno task bench`: every figure next to its baseline measured in the same run, with the ratio.
 * Timings are only ever compared here, never asserted in tests.
 */
import { benchGateway, haveWrk } from "./gateway.ts";
import { benchParsers } from "./parsers.ts";
import { benchUpstream } from "./upstream.ts";

const only = Deno.args[0];

if (!only || only === "gateway") {
  if (!(await haveWrk())) {
    console.log(
      "gateway: wrk not found; install it with `apt-get install -y wrk` (Debian) and run again",
    );
  } else {
    const rounds = 5, seconds = 2;
    for (const connections of [64, 256]) {
      const { bare, deferred, metered } = await benchGateway(rounds, seconds, connections);
      const line = (name: string, r: { rps: number; p50: number; p99: number }) =>
        `  ${name.padEnd(14)}${r.rps.toFixed(0).padStart(8)} req/s  p50 ${
          r.p50.toFixed(2)
        } ms  p99 ${r.p99.toFixed(2)} ms`;
      console.log(
        `gateway (wrk, 2 threads, ${connections} connections; medians of ${rounds} interleaved ${seconds} s runs; ` +
          "one hot account on a KV file):",
      );
      console.log(line("bare Hono", bare));
      console.log(line("metered call", metered));
      console.log(`  ratio metered/bare: ${(metered.rps / bare.rps).toFixed(2)} (target ≥ 0.50)`);
      console.log(
        line("deferred Hono", deferred) + `  (${(deferred.rps / bare.rps).toFixed(2)} × bare)`,
      );
      console.log(
        `  ratio metered/deferred: ${(metered.rps / deferred.rps).toFixed(2)}` +
          " (deferred Hono: the same six headers, sent one event-loop turn later, as a 200 whose charge" +
          " must be durable first always is; no metering)",
      );
    }
  }
}

if (!only || only === "parsers") await benchParsers();

if (!only || only === "upstream") await benchUpstream();

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
    console.log("gateway: wrk not found; install it with `apt-get install -y wrk` (Debian) and run again");
  } else {
    for (const connections of [64, 256]) {
      const { bare, metered } = await benchGateway(5, connections);
      console.log(`gateway (wrk, 2 threads, ${connections} connections, 5 s; one hot account on a KV file):`);
      console.log(`  bare Hono     ${bare.rps.toFixed(0).padStart(8)} req/s  p50 ${bare.p50.toFixed(2)} ms  p99 ${bare.p99.toFixed(2)} ms`);
      console.log(`  metered call  ${metered.rps.toFixed(0).padStart(8)} req/s  p50 ${metered.p50.toFixed(2)} ms  p99 ${metered.p99.toFixed(2)} ms`);
      console.log(`  ratio metered/bare: ${(metered.rps / bare.rps).toFixed(2)} (target ≥ 0.50)`);
    }
  }
}

if (!only || only === "parsers") await benchParsers();

if (!only || only === "upstream") await benchUpstream();

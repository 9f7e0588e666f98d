/**
 * Reference point for the gateway benchmark: bare Hono answering the same body with the same six
 * metering headers, one event-loop turn after the request arrived, with no metering at all.
 *
 * A metered 200 can only be sent once its charge is durable (a 200 never goes uncharged, even
 * across a crash), so it always waits for a KV commit, which completes in a later turn. Deno.serve
 * answers a request in the turn it arrived much more cheaply than later, and a response with more
 * than a content type misses its static fast path; this server pays exactly those two costs, so
 * the metered figure against it is what the metering itself costs (auth, validation, the
 * decision and the commit).
 */
import { Hono } from "hono";
import { BENCH_BODY } from "./bench_body.ts";
import { meterHeaders } from "../routes/meter_headers.ts";
import { setImmediate } from "node:timers";

const snapshot = {
  remaining: 1_000_000_000,
  periodStart: Date.now(),
  periodEnd: Date.now() + 30 * 24 * 3600 * 1000,
  rateLimit: 1_000_000,
  windowRemaining: 1_000_000,
};

// Requests wait in waves, as a metered batch waits for its one commit: the requests of a turn
// gather (setImmediate, as the meter does), then one read of an in-memory KV, an async operation
// that completes in a later turn, releases them (a timer would add a delay).
const kv = await Deno.openKv(":memory:");
let waiting: (() => void)[] = [];
function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    if (waiting.push(resolve) > 1) return;
    setImmediate(() =>
      kv.get(["wave"]).then(() => {
        const wave = waiting;
        waiting = [];
        for (const release of wave) release();
      })
    );
  });
}

const app = new Hono();
app.get("/v1/products/offers", async () => {
  await nextTurn();
  snapshot.remaining--;
  return Response.json(BENCH_BODY, { headers: meterHeaders(snapshot, 1, Date.now()) });
});
const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, app.fetch);
console.log(
  JSON.stringify({
    url: `http://127.0.0.1:${server.addr.port}/v1/products/offers?asin=B07H57DNVV`,
  }),
);

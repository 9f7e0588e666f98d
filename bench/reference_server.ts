/**
 * Reference points for the gateway benchmark: bare Hono answering the same body with the same six
 * metering headers, released in waves exactly as the meter releases its batches, with no metering
 * at all. Two kinds of wave, chosen by the first argument:
 *
 * - (none) *deferred*: a wave waits for one read of an in-memory KV. A metered 200 can only be
 *   sent once its charge is durable, so it always completes in a later turn than its request
 *   arrived; Deno.serve answers in the arriving turn much more cheaply, and a response with more
 *   than a content type misses its static fast path. This server pays exactly those two costs.
 * - `durable`: a wave waits for one checked commit of an account-sized record to a KV file, the
 *   least any meter does whose 200s are durable and whose admissions are exact across processes:
 *   one commit in flight per account, as the next must be checked against the versionstamp this
 *   one produces. This is the ceiling for the metered call on this machine and disk.
 */
import { Hono } from "hono";
import { BENCH_BODY, referenceSnapshot } from "./bench_body.ts";
import { meterHeaders } from "../routes/meter_headers.ts";
import { setImmediate } from "node:timers";
import { removeKvFilesSync } from "../core/kv_files.ts";

const durable = Deno.args[0] === "durable";
const kvPath = durable ? await Deno.makeTempFile({ suffix: ".kv" }) : ":memory:";
const kv = await Deno.openKv(kvPath);

const snapshot = referenceSnapshot();
// About the size of the bench account's record (760 bytes serialized, see metering/transact.ts).
const record = { pad: "x".repeat(730), calls: 0 };
let versionstamp: string | null = null;

function wave(size: number): Promise<unknown> {
  if (!durable) return kv.get(["wave"]);
  record.calls += size;
  return kv.atomic().check({ key: ["wave"], versionstamp }).set(["wave"], record).commit()
    .then((r) => {
      if (!r.ok) throw new Error("the reference's commit conflicted");
      versionstamp = r.versionstamp;
    });
}

// As in the meter: requests gather until the end of the turn, one operation serves them all,
// and those arriving while it runs wait for the next one.
let gathering: (() => void)[] = [];
let running = false;
function released(): Promise<void> {
  return new Promise((resolve) => {
    if (gathering.push(resolve) === 1 && !running) setImmediate(flush);
  });
}
function flush(): void {
  const batch = gathering;
  gathering = [];
  running = true;
  wave(batch.length).then(() => {
    running = false;
    for (const release of batch) release();
    if (gathering.length) setImmediate(flush);
  });
}

const app = new Hono();
app.get("/v1/products/offers", async () => {
  await released();
  snapshot.remaining--;
  return Response.json(BENCH_BODY, { headers: meterHeaders(snapshot, 1, Date.now()) });
});
const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, app.fetch);
console.log(
  JSON.stringify({
    url: `http://127.0.0.1:${server.addr.port}/v1/products/offers?asin=B07H57DNVV`,
  }),
);
globalThis.addEventListener("unload", () => durable && removeKvFilesSync(kvPath));
for (const sig of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(sig, () => Deno.exit(0));

/**
 * A watch's event wakes the webhook delivery loop at once (watches/mod.ts wires the scheduler's
 * onEvent to delivery.wake()), over real HTTP with a loopback receiver: with the delivery poll set
 * to 10 s, the event reaches the receiver within 3 s of the refresh that found the change, not at
 * the next poll.
 *
 * The product source is a stand-in whose price moves on every refresh (each refresh after the
 * first is a change): what is under test is when the delivery loop runs, not the page parser.
 */
import assert from "node:assert/strict";
import { ControlledSource, startServer } from "./test_server.ts";
import { createdWatch, receiver, until, watchList } from "./webhook_receiver.ts";
import type { DataRequest } from "../upstream/data_source.ts";
import { detailsAt } from "./watch_details.ts";
import { KV } from "../metering/kv_layout.ts";

const LONG_POLL_MS = 10_000;
const WITHIN_MS = 3_000;

/** Details pages whose price goes up by one on every fetch. */
class MovingPrice extends ControlledSource {
  price = 10;

  override fetch(req: DataRequest): Promise<unknown> {
    if (req.endpoint.name !== "details") return super.fetch(req);
    this.calls++;
    const amount = this.price++;
    return Promise.resolve(detailsAt(req.params.asin, amount));
  }
}

/** A server refreshing due watches every 50 ms whose webhook delivery polls every `pollMs`. */
function watching(pollMs: number) {
  return startServer({
    source: new MovingPrice(),
    watches: {
      minSeconds: 1,
      allowPrivate: true,
      run: true,
      scheduler: { pollMs: 50 },
      webhooks: { pollMs, retryMs: 50, maxDelayMs: 100 },
    },
  });
}

Deno.test("watch event: wakes the webhook delivery at once instead of waiting for its poll", async () => {
  await using s = await watching(LONG_POLL_MS);
  await using hook = receiver();
  const a = await s.account("scale");
  const w = await createdWatch(s.url, a.key, hook.url, 1);
  // The second refresh (1 s after the first) moves the price: an event is queued.
  const changed = await until("a refresh that found a change", async () => {
    const v = (await watchList(s.url, a.key)).find((x) => x.id === w.id);
    return v && v.refreshes >= 2 ? Date.now() : undefined;
  });
  const got = await until(
    "the event at the receiver",
    () => Promise.resolve(hook.got[0]),
    WITHIN_MS,
  );
  assert.equal(JSON.parse(got.body).watch_id, w.id);
  assert.ok(got.at - changed < WITHIN_MS, `delivered ${got.at - changed} ms after the change`);
});

Deno.test("schedule entries holding no id are dropped, and every account's refreshes and events go on (probe HF)", async () => {
  await using s = await watching(50);
  await using hook = receiver();
  const other = await s.account("scale");
  const a = await s.account("scale");
  // As a restored file or a damaged store could hold them: due at once, ahead of every real one.
  await s.kv.set(KV.watchDue(0, "wat_junk"), { x: 1 });
  await s.kv.set(KV.webhookDueOf(other.id, 0, "evt_junk"), 5);
  const w = await createdWatch(s.url, a.key, hook.url, 1);
  const got = await until("the event at the receiver", () => Promise.resolve(hook.got[0]));
  assert.equal(JSON.parse(got.body).watch_id, w.id);
  assert.equal((await s.kv.get(KV.watchDue(0, "wat_junk"))).versionstamp, null);
  assert.equal((await s.kv.get(KV.webhookDueOf(other.id, 0, "evt_junk"))).versionstamp, null);
});

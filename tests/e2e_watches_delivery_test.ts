/**
 * Watch refreshes and webhook deliveries at their edges, over real HTTP with the loopback fake
 * marketplace: a refresh that fails upstream is refunded and sends nothing; an event nobody
 * accepts is given up after the day (shortened here) and leaves the outbox; the events of a
 * deleted watch are dropped; and a webhook host that turns private after the watch was created
 * is refused at delivery.
 */
import assert from "node:assert/strict";
import { type Rig, startRig } from "./upstream_harness.ts";
import { fixture } from "./fixture.ts";
import { receiver, until } from "./webhook_receiver.ts";
import { WatchCreated, WatchList, type WatchView } from "../schemas/watches.ts";
import { KV } from "../metering/kv_layout.ts";

const DP = "https://www.amazon.com/dp/B07H57DNVV";
const PAGE = "product/amazon.com__app-B07H57DNVV.html";
const FAST = {
  minSeconds: 1,
  allowPrivate: true,
  run: true,
  scheduler: { pollMs: 50 },
  webhooks: { pollMs: 50, retryMs: 50, maxDelayMs: 100 },
};

async function create(rig: Rig, webhook: string) {
  const r = await fetch(`${rig.server.url}/v1/watches`, {
    method: "POST",
    headers: { "x-api-key": rig.key, "content-type": "application/json" },
    body: JSON.stringify({
      asin: "B07H57DNVV",
      every_seconds: 1,
      webhook_url: webhook,
      on: ["price"],
    }),
  });
  assert.equal(r.status, 201);
  return WatchCreated.parse(await r.json());
}

async function watchOf(rig: Rig, id: string): Promise<WatchView | undefined> {
  const r = await fetch(`${rig.server.url}/v1/watches`, { headers: { "x-api-key": rig.key } });
  return WatchList.parse(await r.json()).watches.find((w) => w.id === id);
}

async function outbox(kv: Deno.Kv): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix: KV.webhookSchedule })) n++;
  return n;
}

/** A watch whose first refresh is recorded, then a price change: one event is on its way. */
async function changedWatch(rig: Rig, webhook: string) {
  const page = await fixture(PAGE);
  rig.fake.page(DP, PAGE);
  const w = await create(rig, webhook);
  await until(
    "the first refresh",
    async () => ((await watchOf(rig, w.id))!.refreshes ? 1 : undefined),
  );
  rig.fake.page(DP, { html: page.replaceAll("$11.88", "$7.77") });
  return w;
}

Deno.test("watch refresh: an upstream failure is refunded, noted, and sends nothing", async () => {
  await using rig = await startRig({ watches: FAST, plan: "scale" });
  await using hook = receiver();
  rig.fake.page(DP, { status: 404, html: "<html><body>Not found</body></html>" });
  const w = await create(rig, hook.url);
  const seen = await until("a failed refresh", async () => {
    const v = await watchOf(rig, w.id);
    return v?.last_error ? v : undefined;
  });
  await fetch(`${rig.server.url}/v1/watches/${w.id}`, {
    method: "DELETE",
    headers: { "x-api-key": rig.key },
  }).then((r) => r.body?.cancel());
  assert.match(seen.last_error!, /not_found/);
  assert.equal(seen.refreshes, 0);
  assert.equal(seen.status, "active");
  const usage = await rig.call("/v1/usage");
  assert.equal(usage.body.requests_used, 0, "a failed refresh was charged");
  assert.equal(hook.got.length, 0);
});

Deno.test("webhook delivery: an event nobody accepts is given up after the day and leaves the outbox", async () => {
  const watches = { ...FAST, webhooks: { ...FAST.webhooks, giveUpMs: 600 } };
  await using rig = await startRig({ watches, plan: "scale" });
  await using hook = receiver(() => 500);
  const w = await changedWatch(rig, hook.url);
  const noted = await until("giving up", async () => {
    const v = await watchOf(rig, w.id);
    return v?.deliveries.find((d) => d.result.includes("given up"));
  });
  assert.equal(noted.delivered, false);
  const attempts = hook.got.length;
  assert.ok(attempts >= 2, `${attempts} attempts`);
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(hook.got.length, attempts, "attempts went on after giving up");
  assert.equal(new Set(hook.got.map((g) => g.body)).size, 1);
  await fetch(`${rig.server.url}/v1/watches/${w.id}`, {
    method: "DELETE",
    headers: { "x-api-key": rig.key },
  }).then((r) => r.body?.cancel());
  assert.equal(await outbox(rig.server.kv), 0);
});

Deno.test("webhook delivery: the events of a deleted watch are dropped", async () => {
  await using rig = await startRig({ watches: FAST, plan: "scale" });
  await using hook = receiver(() => 500);
  const w = await changedWatch(rig, hook.url);
  await until("a failed attempt", () => Promise.resolve(hook.got.length ? 1 : undefined));
  const gone = await fetch(`${rig.server.url}/v1/watches/${w.id}`, {
    method: "DELETE",
    headers: { "x-api-key": rig.key },
  });
  assert.equal(gone.status, 200);
  await gone.body?.cancel();
  await until("an empty outbox", async () => ((await outbox(rig.server.kv)) === 0 ? 1 : undefined));
  const attempts = hook.got.length;
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(hook.got.length, attempts);
});

Deno.test("webhook delivery: a host that turns private after creation is refused at delivery", async () => {
  const dns: Record<string, string[]> = { "flip.example.com": ["93.184.216.34"] };
  const watches = {
    ...FAST,
    allowPrivate: false,
    resolve: (host: string) => Promise.resolve(dns[host] ?? []),
  };
  await using rig = await startRig({ watches, plan: "scale" });
  const w = await changedWatch(rig, "http://flip.example.com/hook");
  dns["flip.example.com"] = ["127.0.0.1"];
  const note = await until(
    "a delivery attempt",
    async () => (await watchOf(rig, w.id))?.deliveries[0],
  );
  await fetch(`${rig.server.url}/v1/watches/${w.id}`, {
    method: "DELETE",
    headers: { "x-api-key": rig.key },
  }).then((r) => r.body?.cancel());
  assert.equal(note.delivered, false);
  assert.equal(note.result, "refused: the host resolves to a private address (127.0.0.1)");
});

/**
 * The meter's headers on refusals (probe HN, R4-R6, U2): a 403 and a 429 rate_limited still tell
 * the credits left and the window, a 429 quota_exhausted names the reset time it also sends, and
 * /v1/usage says it cost nothing. A 503 busy (an account record too contended to commit) says
 * when to retry.
 */
import assert from "node:assert/strict";
import { ManualClock, startServer } from "./test_server.ts";
import { BUILTIN_PLANS, Plans } from "../metering/plans.ts";
import { KV } from "../metering/kv_layout.ts";

const OFFERS = "/v1/products/offers?asin=B07H57DNVV";
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

Deno.test("a 403 forbidden for an inactive account carries the credit and rate headers", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0, 100));
  await using s = await startServer({ clock });
  const { id, key } = await s.account("starter");
  const ok = await s.get(OFFERS, key);
  assert.equal(ok.status, 200);
  await ok.body?.cancel();
  await s.accounts.update(id, { status: "inactive" });
  clock.advance(1_000);
  const r = await s.get(OFFERS, key);
  assert.equal(r.status, 403);
  assert.equal((await r.json()).error.code, "forbidden");
  assert.equal(r.headers.get("x-credits-remaining"), "4999");
  assert.match(r.headers.get("x-credits-reset") ?? "", ISO);
  assert.equal(r.headers.get("ratelimit-policy"), '"per-key";q=5;w=1');
  assert.match(r.headers.get("ratelimit") ?? "", /^"per-key";r=\d+;t=1$/);
});

Deno.test("a 429 rate_limited carries the credit and rate headers beside Retry-After", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0, 100));
  await using s = await startServer({ clock });
  const { key } = await s.account("free");
  const first = await s.get(OFFERS, key);
  assert.equal(first.status, 200);
  await first.body?.cancel();
  const r = await s.get(OFFERS, key);
  assert.equal(r.status, 429);
  assert.equal((await r.json()).error.code, "rate_limited");
  assert.equal(r.headers.get("retry-after"), "1");
  assert.equal(r.headers.get("x-credits-remaining"), "49");
  assert.equal(r.headers.get("x-credits-reset"), first.headers.get("x-credits-reset"));
  assert.equal(r.headers.get("ratelimit-policy"), '"per-key";q=1;w=1');
  assert.equal(r.headers.get("ratelimit"), '"per-key";r=0;t=1');
});

Deno.test("a 429 quota_exhausted with nothing held names the reset time it sends in x-credits-reset", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0, 100));
  const plans = new Plans([...BUILTIN_PLANS, {
    id: "one",
    credits: 1,
    rate_limit_per_sec: 100,
    max_keys: 1,
    groups: ["products"],
  }]);
  await using s = await startServer({ clock, plans });
  const { key } = await s.account("one");
  const paid = await s.get(OFFERS, key);
  assert.equal(paid.status, 200);
  await paid.body?.cancel();
  const r = await s.get(OFFERS, key);
  assert.equal(r.status, 429);
  const body = await r.json();
  assert.equal(body.error.code, "quota_exhausted");
  const reset = r.headers.get("x-credits-reset")!;
  assert.match(reset, ISO);
  assert.equal(r.headers.get("retry-after"), null);
  assert.equal(
    body.error.message,
    `The credits of this period are used up; they reset at ${reset}.`,
  );
});

Deno.test("/v1/usage answers x-credits-cost: 0 with the other meter headers", async () => {
  await using s = await startServer();
  const { key } = await s.account("starter");
  const r = await s.get("/v1/usage", key);
  assert.equal(r.status, 200);
  await r.body?.cancel();
  assert.equal(r.headers.get("x-credits-cost"), "0");
  assert.equal(r.headers.get("x-credits-remaining"), "5000");
  assert.match(r.headers.get("x-credits-reset") ?? "", ISO);
});

Deno.test("a watch deletion that meets a record rewritten on every try answers 503 busy with Retry-After: 1", async () => {
  const resolve = (h: string) =>
    Promise.resolve(h === "hooks.example.com" ? ["93.184.216.34"] : []);
  await using s = await startServer({ watches: { resolve } });
  const { id, key } = await s.account("starter");
  const watch = async () => {
    const created = await fetch(`${s.url}/v1/watches`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify({
        asin: "B07H57DNVV",
        every_seconds: 3600,
        webhook_url: "https://hooks.example.com/shelf",
        on: ["price"],
      }),
    });
    assert.equal(created.status, 201);
    return (await created.json()).id as string;
  };
  const del = (watchId: string) =>
    fetch(`${s.url}/v1/watches/${watchId}`, { method: "DELETE", headers: { "x-api-key": key } });
  // Another writer (as another instance on the same store would) rewrites the account's watch
  // count without pause: every checked commit of the deletion conflicts, 50 times over. A round
  // the writers happen to miss deletes the watch; the next round tries with a new one.
  let busy: Response | null = null;
  let watchId = "";
  for (let round = 0; round < 3 && !busy; round++) {
    watchId = await watch();
    const count = (await s.kv.get<number>(KV.watchCount(id))).value;
    let stop = false;
    const writers = Array.from({ length: 4 }, async () => {
      while (!stop) await s.kv.set(KV.watchCount(id), count);
    });
    const r = await del(watchId);
    stop = true;
    await Promise.all(writers);
    if (r.status === 503) busy = r;
    else {
      assert.equal(r.status, 200);
      await r.body?.cancel();
    }
  }
  assert.ok(busy, "the deletion met no conflict on any try");
  assert.equal((await busy.json()).error.code, "busy");
  assert.equal(busy.headers.get("retry-after"), "1");
  const quiet = await del(watchId);
  assert.equal(quiet.status, 200, "once the writer stops, the deletion goes through");
  await quiet.body?.cancel();
});

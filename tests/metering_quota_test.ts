import assert from "node:assert/strict";
import { burst, count, startServer } from "./test_server.ts";
import { ApiError } from "../core/api_error.ts";
import { bulk, OFFERS } from "./bulk_plan.ts";

async function usage(s: { get: (p: string, k: string) => Promise<Response> }, key: string) {
  const r = await s.get("/v1/usage", key);
  assert.equal(r.status, 200);
  return await r.json();
}

Deno.test("50 concurrent calls on an account with 3 credits left: exactly 3 succeed", async () => {
  await using s = await startServer({ plans: bulk(10) });
  const { key } = await s.account("bulk");
  for (let i = 0; i < 7; i++) assert.equal((await burst(1, () => s.get(OFFERS, key)))[0], 200);
  const statuses = await burst(50, () => s.get(OFFERS, key));
  assert.equal(count(statuses, 200), 3);
  assert.equal(count(statuses, 429), 47);
  const u = await usage(s, key);
  assert.equal(u.requests_used, 10);
  assert.equal(u.requests_remaining, 0);
  const after = await s.get(OFFERS, key);
  assert.equal(after.status, 429);
  assert.equal((await after.json()).error.code, "quota_exhausted");
});

Deno.test("credits held by calls still running: the refusal says so and to retry (Retry-After: 1); credits spent: it does not", async () => {
  await using s = await startServer({ plans: bulk(2) });
  const { key } = await s.account("bulk");
  s.source.delayMs = 400;
  s.source.failWith = new ApiError(502, "upstream_error", "The marketplace failed.");
  const running = [s.get(OFFERS, key), s.get(OFFERS, key)];
  await new Promise((r) => setTimeout(r, 150)); // both admitted: the account's 2 credits are held
  const held = await s.get(OFFERS, key);
  assert.equal(held.status, 429);
  assert.equal(held.headers.get("retry-after"), "1");
  const body = await held.json();
  assert.equal(body.error.code, "quota_exhausted");
  assert.match(body.error.message, /held by calls still running \(2\)/);
  for (const r of await Promise.all(running)) {
    assert.equal(r.status, 502);
    await r.body?.cancel();
  }
  // Both failed and gave their credits back: spent now, by two calls that succeed.
  s.source.delayMs = 0;
  s.source.failWith = null;
  for (let i = 0; i < 2; i++) assert.equal((await burst(1, () => s.get(OFFERS, key)))[0], 200);
  const spent = await s.get(OFFERS, key);
  assert.equal(spent.status, 429);
  assert.equal(spent.headers.get("retry-after"), null);
  assert.match((await spent.json()).error.message, /used up/);
});

Deno.test("a failing data source leaves usage unchanged and answers in the spec's shape", async () => {
  await using s = await startServer({ plans: bulk(100) });
  const { key } = await s.account("bulk");
  const ok = await s.get(OFFERS, key);
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get("x-credits-cost"), "1");
  assert.equal(ok.headers.get("x-credits-remaining"), "99");
  await ok.body?.cancel();
  for (
    const [status, code] of [[502, "upstream_error"], [503, "upstream_blocked"], [
      504,
      "upstream_timeout",
    ], [404, "not_found"]] as const
  ) {
    s.source.failWith = new ApiError(status, code, "failed on purpose");
    const r = await s.get(OFFERS, key);
    assert.equal(r.status, status);
    assert.equal(r.headers.get("x-credits-cost"), "0");
    assert.equal(r.headers.get("x-credits-remaining"), "99");
    assert.deepEqual(await r.json(), { error: { code, message: "failed on purpose", status } });
  }
  s.source.failWith = new TypeError("a bug in a parser");
  const crashed = await s.get(OFFERS, key);
  assert.equal(crashed.status, 502);
  const body = await crashed.json();
  assert.equal(body.error.code, "upstream_error");
  assert.doesNotMatch(JSON.stringify(body), /TypeError|at .*\.ts/);
  assert.equal((await usage(s, key)).requests_used, 1);
});

Deno.test("concurrent failing calls are all refunded", async () => {
  await using s = await startServer({ plans: bulk(20) });
  const { key } = await s.account("bulk");
  s.source.failWith = new ApiError(502, "upstream_error", "down");
  s.source.delayMs = 20;
  const statuses = await burst(40, () => s.get(OFFERS, key));
  assert.equal(count(statuses, 502) + count(statuses, 429), 40);
  assert.ok(count(statuses, 502) >= 20, "at least the allowance was attempted");
  assert.equal((await usage(s, key)).requests_used, 0);
});

Deno.test("search with limit costs one credit per upstream page and stops when credits run out", async () => {
  await using s = await startServer({ plans: bulk(7) });
  const { key } = await s.account("bulk");
  s.source.searchPages = 5;
  const five = await s.get("/v1/products/search?query=usb&limit=100", key);
  assert.equal(five.status, 200);
  assert.equal(five.headers.get("x-credits-cost"), "5");
  assert.equal((await five.json()).has_next_page, false);
  const one = await s.get("/v1/products/search?query=usb", key);
  assert.equal(one.headers.get("x-credits-cost"), "1");
  await one.body?.cancel();
  const partial = await s.get("/v1/products/search?query=usb&limit=100", key);
  assert.equal(partial.status, 200);
  assert.equal(partial.headers.get("x-credits-cost"), "1", "only one credit was left");
  assert.equal((await partial.json()).has_next_page, true);
  assert.equal((await usage(s, key)).requests_used, 7);
});

Deno.test("every authenticated response carries the credit and rate headers", async () => {
  await using s = await startServer({ plans: bulk(5) });
  const { key } = await s.account("bulk");
  for (const path of [OFFERS, "/v1/usage", "/v1/products/offers"]) {
    const r = await s.get(path, key);
    await r.body?.cancel();
    assert.match(
      r.headers.get("x-credits-reset") ?? "",
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
      path,
    );
    assert.match(r.headers.get("x-credits-remaining") ?? "", /^\d+$/, path);
    assert.match(r.headers.get("x-credits-cost") ?? "", /^\d+$/, path);
    assert.equal(r.headers.get("ratelimit-policy"), '"per-key";q=1000;w=1', path);
    assert.match(r.headers.get("ratelimit") ?? "", /^"per-key";r=\d+;t=1$/, path);
  }
});

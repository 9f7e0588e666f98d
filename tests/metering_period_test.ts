import assert from "node:assert/strict";
import { ManualClock, startServer } from "./test_server.ts";

const OFFERS = "/v1/products/offers?asin=B07H57DNVV";
const DAY = 24 * 3600 * 1000;
const T0 = Date.UTC(2026, 0, 10, 8, 0, 0);

async function call(s: Awaited<ReturnType<typeof startServer>>, path: string, key: string) {
  const r = await s.get(path, key);
  const body = await r.json();
  return { status: r.status, headers: r.headers, body };
}

Deno.test("credits reset 30 days after the plan started, not on a calendar month", async () => {
  const clock = new ManualClock(T0);
  await using s = await startServer({ clock });
  const { key } = await s.account("free");
  const first = await call(s, OFFERS, key);
  assert.equal(first.status, 200);
  assert.equal(first.headers.get("x-credits-reset"), new Date(T0 + 30 * DAY).toISOString());
  for (let i = 1; i < 50; i++) {
    clock.advance(1000);
    assert.equal((await call(s, OFFERS, key)).status, 200);
  }
  clock.advance(1000);
  const exhausted = await call(s, OFFERS, key);
  assert.equal(exhausted.status, 429);
  assert.equal(exhausted.body.error.code, "quota_exhausted");

  clock.set(T0 + 30 * DAY - 1); // still the first period
  assert.equal((await call(s, OFFERS, key)).status, 429);
  clock.set(T0 + 30 * DAY); // the second period begins
  const renewed = await call(s, OFFERS, key);
  assert.equal(renewed.status, 200);
  assert.equal(renewed.headers.get("x-credits-reset"), new Date(T0 + 60 * DAY).toISOString());
  const u = (await call(s, "/v1/usage", key)).body;
  assert.equal(u.requests_used, 1);
  assert.equal(u.period_start, new Date(T0 + 30 * DAY).toISOString());
  assert.equal(u.period_end, new Date(T0 + 60 * DAY).toISOString());
  assert.equal(u.interval, "month");
});

Deno.test("a mid-period upgrade applies from the next request and usage carries over", async () => {
  const clock = new ManualClock(T0);
  await using s = await startServer({ clock });
  const { id, key } = await s.account("free");
  for (let i = 0; i < 50; i++) {
    clock.advance(1000);
    assert.equal((await call(s, OFFERS, key)).status, 200);
  }
  clock.advance(1000);
  assert.equal((await call(s, OFFERS, key)).status, 429);
  clock.set(T0 + 10 * DAY);
  await s.accounts.update(id, { plan: "starter" });
  const next = await call(s, OFFERS, key);
  assert.equal(next.status, 200);
  assert.equal(next.headers.get("x-credits-remaining"), String(5000 - 51));
  assert.equal(next.headers.get("x-credits-reset"), new Date(T0 + 40 * DAY).toISOString());
  const u = (await call(s, "/v1/usage", key)).body;
  assert.deepEqual(
    [u.plan, u.included_requests, u.requests_used, u.rate_limit_per_sec, u.period_start],
    ["starter", 5000, 51, 5, new Date(T0 + 10 * DAY).toISOString()],
  );
});

Deno.test("a downgrade below the usage so far shows overage and stops calls", async () => {
  const clock = new ManualClock(T0);
  await using s = await startServer({ clock });
  const { id, key } = await s.account("starter");
  for (let i = 0; i < 60; i++) {
    if (i % 5 === 0) clock.advance(1000);
    assert.equal((await call(s, OFFERS, key)).status, 200);
  }
  await s.accounts.update(id, { plan: "free" });
  clock.advance(1000);
  const refused = await call(s, OFFERS, key);
  assert.equal(refused.status, 429);
  assert.equal(refused.body.error.code, "quota_exhausted");
  const u = (await call(s, "/v1/usage", key)).body;
  assert.equal(u.requests_used, 60);
  assert.equal(u.requests_remaining, 0);
  assert.equal(u.overage_requests, 10);
});

Deno.test("a PATCH naming the plan the account is already on is no plan change: the period stays", async () => {
  const clock = new ManualClock(T0);
  const token = "admin-secret-token";
  await using s = await startServer({ clock, adminToken: token });
  const { id, key } = await s.account("free");
  const first = await call(s, OFFERS, key);
  assert.equal(first.status, 200);
  assert.equal(first.headers.get("x-credits-reset"), new Date(T0 + 30 * DAY).toISOString());
  clock.set(T0 + 10 * DAY);
  for (const body of [{ plan: "free" }, { plan: "free", status: "active" }]) {
    const r = await fetch(`${s.url}/admin/accounts/${id}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    assert.equal(r.status, 200, JSON.stringify(body));
    await r.body?.cancel();
  }
  const next = await call(s, OFFERS, key);
  assert.equal(next.status, 200);
  assert.equal(next.headers.get("x-credits-reset"), new Date(T0 + 30 * DAY).toISOString());
  const u = (await call(s, "/v1/usage", key)).body;
  assert.deepEqual(
    [u.plan, u.requests_used, u.period_start],
    ["free", 2, new Date(T0).toISOString()],
  );
  assert.equal((await s.accounts.get(id)).carried_from, undefined);
});

/**
 * A plan change through the admin API, as the account's customer then sees it: the new plan's
 * 30-day period starts at the change (not at the old plan's boundary), usage of a period that
 * ended before the change carries nothing into it, the usage alerts may fire again against the
 * new allowance, and keys rotated within one second inherit the fullest rate window.
 */
import assert from "node:assert/strict";
import { ManualClock, startServer, type TestServer } from "./test_server.ts";
import { adminApi } from "./admin_calls.ts";
import { eventually, startSmtpSink } from "./smtp_sink.ts";
import { listAlerts } from "../metering/alerts.ts";
import { BUILTIN_PLANS, Plans } from "../metering/plans.ts";
import { ALERTS_FROM, FAST_ALERTS, OFFERS } from "./bulk_plan.ts";

const TOKEN = "plan-change-test-token-0123456789";
const admin = adminApi(TOKEN);
const DAY = 24 * 3600 * 1000;
const T0 = Date.UTC(2026, 2, 3, 9, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

async function call(s: TestServer, path: string, key: string) {
  const r = await s.get(path, key);
  return { status: r.status, headers: r.headers, body: await r.json() };
}

Deno.test("plan change: the new plan's period runs 30 days from the change, not to the old plan's boundary", async () => {
  const clock = new ManualClock(T0);
  await using s = await startServer({ clock, adminToken: TOKEN });
  const { id, key } = await s.account("starter");
  clock.set(T0 + 20 * DAY);
  const changed = await admin(s, "PATCH", `/admin/accounts/${id}`, { plan: "growth" });
  assert.equal(changed.status, 200);
  assert.equal(changed.body.plan_started_at, iso(T0 + 20 * DAY));
  assert.equal(changed.body.usage.period_start, iso(T0 + 20 * DAY));
  assert.equal(changed.body.usage.period_end, iso(T0 + 50 * DAY));
  const first = await call(s, OFFERS, key);
  assert.equal(first.status, 200);
  assert.equal(first.headers.get("x-credits-reset"), iso(T0 + 50 * DAY));

  // Past the day the starter plan's period would have ended: the credit used stays counted.
  clock.set(T0 + 31 * DAY);
  const u = (await call(s, "/v1/usage", key)).body;
  assert.deepEqual(
    [u.plan, u.requests_used, u.period_start, u.period_end],
    ["growth", 1, iso(T0 + 20 * DAY), iso(T0 + 50 * DAY)],
  );
  const shown = await admin(s, "GET", `/admin/accounts/${id}`);
  assert.equal(shown.body.plan_started_at, iso(T0 + 20 * DAY));
  assert.equal(shown.body.usage.requests_used, 1);

  // The growth plan's own boundary resets it.
  clock.set(T0 + 50 * DAY);
  const next = (await call(s, "/v1/usage", key)).body;
  assert.deepEqual([next.requests_used, next.period_start], [0, iso(T0 + 50 * DAY)]);
});

Deno.test("plan change: after a period ended with no call, the change carries none of that period's usage", async () => {
  const clock = new ManualClock(T0);
  await using s = await startServer({ clock, adminToken: TOKEN });
  const { id, key } = await s.account("starter");
  for (let i = 0; i < 5; i++) assert.equal((await call(s, OFFERS, key)).status, 200);
  // Nothing touches the account until the operator upgrades it, 31 days on: the 5 credits were
  // the ended period's, and charging them to the new one would bill the customer twice.
  clock.set(T0 + 31 * DAY);
  const up = await admin(s, "PATCH", `/admin/accounts/${id}`, { plan: "growth" });
  assert.equal(up.status, 200);
  assert.equal(up.body.usage.requests_used, 0);
  assert.equal(up.body.usage.requests_remaining, 50_000);
  assert.equal(up.body.usage.period_start, iso(T0 + 31 * DAY));
  const u = (await call(s, "/v1/usage", key)).body;
  assert.deepEqual([u.plan, u.requests_used], ["growth", 0]);
  const next = await call(s, OFFERS, key);
  assert.equal(next.status, 200);
  assert.equal(next.headers.get("x-credits-remaining"), String(50_000 - 1));
});

Deno.test("plan change: an upgrade after the 80% alert arms it again, against the new allowance", async () => {
  await using smtp = await startSmtpSink();
  const plans = new Plans([
    ...BUILTIN_PLANS,
    ...[["small", 10], ["big", 20]].map(([id, credits]) => ({
      id: id as string,
      credits: credits as number,
      rate_limit_per_sec: 1000,
      max_keys: 3,
      groups: ["products" as const],
    })),
  ]);
  await using s = await startServer({
    plans,
    adminToken: TOKEN,
    smtp: { url: smtp.url, from: ALERTS_FROM, timing: FAST_ALERTS },
  });
  const { id, key } = await s.account("small");
  for (let i = 0; i < 8; i++) assert.equal((await call(s, OFFERS, key)).status, 200);
  await eventually("the first 80% mail", () => smtp.received.length >= 1);
  assert.equal((await admin(s, "PATCH", `/admin/accounts/${id}`, { plan: "big" })).status, 200);
  // 16 of 20: the customer is told again that 80% of the (new) credits are used.
  for (let i = 0; i < 8; i++) assert.equal((await call(s, OFFERS, key)).status, 200);
  const alerts = (await listAlerts(s.kv, id)).reverse(); // oldest first
  assert.deepEqual(
    alerts.map((a) => [a.threshold, a.plan, a.used, a.included]),
    [[80, "small", 8, 10], [80, "big", 16, 20]],
  );
  await eventually("the second 80% mail", () => smtp.received.length >= 2);
  assert.deepEqual(smtp.received.map((m) => m.subject), [
    "Shelf: 80% of your monthly credits used",
    "Shelf: 80% of your monthly credits used",
  ]);
  assert.match(smtp.received[1].raw, /used 16 of its 20 credits/);
  assert.match(smtp.received[1].raw, /Plan: big/);
});

Deno.test("key rotation: a key created after two keys were revoked in one second starts from the fuller of their windows", async () => {
  const clock = new ManualClock(T0); // every call below falls in one second
  await using s = await startServer({ clock, adminToken: TOKEN });
  const id =
    (await admin(s, "POST", "/admin/accounts", { email: "rotate@example.com", plan: "starter" }))
      .body.id; // 5 calls a second per key
  const a = (await admin(s, "POST", `/admin/accounts/${id}/keys`, { name: "a" })).body;
  const b = (await admin(s, "POST", `/admin/accounts/${id}/keys`, { name: "b" })).body;
  for (let i = 0; i < 3; i++) assert.equal((await call(s, OFFERS, a.key)).status, 200);
  assert.equal((await call(s, OFFERS, b.key)).status, 200);
  // B's window (1 call) retires first, then A's fuller one (3 calls) of the same second.
  assert.equal((await admin(s, "DELETE", `/admin/keys/${b.id}`)).status, 200);
  assert.equal((await admin(s, "DELETE", `/admin/keys/${a.id}`)).status, 200);
  const c = (await admin(s, "POST", `/admin/accounts/${id}/keys`, { name: "c" })).body;
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await call(s, OFFERS, c.key);
    statuses.push(r.status);
    if (r.status === 429) assert.equal(r.body.error.code, "rate_limited");
  }
  // Rotating keys gives no more calls in the second than the plan's rate allows the one key.
  assert.deepEqual(statuses, [200, 200, 429, 429, 429]);
  clock.advance(1000);
  assert.equal((await call(s, OFFERS, c.key)).status, 200, "the next second opens anew");
});

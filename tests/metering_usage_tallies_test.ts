/**
 * What a period keeps about its usage besides `used`: the usage alerts it has sent, and the
 * per-key, per-endpoint and per-day tallies behind the dashboard's usage page. Real server on
 * loopback and a real KV file; the legacy-record case writes the record through the store.
 */
import assert from "node:assert/strict";
import { ManualClock, startServer } from "./test_server.ts";
import { listAlerts } from "../metering/alerts.ts";
import { FOLDED_KEYS, MAX_KEY_TALLIES, PERIOD_MS } from "../metering/account_state.ts";
import { BUILTIN_PLANS, Plans } from "../metering/plans.ts";
import { editRecord, meterStore } from "./meter_store.ts";

const OFFERS = "/v1/products/offers?asin=B07H57DNVV";

async function ok(r: Promise<Response>) {
  const res = await r;
  await res.body?.cancel();
  assert.equal(res.status, 200);
}

Deno.test("the 80% usage alert is sent again when the account crosses 80% in the next period", async () => {
  const plans = new Plans([...BUILTIN_PLANS, {
    id: "ten",
    credits: 10,
    rate_limit_per_sec: 1000,
    max_keys: 1,
    groups: ["products"],
  }]);
  const start = Date.UTC(2026, 0, 10, 12, 0, 0, 300);
  const clock = new ManualClock(start);
  await using s = await startServer({ clock, plans });
  const { id, key } = await s.account("ten");
  for (let i = 0; i < 8; i++) await ok(s.get(OFFERS, key));
  const first = await listAlerts(s.kv, id);
  assert.deepEqual(first.map((a) => [a.threshold, a.used]), [[80, 8]]);

  clock.advance(PERIOD_MS);
  for (let i = 0; i < 8; i++) await ok(s.get(OFFERS, key));
  // Newest first: one 80% alert for each period.
  const alerts = await listAlerts(s.kv, id);
  assert.deepEqual(
    alerts.map((a) => [a.threshold, a.used, a.period_start - start]),
    [[80, 8, PERIOD_MS], [80, 8, 0]],
  );
});

Deno.test("no more than MAX_KEY_TALLIES keys are counted apart: the next new key folds the revoked ones together", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 10, 12, 0, 0, 0));
  await using s = await startServer({ clock });
  const acc = await s.accounts.create("rotating@example.com", "growth");
  for (let i = 1; i <= MAX_KEY_TALLIES + 1; i++) {
    // A second each: a key made in the second another was revoked in shares its rate window.
    clock.advance(1_000);
    const made = await s.accounts.createKey(acc.id, { name: `rotation ${i}` });
    await ok(s.get(OFFERS, made.value));
    await s.accounts.revokeKey(made.key.id);
    const byKey = (await s.accounts.get(acc.id)).by_key ?? {};
    const apart = Object.keys(byKey).filter((k) => k !== FOLDED_KEYS);
    assert.ok(apart.length <= MAX_KEY_TALLIES, `after key ${i}: ${apart.length} counted apart`);
    assert.equal(Object.values(byKey).reduce((a, n) => a + n, 0), i, "no credit lost");
  }
  // The 65th key found 64 tallies: the revoked keys' went together before it was counted.
  const byKey = (await s.accounts.get(acc.id)).by_key ?? {};
  assert.equal(byKey[FOLDED_KEYS], MAX_KEY_TALLIES);
  assert.equal(Object.keys(byKey).length, 2);
});

Deno.test("a refund on a record written before the tallies existed leaves no negative tally", async () => {
  const now = Date.UTC(2026, 0, 10, 12, 0, 0, 0);
  await using s = await meterStore(new ManualClock(now), "starter");
  // Records of versions before the usage tallies (daily for the chart; by_key and by_endpoint
  // for the usage page, issue 14.11) had none of them: two credits charged then, in `used` only.
  let period = 0;
  await editRecord(s.kv, s.id, (legacy) => {
    delete legacy.daily;
    delete legacy.by_key;
    delete legacy.by_endpoint;
    legacy.used = 2;
    period = legacy.period_start;
  });

  // One of those calls failed and gives its credit back under the current version.
  const tag = { keyId: s.keyId, endpoint: "/v1/products/offers" };
  const r = await s.meter.refund(s.id, period, 1, tag, now - 60_000);
  assert.equal(r?.applied, true);
  const after = await s.accounts.get(s.id);
  assert.equal(after.used, 1);
  // The usage page draws these: a -1 bar or a key with -1 credits is nonsense to the customer.
  assert.deepEqual(after.daily ?? {}, {});
  assert.deepEqual(after.by_key ?? {}, {});
  assert.deepEqual(after.by_endpoint ?? {}, {});
});

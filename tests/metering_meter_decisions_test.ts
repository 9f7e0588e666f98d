/**
 * The meter's decisions as a client and the operator see them: who is refused, what a refusal
 * still counts, what a multi-page search is charged to, and what the credits-remaining header
 * says when an account is over its allowance. Real servers on loopback and real KV files; the
 * search goes through the real upstream source to the fake marketplace serving corpus pages.
 * Two cases start from account records as earlier layouts wrote them, written through the store.
 */
import assert from "node:assert/strict";
import { ManualClock, startServer } from "./test_server.ts";
import { startRig } from "./upstream_harness.ts";
import { asResultsPage, fixture } from "./fixture.ts";
import { adminApi } from "./admin_calls.ts";
import { withTinyPlan } from "./tiny_plan.ts";
import { BUILTIN_PLANS, Plans } from "../metering/plans.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { editRecord, meterStore } from "./meter_store.ts";

const OFFERS = "/v1/products/offers?asin=B07H57DNVV";
const TOKEN = "admin-secret-token";
const admin = adminApi(TOKEN);
const DAY = 86_400_000;

async function statusAndCode(r: Promise<Response>) {
  const res = await r;
  const body = await res.json();
  return { status: res.status, code: body?.error?.code ?? null };
}

Deno.test("a key that a record of the earlier layout still holds as revoked is refused with 401 and charged nothing", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 10, 12, 0, 0, 300));
  await using s = await startServer({ clock });
  const { id, key, keyId } = await s.account("growth");
  // Before revoked keys moved out of the record (KV.revokedKey), revoking only marked the key
  // revoked where it was, and its digest entry still led to it.
  await editRecord(s.kv, id, (st) => {
    st.keys[keyId].status = "revoked";
    st.keys[keyId].revoked_at = clock.now() - DAY;
  });
  assert.deepEqual(await statusAndCode(s.get(OFFERS, key)), { status: 401, code: "unauthorized" });
  assert.deepEqual(
    await statusAndCode(s.get("/v1/usage", key)),
    { status: 401, code: "unauthorized" },
  );
  const after = await s.accounts.get(id);
  assert.equal(after.used, 0, "a revoked key's call is not charged");
  assert.equal(after.keys[keyId].last_used_at, null);
});

Deno.test("/v1/usage of an inactive account is 403 forbidden and does not mark the key as used", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 10, 12, 0, 0, 300));
  await using s = await startServer({ clock, adminToken: TOKEN });
  const created = await admin(s, "POST", "/admin/accounts", { email: "paused@example.com" });
  assert.equal(created.status, 201);
  const id = created.body.id;
  const made = await admin(s, "POST", `/admin/accounts/${id}/keys`, { name: "ci" });
  assert.equal(made.status, 201);
  const off = await admin(s, "PATCH", `/admin/accounts/${id}`, { status: "inactive" });
  assert.deepEqual([off.status, off.body.status], [200, "inactive"]);

  const usage = await s.get("/v1/usage", made.body.key);
  const body = await usage.json();
  assert.equal(usage.status, 403);
  assert.equal(body.error.code, "forbidden");
  assert.equal(body.requests_used, undefined, "no usage record for an inactive account");
  assert.deepEqual(await statusAndCode(s.get(OFFERS, made.body.key)), {
    status: 403,
    code: "forbidden",
  });
  const keys = await admin(s, "GET", `/admin/accounts/${id}/keys`);
  assert.equal(keys.body.keys[0].last_used_at, null, "a refused call is no use of the key");
});

Deno.test("a call refused for quota takes its second's rate slot on every instance sharing the store", async () => {
  // One credit and one call a second: after the credit is spent, a client retrying in a loop
  // against a pool of instances must still be held to the plan's rate.
  const plans = new Plans([...BUILTIN_PLANS, {
    id: "one",
    credits: 1,
    rate_limit_per_sec: 1,
    max_keys: 1,
    groups: ["products"],
  }]);
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  // Declared first, so removed after both servers have closed the store.
  await using _files = { [Symbol.asyncDispose]: () => removeKvFiles(kvPath) };
  const clock = new ManualClock(Date.UTC(2026, 0, 10, 12, 0, 0, 300));
  await using a = await startServer({ clock, plans, kvPath });
  await using b = await startServer({ clock, plans, kvPath });
  const { key } = await a.account("one");
  assert.deepEqual(await statusAndCode(a.get(OFFERS, key)), { status: 200, code: null });
  clock.advance(1_000);
  assert.deepEqual(await statusAndCode(a.get(OFFERS, key)), {
    status: 429,
    code: "quota_exhausted",
  });
  // Same second, the other instance, which has not seen this account yet.
  assert.deepEqual(await statusAndCode(b.get(OFFERS, key)), { status: 429, code: "rate_limited" });
  assert.deepEqual(await statusAndCode(a.get(OFFERS, key)), { status: 429, code: "rate_limited" });
  clock.advance(1_000);
  assert.deepEqual(await statusAndCode(b.get(OFFERS, key)), {
    status: 429,
    code: "quota_exhausted",
  });
});

Deno.test("every page of a multi-page search is counted against its key and its endpoint", async () => {
  await using rig = await startRig();
  // amazon.com__pavel-ipad-pro holds 16 organic results: limit=40 takes three pages.
  const html = await fixture("search/amazon.com__pavel-ipad-pro.html");
  for (let p = 1; p <= 6; p++) {
    rig.fake.page(`https://www.amazon.com/s?k=ipad${p > 1 ? `&page=${p}` : ""}`, {
      html: asResultsPage(html, p),
    });
  }
  const r = await rig.call("/v1/products/search?query=ipad&limit=40");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.headers.get("x-credits-cost"), "3");

  const { key_id: keyId } = (await rig.server.accounts.lookupKey(rig.key))!;
  const record = await rig.server.accounts.get(rig.accountId);
  assert.equal(record.used, 3);
  // The dashboard's usage page shows these tallies: they must add up to what was charged.
  assert.deepEqual(record.by_key, { [keyId]: 3 });
  assert.deepEqual(record.by_endpoint, { "/v1/products/search": 3 });
});

Deno.test("after a downgrade below the usage so far, X-Credits-Remaining is 0, never negative", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 10, 12, 0, 0, 300));
  await using s = await startServer({ clock, plans: withTinyPlan(1000), adminToken: TOKEN });
  const { id, key } = await s.account("starter");
  for (let i = 0; i < 5; i++) {
    assert.deepEqual(await statusAndCode(s.get(OFFERS, key)), { status: 200, code: null });
  }
  // Usage carries over a plan change: 5 used against the tiny plan's 2.
  const down = await admin(s, "PATCH", `/admin/accounts/${id}`, { plan: "tiny" });
  assert.equal(down.status, 200);
  clock.advance(1_000);

  const usage = await s.get("/v1/usage", key);
  const record = await usage.json();
  assert.equal(usage.status, 200);
  assert.equal(usage.headers.get("x-credits-remaining"), "0");
  assert.equal(record.requests_used, 5);
  assert.equal(record.requests_remaining, 0);

  const refused = await s.get(OFFERS, key);
  const body = await refused.json();
  assert.deepEqual([refused.status, body.error.code], [429, "quota_exhausted"]);
  assert.equal(refused.headers.get("x-credits-remaining"), "0");
});

Deno.test("a refund of a call charged in the oldest period a legacy record carried from still lands", async () => {
  // Store-level: only a record of the earlier layout holds more than one carried period.
  const t0 = Date.UTC(2026, 0, 1, 12, 0, 0, 0);
  await using s = await meterStore(new ManualClock(t0 + 26 * DAY), "starter");
  // Versions before probe CK kept the start of each of the last four periods plan changes
  // carried usage from: here plan changes on days 10, 20 and 25, three credits still counted.
  await editRecord(s.kv, s.id, (st) => {
    st.plan_started_at = t0 + 25 * DAY;
    st.period_start = t0 + 25 * DAY;
    st.carried_from = [t0, t0 + 10 * DAY, t0 + 20 * DAY];
    st.used = 3;
  });
  const tag = { keyId: s.keyId, endpoint: "/v1/products/offers" };
  // A call charged on day 5, in the first plan's period, failed and gives its credit back now.
  const oldest = await s.meter.refund(s.id, t0, 1, tag, t0 + 5 * DAY);
  assert.equal(oldest?.applied, true);
  assert.equal(oldest?.snapshot.remaining, 5_000 - 2);
  const middle = await s.meter.refund(s.id, t0 + 10 * DAY, 1, tag, t0 + 15 * DAY);
  assert.equal(middle?.applied, true);
  // A period before the chain began paid nothing that is counted now.
  const before = await s.meter.refund(s.id, t0 - 30 * DAY, 1, tag, t0 - 20 * DAY);
  assert.equal(before?.applied, false);
  assert.equal((await s.accounts.get(s.id)).used, 1);
});

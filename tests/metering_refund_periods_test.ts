/**
 * A refund goes back where its credits were taken (probe P): into the period of the charge, or
 * the one a plan change carried its usage into, never into a later period that did not pay them;
 * and off the day's tally of the charge. Addressed to the admission's period, refunds after a plan
 * change were dropped (the failed call's answer saying it was free), a search's pages charged
 * after a period rollover stayed charged, and a refund after midnight left the old day's charge.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../metering/clock.ts";
import { dayOf, PERIOD_MS } from "../metering/account_state.ts";
import { CallCharges } from "../routes/call_charges.ts";
import { failingCallUnderWay, startServer } from "./test_server.ts";
import { meterStore } from "./meter_store.ts";

const TAG = { keyId: "", endpoint: "/v1/products/search" };

Deno.test("pages charged after a period rollover are refunded into the period that paid them", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 5, 12));
  await using s = await meterStore(clock);
  const plan = (await s.accounts.get(s.id)).plan_started_at;
  clock.set(plan + PERIOD_MS - 5_000); // five seconds before the period ends
  const tag = { ...TAG, keyId: s.keyId };
  const charges = new CallCharges(s.meter, s.id, tag, () => {});
  const admitted = await s.meter.call(s.id, s.keyId, { group: "products", cost: 1, valid: true });
  charges.add(admitted.snapshot!, admitted.charged);
  clock.advance(10_000); // a new period: its pages are charged there
  for (let i = 0; i < 4; i++) {
    const r = await s.meter.charge(s.id, 1, tag);
    assert.ok(r.ok);
    charges.add(r.snapshot!, 1);
  }
  assert.equal((await s.accounts.get(s.id)).used, 4);
  assert.equal(await charges.refundLast(4), 4); // the four pages failed
  assert.equal((await s.accounts.get(s.id)).used, 0, "the new period pays none of them");
  await charges.refundAll(); // the call failed: its own credit was the old period's
  assert.equal((await s.accounts.get(s.id)).used, 0, "nor the old period's credit");
});

Deno.test("a refund after midnight comes off the day its charge was counted on", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 5, 23, 59, 59));
  await using s = await meterStore(clock);
  const charges = new CallCharges(s.meter, s.id, { ...TAG, keyId: s.keyId }, () => {});
  const admitted = await s.meter.call(s.id, s.keyId, { group: "products", cost: 1, valid: true });
  charges.add(admitted.snapshot!, admitted.charged);
  const day = dayOf(clock.now());
  assert.equal((await s.accounts.get(s.id)).daily?.[day], 1);
  clock.advance(2_000); // past midnight
  await charges.refundAll();
  const record = await s.accounts.get(s.id);
  assert.equal(record.used, 0);
  assert.equal(record.daily?.[day], undefined, "the old day's charge is taken back");
});

Deno.test("a call that fails after its account changed plan is refunded: usage carried over", async () => {
  await using s = await startServer();
  const { id, key } = await s.account("starter");
  const { answer } = await failingCallUnderWay(s, key, 400);
  await s.accounts.update(id, { plan: "growth" });
  const r = await answer;
  assert.equal(r.status, 502);
  assert.equal(r.headers.get("x-credits-cost"), "0");
  await r.body?.cancel();
  assert.equal((await s.accounts.get(id)).used, 0, "the answer said free, and it was");
});

Deno.test("a further page is not charged once the call would be refused: key revoked, account inactive, group gone", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 5, 12));
  for (const refuse of ["revoke", "inactive", "downgrade"] as const) {
    await using s = await meterStore(clock);
    const tag = { ...TAG, keyId: s.keyId };
    const admitted = await s.meter.call(s.id, s.keyId, { group: "scrape", cost: 1, valid: true });
    assert.equal(admitted.outcome, "admitted");
    assert.ok((await s.meter.charge(s.id, 1, tag, "scrape")).ok, "a page before");
    if (refuse === "revoke") await s.accounts.revokeKey(s.keyId);
    if (refuse === "inactive") await s.accounts.update(s.id, { status: "inactive" });
    if (refuse === "downgrade") await s.accounts.update(s.id, { plan: "free" }); // no scrape
    const after = await s.meter.charge(s.id, 1, tag, "scrape");
    assert.equal(after.ok, false, `a page after: ${refuse}`);
    assert.equal((await s.accounts.get(s.id)).used, 2, `nothing more charged: ${refuse}`);
  }
});

Deno.test("a call's refund lands after any number of plan changes during it, and not after a rollover", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 5, 12));
  await using s = await meterStore(clock);
  const tag = { ...TAG, keyId: s.keyId };
  const charges = new CallCharges(s.meter, s.id, tag, () => {});
  const admitted = await s.meter.call(s.id, s.keyId, { group: "products", cost: 1, valid: true });
  charges.add(admitted.snapshot!, admitted.charged);
  // Six plan changes while the call runs, each a new period carrying the usage on (probe CK: the
  // fifth dropped the call's refund, as only the last four periods were known).
  for (const plan of ["scale", "growth", "scale", "growth", "scale", "growth"]) {
    clock.advance(1_000);
    await s.accounts.update(s.id, { plan });
  }
  assert.equal((await s.accounts.get(s.id)).used, 1);
  assert.equal(await charges.refundAll(), 1);
  assert.equal(
    (await s.accounts.get(s.id)).used,
    0,
    "the failed call was free, as its answer says",
  );

  // A refund addressed to the period before a rollover does not come off the new one.
  const again = await s.meter.call(s.id, s.keyId, { group: "products", cost: 1, valid: true });
  const late = new CallCharges(s.meter, s.id, tag, () => {});
  late.add(again.snapshot!, again.charged);
  clock.advance(PERIOD_MS);
  await s.meter.call(s.id, s.keyId, { group: "products", cost: 1, valid: true });
  await late.refundAll();
  assert.equal((await s.accounts.get(s.id)).used, 1, "the new period keeps its own call's credit");
});

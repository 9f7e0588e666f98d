/**
 * The watch store's claims and checked commits, called directly on a real KV file: what they
 * guard against (two instances racing for one watch, a schedule entry left over from a restore,
 * a delivery attempt that ends after another instance took its event over, writers of one watch
 * at once) only shows through the HTTP API as a rare race, so it is pinned here.
 */
import assert from "node:assert/strict";
import {
  claimAccountDeliveries,
  claimDueWatches,
  createWatch,
  type Delivery,
  outboxAccounts,
  queueDelivery,
  settleDelivery,
  updateWatch,
  type Watch,
} from "../watches/store.ts";
import { KV } from "../metering/kv_layout.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { hourlyWatch } from "./webhook_receiver.ts";

/** A KV file in the temporary folder, closed and removed when disposed. */
async function tempKv() {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(path);
  return {
    kv,
    async [Symbol.asyncDispose]() {
      kv.close();
      await removeKvFiles(path);
    },
  };
}

const watchOf = async (kv: Deno.Kv, id: string) => (await kv.get<Watch>(KV.watch(id))).value!;

function event(id: string, watchId: string, accountId: string, at: number): Delivery {
  return {
    id,
    watch_id: watchId,
    account_id: accountId,
    body: "{}",
    created_at: at,
    attempts: 0,
    next_at: at,
  };
}

Deno.test("watch claims: of two claims racing for one due watch, only the one whose commit landed refreshes it", async () => {
  // Told twice, two instances (or two passes) both refresh the watch and both charge for it.
  await using t = await tempKv();
  for (let round = 0; round < 20; round++) {
    const w = { ...hourlyWatch(`acc_${round}`, "key_1"), next_at: Date.now() - 1 };
    assert.ok(await createWatch(t.kv, w, 100));
    let told = 0;
    const now = Date.now();
    const claim = () =>
      claimDueWatches(t.kv, now, 60_000, { scan: 10, claimed: () => (told++, true) });
    await Promise.all([claim(), claim()]);
    assert.equal(told, 1, `round ${round}: the watch was claimed ${told} times`);
  }
});

Deno.test("watch claims: a schedule entry earlier than its watch's next refresh (a restore's leftover) is dropped, not claimed", async () => {
  // Claimed, the watch is refreshed and charged an hour early, and keeps two schedule entries.
  await using t = await tempKv();
  const w = { ...hourlyWatch("acc_1", "key_1"), next_at: Date.now() + 3_600_000 };
  assert.ok(await createWatch(t.kv, w, 100));
  const stale = Date.now() - 1_000;
  await t.kv.set(KV.watchDue(stale, w.id), w.id);
  const claimed: Watch[] = [];
  await claimDueWatches(t.kv, Date.now(), 60_000, {
    scan: 10,
    claimed: (x) => (claimed.push(x), true),
  });
  assert.deepEqual(claimed, [], "nothing claimed");
  assert.equal((await t.kv.get(KV.watchDue(stale, w.id))).versionstamp, null, "leftover dropped");
  assert.equal((await watchOf(t.kv, w.id)).next_at, w.next_at);
  const entries = await Array.fromAsync(t.kv.list({ prefix: KV.watchSchedule }));
  assert.deepEqual(entries.map((e) => e.key), [KV.watchDue(w.next_at, w.id)], "one entry");
});

Deno.test("watch updates: writers changing one watch at once each get their change in", async () => {
  // A refresh's result, a delivery's settle and a deletion write the same record: unchecked,
  // the last commit wins and the others' changes are lost.
  await using t = await tempKv();
  const w = hourlyWatch("acc_1", "key_1");
  assert.ok(await createWatch(t.kv, w, 100));
  await Promise.all(
    Array.from(
      { length: 5 },
      () => updateWatch(t.kv, w.id, (x) => ({ ...x, refreshes: x.refreshes + 1 })),
    ),
  );
  assert.equal((await watchOf(t.kv, w.id)).refreshes, 5);
});

Deno.test("webhook outbox: the accounts after one account start with the next account, not that one again", async () => {
  // Delivery passes take accounts in turn from where the last one stopped: listed again, the
  // account it stopped at is served first two passes in a row.
  await using t = await tempKv();
  const op = t.kv.atomic();
  for (const a of ["acc_a", "acc_b", "acc_c"]) {
    queueDelivery(op, event(`evt_${a}`, "wat_x", a, 1));
    queueDelivery(op, event(`evt_${a}_2`, "wat_x", a, 2));
  }
  await op.commit();
  const after = async (from: string | null) =>
    (await Array.fromAsync(outboxAccounts(t.kv, from))).map((x) => x.accountId);
  assert.deepEqual(await after(null), ["acc_a", "acc_b", "acc_c"]);
  assert.deepEqual(await after("acc_a"), ["acc_b", "acc_c"]);
  assert.deepEqual(await after("acc_b"), ["acc_c"]);
  assert.deepEqual(await after("acc_c"), []);
});

Deno.test("webhook settle: an attempt that ends after its event was claimed again leaves the event to the new claim", async () => {
  // Settled as its own, the late attempt deletes an event another instance is sending now and
  // counts it delivered before it is.
  await using t = await tempKv();
  const w = hourlyWatch("acc_1", "key_1");
  assert.ok(await createWatch(t.kv, w, 100));
  const d = event("evt_1", w.id, "acc_1", Date.now() - 10);
  const op = t.kv.atomic();
  queueDelivery(op, d);
  await op.commit();
  await updateWatch(t.kv, w.id, (x) => ({ ...x, pending: [{ id: d.id, attempts: 0 }] }));
  const first: Delivery[] = [];
  await claimAccountDeliveries(t.kv, "acc_1", Date.now(), 0, { limit: 1 }, (x) => first.push(x));
  assert.equal(first.length, 1);
  // Its lease (none) is over: another instance claims it.
  await new Promise((r) => setTimeout(r, 5));
  const second: Delivery[] = [];
  await claimAccountDeliveries(
    t.kv,
    "acc_1",
    Date.now(),
    60_000,
    { limit: 1 },
    (x) => second.push(x),
  );
  assert.equal(second.length, 1);
  const note = {
    event_id: d.id,
    at: new Date().toISOString(),
    attempt: 1,
    result: "delivered (HTTP 204)",
    delivered: true,
  };
  await settleDelivery(t.kv, first[0], null, note);
  const left = (await t.kv.get<Delivery>(KV.webhook(d.id))).value;
  assert.equal(left?.next_at, second[0].next_at, "the event is the second claim's, as it was");
  assert.ok(
    (await t.kv.get(KV.webhookDueOf("acc_1", second[0].next_at, d.id))).versionstamp,
    "its due entry at the end of the second lease stays",
  );
  const after = await watchOf(t.kv, w.id);
  assert.deepEqual(after.pending?.map((p) => p.id), [d.id], "still undelivered");
  assert.equal(after.deliveries[0]?.result, "delivered (HTTP 204)", "the late attempt is noted");
});

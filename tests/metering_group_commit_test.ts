/**
 * Group commit across accounts (issue 15.3): calls of different accounts that are ready together
 * share one atomic operation, and sharing never changes what is charged. Two meters over one KV
 * file stand for two instances; each holds cached records the other makes stale, so groups fail
 * on a neighbour's check and their members must redo their decisions on fresh records.
 */
import assert from "node:assert/strict";
import { Accounts } from "../metering/accounts.ts";
import { Meter } from "../metering/meter.ts";
import { Plans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { replacing } from "./counted_kv.ts";

const plans = (credits: number) =>
  new Plans([{
    id: "small",
    credits,
    rate_limit_per_sec: 10_000,
    max_keys: 2,
    groups: ["products"],
  }]);
const CALL = { group: "products" as const, cost: 1, valid: true };

async function setup(credits: number, n: number) {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(path);
  let atomics = 0;
  // Counts the atomic operations the meter starts; everything else is the real store.
  const counted = replacing(kv, "atomic", (target) => () => {
    atomics++;
    return target.atomic();
  });
  const accounts = new Accounts(kv, plans(credits), systemClock);
  const ids: { account: string; key: string }[] = [];
  for (let i = 0; i < n; i++) {
    const a = await accounts.create(`g${i}@example.com`, "small");
    ids.push({ account: a.id, key: (await accounts.createKey(a.id)).key.id });
  }
  return {
    kv,
    ids,
    meter: () => new Meter(counted, plans(credits), systemClock),
    atomics: () => atomics,
    async [Symbol.asyncDispose]() {
      kv.close();
      await removeKvFiles(path);
    },
  };
}

async function used(kv: Deno.Kv, account: string): Promise<number> {
  const e = await kv.get<{ used: number }>(["account", account]);
  return e.value!.used;
}

Deno.test("one call on each of 200 accounts at once takes far fewer than 200 commits", async () => {
  await using s = await setup(5, 200);
  const meter = s.meter();
  // Warm the meter's cache, so that the measured round needs no reads.
  await Promise.all(s.ids.map((i) => meter.call(i.account, i.key, CALL)));
  const before = s.atomics();
  const results = await Promise.all(s.ids.map((i) => meter.call(i.account, i.key, CALL)));
  assert.ok(results.every((r) => r.outcome === "admitted" && r.snapshot?.remaining === 3));
  const commits = s.atomics() - before;
  assert.ok(commits <= 40, `${commits} atomic operations for 200 accounts`);
  for (const i of s.ids) assert.equal(await used(s.kv, i.account), 2);
});

Deno.test("two meters charging 30 accounts at once: each account is charged exactly its credits", async () => {
  await using s = await setup(7, 30);
  const a = s.meter(), b = s.meter();
  const calls: Promise<{ account: string; outcome: string }>[] = [];
  for (let round = 0; round < 20; round++) {
    for (const [n, i] of s.ids.entries()) {
      const meter = (n + round) % 2 ? a : b;
      calls.push(meter.call(i.account, i.key, CALL).then((r) => ({ ...r, account: i.account })));
    }
  }
  const results = await Promise.all(calls);
  for (const i of s.ids) {
    const mine = results.filter((r) => r.account === i.account);
    assert.equal(mine.filter((r) => r.outcome === "admitted").length, 7, i.account);
    assert.equal(mine.filter((r) => r.outcome === "quota_exhausted").length, 13, i.account);
    assert.equal(await used(s.kv, i.account), 7);
  }
});

Deno.test("a group that fails on one stale record is redone on fresh records, none charged twice", async () => {
  await using s = await setup(10, 10);
  const a = s.meter(), b = s.meter();
  // Meter a caches every record; then b charges the first account twice behind its back.
  await Promise.all(s.ids.map((i) => a.call(i.account, i.key, CALL)));
  const [first, ...rest] = s.ids;
  await b.call(first.account, first.key, CALL);
  await b.call(first.account, first.key, CALL);
  // All ten of a's next calls share a group whose check on the first account fails.
  const results = await Promise.all(s.ids.map((i) => a.call(i.account, i.key, CALL)));
  assert.equal(results[0].snapshot?.remaining, 6); // 10 - 1 (a) - 2 (b) - 1 (a)
  assert.ok(results.slice(1).every((r) => r.snapshot?.remaining === 8));
  assert.equal(await used(s.kv, first.account), 4);
  for (const i of rest) assert.equal(await used(s.kv, i.account), 2);
});

/**
 * The commit path of exact metering (metering/transact.ts, metering/group_commit.ts), at the
 * paths a plain run of the meter seldom takes: a lost reply after which another instance wrote
 * the record before the re-read; throws interleaved with conflicts; the exact number of throws
 * after which the store is taken to refuse writes; and GroupCommit's own rules (one check per
 * record in a group, members whose write throws answered, full groups sent without waiting, at
 * most ten checks in an operation: the limit every KV target honours, while a local file takes
 * more, so only a count shows it). The meter's own runs reach few of these, or only in races.
 * Real KV files; the store is wrapped only to script or watch its commits (probe HU).
 */
import assert from "node:assert/strict";
import { Accounts } from "../metering/accounts.ts";
import { Meter } from "../metering/meter.ts";
import { builtinPlans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { StoreWriteFailed, transact } from "../metering/transact.ts";
import { GroupCommit } from "../metering/group_commit.ts";
import { LOCKED_TRIES } from "../core/lock_backoff.ts";
import { replacing, withCommits } from "./counted_kv.ts";

const CALL = { group: "products" as const, cost: 1, valid: true };

/** A KV file with `n` accounts on the scale plan, each with a key; removed when disposed. */
async function store(n = 1) {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(path);
  const plans = builtinPlans();
  const accounts = new Accounts(kv, plans, systemClock);
  const ids: { account: string; key: string }[] = [];
  for (let i = 0; i < n; i++) {
    const a = await accounts.create(`commit${i}@example.com`, "scale");
    ids.push({ account: a.id, key: (await accounts.createKey(a.id)).key.id });
  }
  return {
    kv,
    plans,
    ids,
    used: async (account: string) => (await accounts.get(account)).used,
    async [Symbol.asyncDispose]() {
      kv.close();
      await removeKvFiles(path);
    },
  };
}

/** One more credit used, committed. */
const charge = <T>(result: T) => (s: { used: number } | null) => {
  s!.used++;
  return { next: s as never, result };
};

/** Polls `cond` until it holds or `ms` pass; whether it held. */
async function until(cond: () => boolean, ms = 5_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 5));
  }
  return true;
}

Deno.test("a lost reply is recognised as landed even when another instance wrote the record before the re-read", async () => {
  // The record keeps the last 16 batch ids: one other write in between must not hide the first.
  await using s = await store();
  const { account, key } = s.ids[0];
  let first = true;
  const kv = withCommits(s.kv, async (commit) => {
    const r = await commit();
    if (r.ok && first) {
      first = false;
      // Another instance on the same store, through its own connection, writes the record.
      await transact(s.kv, account, null, (st) => ({ next: st, result: 0 }));
      throw new Error("connection reset after the commit was applied");
    }
    return r;
  });
  const meter = new Meter(kv, s.plans, systemClock);
  assert.equal((await meter.call(account, key, CALL)).outcome, "admitted");
  assert.equal(await s.used(account), 1, "charged once");
});

Deno.test("throws that are not in a row (conflicts between them) do not make the store count as refusing writes", async () => {
  await using s = await store();
  const { account } = s.ids[0];
  let n = 0;
  // 2 × LOCKED_TRIES commits, alternately a throw that did not land and a conflict; then the
  // store takes the write.
  const kv = withCommits(s.kv, (commit) => {
    n++;
    if (n > 2 * LOCKED_TRIES) return commit();
    if (n % 2) return Promise.reject(new Error("database is locked"));
    return Promise.resolve({ ok: false } as Deno.KvCommitError);
  });
  const { result } = await transact(kv, account, null, charge("charged"));
  assert.equal(result, "charged");
  assert.equal(n, 2 * LOCKED_TRIES + 1);
  assert.equal(await s.used(account), 1);
});

Deno.test("a store that throws at every commit is taken to refuse writes after exactly LOCKED_TRIES commits", async () => {
  await using s = await store();
  const { account } = s.ids[0];
  let n = 0;
  const kv = withCommits(s.kv, () => {
    n++;
    return Promise.reject(new Error("database is locked"));
  });
  await assert.rejects(transact(kv, account, null, charge(1)), StoreWriteFailed);
  assert.equal(n, LOCKED_TRIES);
  assert.equal(await s.used(account), 0);
});

Deno.test("GroupCommit: two commits checking one record never go in one group, so both cannot land", async () => {
  await using s = await store(0);
  const record = ["commit_paths", "record"];
  const { versionstamp } = await s.kv.set(record, { note: 0 });
  const group = new GroupCommit(s.kv);
  // Two groups in flight first: the next commits wait and are then taken together.
  const fillers = [1, 2].map((i) =>
    group.commit(
      { key: ["commit_paths", "filler", i], versionstamp: null },
      (op) => op.set(["commit_paths", "filler", i], i),
    )
  );
  const both = [1, 2].map((note) =>
    group.commit({ key: record, versionstamp }, (op) => op.set(record, { note }))
  );
  const results = await Promise.all(both);
  assert.equal((await Promise.all(fillers)).filter((r) => r?.ok).length, 2);
  // Both checked the same versionstamp: only the first may land.
  assert.deepEqual(results.map((r) => r !== null), [true, false]);
  assert.deepEqual((await s.kv.get(record)).value, { note: 1 });
});

Deno.test("GroupCommit: members whose write throws are answered null, and later commits still go", async () => {
  await using s = await store(0);
  const group = new GroupCommit(s.kv);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const orPending = <T>(p: Promise<T>) =>
    Promise.race([p, new Promise<"pending">((r) => timer = setTimeout(() => r("pending"), 2_000))])
      .finally(() => clearTimeout(timer));
  const bad = [1, 2, 3].map((i) =>
    group.commit({ key: ["commit_paths", "bad", i], versionstamp: null }, () => {
      throw new Error("a write that cannot be built");
    })
  );
  assert.deepEqual(await orPending(Promise.all(bad)), [null, null, null]);
  const good = await orPending(
    group.commit(
      { key: ["commit_paths", "good"], versionstamp: null },
      (op) => op.set(["commit_paths", "good"], 1),
    ),
  );
  assert.ok(good !== "pending" && good?.ok, `a later commit lands: ${JSON.stringify(good)}`);
  assert.equal((await s.kv.get(["commit_paths", "good"])).value, 1);
});

/**
 * `real` with each atomic operation's checks counted and its commit held at a gate until the
 * test opens it: a store whose round trips take as long as the test wants.
 */
function gated(real: Deno.Kv) {
  let open!: () => void;
  const gate = new Promise<void>((r) => open = r);
  const seen = { inFlight: 0, most: 0, checks: [] as number[] };
  const kv = replacing(real, "atomic", (target) => () => {
    const op = target.atomic();
    let checks = 0;
    const check = op.check.bind(op);
    op.check = (...c: Deno.AtomicCheck[]) => (checks += c.length, check(...c));
    const commit = op.commit.bind(op);
    op.commit = async () => {
      seen.checks.push(checks);
      seen.most = Math.max(seen.most, ++seen.inFlight);
      try {
        await gate;
        return await commit();
      } finally {
        seen.inFlight--;
      }
    };
    return op;
  });
  return { kv, seen, open };
}

Deno.test("GroupCommit: full groups go to the store at once, not two operations at a time", async () => {
  // 50 accounts charged at once against a store that holds every commit: two partial groups go
  // first, and every ten that gather behind them go as well, without waiting for those two.
  await using s = await store(50);
  const held = gated(s.kv);
  const meter = new Meter(held.kv, s.plans, systemClock);
  const calls = s.ids.map(({ account, key }) => meter.call(account, key, CALL));
  const reached = await until(() => held.seen.inFlight >= 4);
  held.open();
  const outcomes = await Promise.all(calls);
  assert.ok(reached, `${held.seen.most} operations in flight at most`);
  assert.ok(outcomes.every((r) => r.outcome === "admitted"));
  for (const { account } of s.ids) assert.equal(await s.used(account), 1);
});

Deno.test("no atomic operation of the meter carries more than ten checks, counted", async () => {
  await using s = await store(40);
  const held = gated(s.kv);
  const meter = new Meter(held.kv, s.plans, systemClock);
  const calls = s.ids.map(({ account, key }) => meter.call(account, key, CALL));
  // Held until a full group has formed behind the first two.
  const full = await until(() => held.seen.inFlight >= 3);
  held.open();
  await Promise.all(calls);
  await Promise.all(s.ids.map(({ account, key }) => meter.call(account, key, CALL)));
  assert.ok(full, "a full group formed");
  const most = Math.max(...held.seen.checks);
  assert.ok(most > 1, `groups formed: ${held.seen.checks}`);
  assert.ok(most <= 10, `${most} checks in one operation: ${held.seen.checks}`);
  for (const { account } of s.ids) assert.equal(await s.used(account), 2);
});

/**
 * Two things processes sharing one KV file rely on. Commit turns (core/commit_turns.ts): a store
 * opened with turns makes a charge that has lost two commits to another process read and commit
 * inside one turn, and a commit waits only LOCK_WAIT_MS (50 ms) for a turn that a stopped process
 * keeps. The instance roll (metering/instance_roll.ts): an entry lives lifeMs, and a started
 * instance renews, and so compares catalogs, every everyMs. Only races between processes showed
 * these, so nothing pinned them (probe HU). The turn's flock is watched from outside with
 * util-linux flock(1), as another process would meet it; the 50 ms wait runs on a clock the test
 * moves by hand.
 */
import assert from "node:assert/strict";
import { CommitTurns, takeTurns } from "../core/commit_turns.ts";
import { commitLockFile, removeKvFiles } from "../core/kv_files.ts";
import { Accounts } from "../metering/accounts.ts";
import { builtinPlans, parsePlans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";
import { KV } from "../metering/kv_layout.ts";
import { readAccount, transact } from "../metering/transact.ts";
import { InstanceRoll } from "../metering/instance_roll.ts";
import { handClock, realClearTimeout, realSetTimeout } from "./hand_clock.ts";
import { replacing } from "./counted_kv.ts";

/** Taken before any test replaces it, so the tests' own waits always run on real time. */
const wait = (ms: number) => new Promise<void>((r) => realSetTimeout(r, ms));

/** Polls `cond` until it holds or `ms` pass; whether it held. */
async function until(cond: () => boolean | Promise<boolean>, ms = 5_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) return false;
    await wait(10);
  }
  return true;
}

/** Whether another process finds `path`'s flock taken (flock(1), without waiting). */
async function lockedForOthers(path: string): Promise<boolean> {
  const { code, stderr } = await new Deno.Command("flock", {
    args: ["-n", "-E", "7", path, "true"],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (code !== 0 && code !== 7) throw new Error(`flock: ${new TextDecoder().decode(stderr)}`);
  return code === 7;
}

/** Turns that have met another process's refusal once: every later commit takes the turn. */
async function sharedTurns(lockPath: string): Promise<CommitTurns> {
  const turns = new CommitTurns(lockPath);
  await turns.commit(() => Promise.reject(new Error("database is locked"))).catch(() => {});
  return turns;
}

Deno.test("a charge that lost two commits to another process reads and commits its third try inside one turn", async () => {
  const dir = await Deno.makeTempDir();
  const kvPath = `${dir}/shelf.kv`;
  const lockPath = commitLockFile(kvPath);
  const real = await Deno.openKv(kvPath);
  const other = await Deno.openKv(kvPath); // another process's connection
  try {
    const account = (await new Accounts(real, builtinPlans(), systemClock)
      .create("turns@example.com", "scale")).id;
    // Each read of the record: was the turn held while it was read? After each of the first
    // two reads the other connection writes the record, so that commit conflicts.
    const heldAtRead: boolean[] = [];
    const watched = replacing(real, "get", (target) => async (key: Deno.KvKey) => {
      heldAtRead.push(await lockedForOthers(lockPath));
      const entry = await target.get(key);
      if (heldAtRead.length <= 2) await other.set(key, entry.value);
      return entry;
    });
    const kv = takeTurns(watched, await sharedTurns(lockPath));
    const { result } = await transact(kv, account, null, (s) => {
      s!.used++;
      return { next: s, result: "charged" };
    });
    assert.equal(result, "charged");
    assert.deepEqual(heldAtRead, [false, false, true], "the third read is inside the turn");
    assert.equal((await readAccount(other, account))!.state.used, 1);
  } finally {
    other.close();
    real.close(); // closes the turns too (takeTurns)
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a commit waits 50 ms, not longer, for a turn that a stopped process keeps, then goes ahead", async () => {
  const dir = await Deno.makeTempDir();
  const lockPath = `${dir}/shelf.kv-turns`;
  const turns = await sharedTurns(lockPath);
  // The stopped process: the turn's flock, taken on a file of its own and never given back.
  const holder = await Deno.open(lockPath, { read: true, write: true });
  await holder.lock(true);
  let released = false;
  try {
    let ran = false;
    let commit: Promise<number>;
    {
      using clock = handClock();
      commit = turns.commit(() => {
        ran = true;
        return Promise.resolve(7);
      });
      assert.ok(await until(() => clock.pending === 1), "the wait for the turn began");
      clock.advance(49);
      await wait(50);
      assert.equal(ran, false, "still waiting for the turn at 49 ms");
      clock.advance(1);
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const got = await Promise.race([
      commit,
      new Promise<"waiting">((r) => timer = realSetTimeout(() => r("waiting"), 2_000)),
    ]).finally(() => realClearTimeout(timer));
    assert.equal(got, 7, "the commit went ahead at 50 ms");
    assert.equal(ran, true);
    await holder.unlock();
    released = true;
    // The turns' own request, answered late, is handed back: the flock is free again.
    assert.ok(await until(async () => !(await lockedForOthers(lockPath))));
  } finally {
    if (!released) await holder.unlock();
    holder.close();
    await until(async () => !(await lockedForOthers(lockPath)));
    turns.close();
    await Deno.remove(dir, { recursive: true });
  }
});

const plan = (credits: number) =>
  parsePlans(JSON.stringify({
    plans: [{ id: "pro", credits, rate_limit_per_sec: 5, max_keys: 2, groups: ["products"] }],
  }));

Deno.test("instance roll: an entry lives lifeMs, so an instance that renews later still sees its catalog", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(kvPath);
  const said: string[] = [];
  // Renewals every 10 ms, entries that live a minute.
  const timing = { everyMs: 10, lifeMs: 60_000 };
  const a = new InstanceRoll(kv, plan(20), { error: () => {} }, timing);
  const b = new InstanceRoll(kv, plan(1_000), { error: (m) => void said.push(m) }, timing);
  try {
    const before = Date.now();
    await a.renew();
    const after = Date.now();
    const entry = (await kv.get<{ expires_at: number }>(KV.instance(a.id))).value!;
    assert.ok(
      entry.expires_at >= before + 60_000 && entry.expires_at <= after + 60_000,
      `expires ${entry.expires_at - after} ms after the renewal`,
    );
    await wait(100); // ten renewal intervals, far within the entry's life
    await b.renew();
    assert.equal(said.length, 1, "b sees a's different catalog");
    assert.match(said[0], /runs a different plan catalog/);
  } finally {
    await a.stop();
    await b.stop();
    kv.close();
    await removeKvFiles(kvPath);
  }
});

Deno.test("instance roll: a started instance renews every everyMs, and so reports a newcomer's catalog by itself", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(kvPath);
  const said: string[] = [];
  const timing = { everyMs: 100, lifeMs: 60_000 };
  const a = new InstanceRoll(kv, plan(20), { error: (m) => void said.push(m) }, timing);
  const b = new InstanceRoll(kv, plan(1_000), { error: () => {} }, timing);
  try {
    await a.start();
    assert.deepEqual(said, []);
    await b.renew(); // the newcomer; a is not asked to look
    assert.ok(await until(() => said.length > 0), "a reported b at one of its renewals");
    assert.equal(said.length, 1);
  } finally {
    await a.stop();
    await b.stop();
    kv.close();
    await removeKvFiles(kvPath);
  }
});

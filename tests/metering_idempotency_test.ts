import assert from "node:assert/strict";
import { Accounts } from "../metering/accounts.ts";
import { Meter } from "../metering/meter.ts";
import { builtinPlans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { transact } from "../metering/transact.ts";
import { LOCKED_TRIES } from "../core/lock_backoff.ts";
import { withCommits } from "./counted_kv.ts";

/**
 * A store whose commits land but whose replies are lost, as a KV Connect client may see when a
 * connection drops after the server applied a write.
 */
function losingReplies(kv: Deno.Kv, lose: () => boolean): Deno.Kv {
  return withCommits(kv, async (commit) => {
    const r = await commit();
    if (r.ok && lose()) throw new Error("connection reset after the commit was applied");
    return r;
  });
}

Deno.test("a charge whose commit reply is lost is not applied twice", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(path);
  try {
    const plans = builtinPlans();
    const accounts = new Accounts(kv, plans, systemClock);
    const a = await accounts.create("idem@example.com", "scale");
    const { key } = await accounts.createKey(a.id);
    let n = 0;
    const meter = new Meter(losingReplies(kv, () => n++ % 2 === 0), plans, systemClock);
    for (let i = 0; i < 10; i++) {
      const r = await meter.call(a.id, key.id, { group: "products", cost: 1, valid: true });
      assert.equal(r.outcome, "admitted");
    }
    assert.equal((await accounts.get(a.id)).used, 10);
  } finally {
    kv.close();
    await removeKvFiles(path);
  }
});

Deno.test("two meters on one KV file (two instances) never admit past the allowance", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const kv1 = await Deno.openKv(path);
  const kv2 = await Deno.openKv(path);
  try {
    const { Plans, BUILTIN_PLANS } = await import("../metering/plans.ts");
    const plans = new Plans([...BUILTIN_PLANS, {
      id: "x",
      credits: 40,
      rate_limit_per_sec: 10_000,
      max_keys: 2,
      groups: ["products"],
    }]);
    const accounts = new Accounts(kv1, plans, systemClock);
    const a = await accounts.create("two@example.com", "x");
    const { key } = await accounts.createKey(a.id);
    const m1 = new Meter(kv1, plans, systemClock);
    const m2 = new Meter(kv2, plans, systemClock);
    const calls = Array.from(
      { length: 200 },
      (_, i) => (i % 2 ? m1 : m2).call(a.id, key.id, { group: "products", cost: 1, valid: true }),
    );
    const outcomes = (await Promise.all(calls)).map((r) => r.outcome);
    assert.equal(outcomes.filter((o) => o === "admitted").length, 40);
    assert.equal(outcomes.filter((o) => o === "quota_exhausted").length, 160);
    assert.equal((await accounts.get(a.id)).used, 40);
  } finally {
    kv1.close();
    kv2.close();
    await removeKvFiles(path);
  }
});

Deno.test("a write whose reply is lost after the store refused it again and again is known to have landed, not failed and not applied twice", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(path);
  try {
    const plans = builtinPlans();
    const accounts = new Accounts(kv, plans, systemClock);
    const a = await accounts.create("refused@example.com", "scale");
    // Commits refused without landing, as a store another process holds refuses them, up to the
    // last try before the write is taken to fail; that one lands, and its reply is lost.
    let commits = 0;
    const refusing = withCommits(kv, async (commit) => {
      commits++;
      if (commits < LOCKED_TRIES) throw new Error("database is locked");
      const r = await commit();
      if (commits === LOCKED_TRIES) throw new Error("connection reset after the commit");
      return r;
    });
    const { result } = await transact(refusing, a.id, null, (state) => {
      state!.used++;
      return { next: state, result: "charged" };
    });
    assert.equal(result, "charged");
    assert.equal(commits, LOCKED_TRIES);
    assert.equal((await accounts.get(a.id)).used, 1);
  } finally {
    kv.close();
    await removeKvFiles(path);
  }
});

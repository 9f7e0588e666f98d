/**
 * A store that answers reads but refuses writes (here: another program holds SQLite's write lock
 * on the KV file, as a full disk would also make every commit throw) fails metered calls with 503
 * `unavailable` after a few seconds of backing off, uncharged and logged as `store write failed`,
 * not as an account "busy"; once the store takes writes again, calls are served and charged, and
 * the refund of a call that failed meanwhile lands.
 * Real server on loopback, real KV file, a real second SQLite connection holding the lock.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { failingCallUnderWay, startServer } from "./test_server.ts";
import { Accounts } from "../metering/accounts.ts";
import { Meter, type RefundResult, type Snapshot } from "../metering/meter.ts";
import { CallCharges } from "../routes/call_charges.ts";
import { allHeld, heldCredits } from "../metering/credits_in_flight.ts";
import { builtinPlans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";
import { removeKvFiles } from "../core/kv_files.ts";

interface StoreFile {
  path: string;
  accounts: Accounts;
  meter: Meter;
  /** A starter account with one key that `calls` calls of 1 credit were charged to. */
  charged(email: string, calls: number): Promise<{ id: string; period: number }>;
  /** The lines written to `log`, the refunds' log in these tests. */
  lines: string[];
  log: (message: string) => void;
}

/** A meter and accounts on a KV file of their own, as `work` needs them; the file removed after. */
async function onStoreFile(work: (s: StoreFile) => Promise<void>): Promise<void> {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(path);
  try {
    const plans = builtinPlans();
    const accounts = new Accounts(kv, plans, systemClock);
    const meter = new Meter(kv, plans, systemClock);
    const lines: string[] = [];
    await work({
      path,
      accounts,
      meter,
      lines,
      log: (m) => void lines.push(m),
      async charged(email, calls) {
        const a = await accounts.create(email, "starter");
        const { key } = await accounts.createKey(a.id);
        for (let i = 0; i < calls; i++) {
          await meter.call(a.id, key.id, { group: "products", cost: 1, valid: true });
        }
        return { id: a.id, period: (await accounts.get(a.id)).period_start };
      },
    });
  } finally {
    kv.close();
    await removeKvFiles(path);
  }
}

Deno.test("a store that refuses writes: 503 unavailable, logged, nothing charged; served again once it writes", async () => {
  await using s = await startServer();
  const { id, key } = await s.account("starter");
  const call = async () => {
    const r = await s.get("/v1/products/offers?asin=B07H57DNVV", key);
    return { status: r.status, body: await r.json(), headers: r.headers };
  };
  assert.equal((await call()).status, 200);
  const lock = new DatabaseSync(s.kvPath);
  try {
    lock.exec("BEGIN EXCLUSIVE");
    const refused = await call();
    assert.equal(refused.status, 503);
    assert.equal(refused.body.error.code, "unavailable");
    assert.equal(refused.headers.get("retry-after"), "1");
    assert.ok(s.errors.some((e) => e.startsWith("store write failed")), s.errors.join("\n"));
  } finally {
    lock.exec("ROLLBACK");
    lock.close();
  }
  assert.equal((await call()).status, 200);
  assert.equal((await s.accounts.get(id)).used, 2, "the refused call was not charged");
});

Deno.test("the refund of a failed call that the store would not take lands once it takes writes again", async () => {
  await using s = await startServer();
  const { id, key } = await s.account("starter");
  const { answer: pending } = await failingCallUnderWay(s, key, 300);
  const lock = new DatabaseSync(s.kvPath);
  let failed: Response;
  try {
    lock.exec("BEGIN EXCLUSIVE");
    failed = await pending; // its refund is refused for as long as the lock is held
  } finally {
    lock.exec("ROLLBACK");
    lock.close();
  }
  assert.equal(failed.status, 502);
  assert.equal(failed.headers.get("x-credits-cost"), "0");
  // Not landed yet: what is left says so (the call's cost is 0 all the same, as it lands later).
  const plan = builtinPlans().get("starter")!;
  assert.equal(failed.headers.get("x-credits-remaining"), String(plan.credits - 1));
  await failed.body?.cancel();
  assert.ok(s.errors.some((e) => e.includes("it is tried again")), s.errors.join("\n"));
  for (let i = 0; i < 50 && (await s.accounts.get(id)).used !== 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal((await s.accounts.get(id)).used, 0, "the failed call is not charged in the end");
});

Deno.test("a stop tries every refund still put off once more, and names in the log each that does not land", async () => {
  await onStoreFile(async ({ path, accounts, meter, charged, lines, log }) => {
    const refuse = async (ids: string[]) => {
      const lock = new DatabaseSync(path);
      lock.exec("BEGIN EXCLUSIVE");
      try {
        for (const id of ids) {
          assert.equal(
            await meter.refundSurely(id, (await accounts.get(id)).period_start, 1, undefined, log),
            null,
          );
        }
      } finally {
        lock.exec("ROLLBACK");
        lock.close();
      }
    };
    const a = await charged("settle-a@example.com", 1);
    const b = await charged("settle-b@example.com", 1);
    await refuse([a.id]); // put off; the store takes writes again before the stop
    await meter.settleRefunds();
    assert.equal((await accounts.get(a.id)).used, 0, "landed at the stop, not an hour later");
    await refuse([b.id]);
    const lock = new DatabaseSync(path);
    lock.exec("BEGIN EXCLUSIVE"); // the store still refuses at the stop
    try {
      await meter.settleRefunds();
    } finally {
      lock.exec("ROLLBACK");
      lock.close();
    }
    assert.equal((await accounts.get(b.id)).used, 1);
    assert.ok(
      lines.some((l) => l.includes(b.id) && l.includes("not applied before the stop")),
      lines.join("\n"),
    );
  });
});

Deno.test("a stop's try of a put-off refund while its background try is under way gives it back once", async () => {
  await onStoreFile(async ({ path, accounts, meter, charged }) => {
    const a = await charged("once@example.com", 2);
    const lock = new DatabaseSync(path);
    lock.exec("BEGIN EXCLUSIVE");
    let held = true;
    try {
      assert.equal(await meter.refundSurely(a.id, a.period, 1, undefined, () => {}), null);
      // The background try starts after 1 s and waits on the lock; the stop comes meanwhile.
      await new Promise((r) => setTimeout(r, 1_300));
      lock.exec("ROLLBACK");
      held = false;
      await meter.settleRefunds();
    } finally {
      if (held) lock.exec("ROLLBACK");
      lock.close();
    }
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await accounts.get(a.id)).used, 1, "two charged, one given back, once");
  });
});

Deno.test("a stop waits a while for refunds on their first try, and names each that has not landed", async () => {
  await onStoreFile(async ({ path, accounts, meter, charged, lines, log }) => {
    const a = await charged("first-try@example.com", 2);
    await meter.settleRefunds();
    assert.equal(lines.length, 0, "nothing to say when no refund is under way");
    const lock = new DatabaseSync(path);

    // The store is held past the stop's wait: the refund is named, and lands once it is let go.
    lock.exec("BEGIN EXCLUSIVE");
    let landed: Promise<RefundResult | null>;
    try {
      // Its commit backs off the lock (about 3 s in all before it is put off); the stop comes now.
      landed = meter.refundSurely(a.id, a.period, 1, undefined, log);
      await meter.settleRefunds(300);
      assert.ok(
        lines.some((l) =>
          l.includes(a.id) &&
          l.includes("not applied before the stop (a write of it was still under way at the stop")
        ),
        lines.join("\n"),
      );
    } finally {
      lock.exec("ROLLBACK");
    }
    assert.equal((await landed)?.applied, true, "it landed once the lock was gone");
    assert.equal((await accounts.get(a.id)).used, 1);

    // The store is let go during the stop's wait: the stop waits for the refund, which lands.
    lines.length = 0;
    lock.exec("BEGIN EXCLUSIVE");
    try {
      landed = meter.refundSurely(a.id, a.period, 1, undefined, log);
      const settled = meter.settleRefunds(3_000);
      await new Promise((r) => setTimeout(r, 300));
      lock.exec("ROLLBACK");
      await settled;
      assert.equal((await accounts.get(a.id)).used, 0, "landed before the stop's wait ended");
      assert.equal(lines.length, 0, lines.join("\n"));
    } finally {
      lock.close();
    }
    assert.equal((await landed)?.applied, true);
  });
});

Deno.test("a stop tries a put-off refund again and again while its time lasts, not once", async () => {
  await onStoreFile(async ({ path, accounts, meter, charged, lines, log }) => {
    const a = await charged("again@example.com", 1);
    const lock = new DatabaseSync(path);
    lock.exec("BEGIN EXCLUSIVE");
    try {
      // Put off: its first commit backed off the lock for 1.3-2.5 s and gave up.
      assert.equal(await meter.refundSurely(a.id, a.period, 1, undefined, log), null);
      // The stop's first try gives up the same way, while the lock is still held; the store
      // takes writes again after 3.5 s, with time left in the stop's 6 s.
      const settled = meter.settleRefunds(6_000);
      await new Promise((r) => setTimeout(r, 3_500));
      lock.exec("ROLLBACK");
      await settled;
    } finally {
      lock.close();
    }
    assert.equal((await accounts.get(a.id)).used, 0, "landed within the stop's time");
    assert.ok(!lines.some((l) => l.includes("not applied before the stop")), lines.join("\n"));
  });
});

Deno.test("a refund begun while a stop is settling is waited for, tried again, and named if it does not land", async () => {
  await onStoreFile(async ({ path, accounts, meter, charged, lines, log }) => {
    const a = await charged("early@example.com", 1);
    const b = await charged("late@example.com", 1);
    const lock = new DatabaseSync(path);

    // The store lets go 4.5 s into a 9 s stop: a refund begun 3.5 s in (a request still open
    // when the settling began) lands before the stop ends, as the one begun before it does.
    lock.exec("BEGIN EXCLUSIVE");
    let held = true;
    try {
      const early = meter.refundSurely(a.id, a.period, 1, undefined, log);
      const settled = meter.settleRefunds(9_000);
      await new Promise((r) => setTimeout(r, 3_500));
      const late = meter.refundSurely(b.id, b.period, 1, undefined, log);
      await new Promise((r) => setTimeout(r, 1_000));
      lock.exec("ROLLBACK");
      held = false;
      await settled;
      assert.equal((await accounts.get(a.id)).used, 0);
      assert.equal(
        (await accounts.get(b.id)).used,
        0,
        "the late refund landed before the stop ended",
      );
      assert.ok(!lines.some((l) => l.includes("not applied before the stop")), lines.join("\n"));
      await Promise.all([early, late]);
    } finally {
      if (held) lock.exec("ROLLBACK");
    }

    // The store is held past the stop: a refund put off before it keeps the stop trying, and a
    // refund begun meanwhile, put off in its turn, is named as well.
    const c = await charged("put-off@example.com", 1);
    const d = await charged("late-named@example.com", 1);
    lines.length = 0;
    lock.exec("BEGIN EXCLUSIVE");
    let late: Promise<RefundResult | null> | undefined;
    try {
      assert.equal(await meter.refundSurely(c.id, c.period, 1, undefined, log), null);
      const settled = meter.settleRefunds(5_000);
      await new Promise((r) => setTimeout(r, 700));
      late = meter.refundSurely(d.id, d.period, 1, undefined, log);
      await settled;
      for (const id of [c.id, d.id]) {
        assert.ok(
          lines.some((l) => l.includes(id) && l.includes("not applied before the stop")),
          lines.join("\n"),
        );
      }
    } finally {
      lock.exec("ROLLBACK");
      lock.close();
    }
    await late;
  });
});

Deno.test("a stop still open settles refunds that begin late, and a call's parts are refunded at once", async () => {
  await onStoreFile(async ({ path, meter, charged, lines, log }) => {
    const a = await charged("open-call@example.com", 1);
    const b = await charged("parts@example.com", 5);
    const lock = new DatabaseSync(path);
    lock.exec("BEGIN EXCLUSIVE");
    try {
      // Nothing is being refunded when the settling starts, but the server's stop is still open:
      // a call cut later refunds then, and that refund, kept from the store, is named.
      let open = true;
      const settled = meter.settleRefunds(3_000, () => open);
      await new Promise((r) => setTimeout(r, 500));
      const late = meter.refundSurely(a.id, a.period, 1, undefined, log);
      // A search's five parts (its own credit, four further pages): every one begins at once, so
      // the stop names them all; one after another, each waited out the lock first.
      const charges = new CallCharges(meter, b.id, { keyId: "k", endpoint: "search" }, log);
      for (let i = 0; i < 5; i++) {
        charges.add({ periodStart: b.period, at: Date.now() } as Snapshot, 1);
      }
      const parts = charges.refundAll();
      setTimeout(() => (open = false), 1_000);
      await settled;
      assert.ok(
        lines.some((l) => l.includes(a.id) && l.includes("not applied before the stop")),
        lines.join("\n"),
      );
      const named = lines.filter((l) =>
        l.includes(b.id) && l.includes("not applied before the stop")
      );
      assert.equal(named.length, 5, lines.join("\n"));
      lock.exec("ROLLBACK");
      await Promise.all([late, parts]);
    } finally {
      if (lock.isTransaction) lock.exec("ROLLBACK");
      lock.close();
    }
  });
});

Deno.test("a search whose further page meets a store that refuses writes is a 503 unavailable, not an upstream failure", async () => {
  await using s = await startServer();
  const { id, key } = await s.account("scale");
  s.source.searchPages = 3;
  s.source.delayMs = 600;
  const answer = s.get("/v1/products/search?query=lamp&limit=60", key);
  await new Promise((r) => setTimeout(r, 200)); // admitted and charged; its pages come next
  const lock = new DatabaseSync(s.kvPath);
  let r: Response;
  try {
    lock.exec("BEGIN EXCLUSIVE");
    r = await answer;
  } finally {
    lock.exec("ROLLBACK");
    lock.close();
  }
  const body = await r.json();
  assert.equal(r.status, 503, JSON.stringify(body));
  assert.equal(body.error.code, "unavailable");
  assert.equal(r.headers.get("retry-after"), "1");
  assert.equal(r.headers.get("x-credits-cost"), "0");
  assert.ok(s.errors.some((e) => e.startsWith("store write failed")), s.errors.join("\n"));
  for (let i = 0; i < 50 && (await s.accounts.get(id)).used !== 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal((await s.accounts.get(id)).used, 0, "its own credit given back");
});

Deno.test("a page charge that lands after its call failed or ended is given back at once, and not left held", async () => {
  await onStoreFile(async ({ accounts, meter, charged }) => {
    const a = await charged("late-charge@example.com", 4);
    const snapshot = { periodStart: a.period, at: Date.now() } as Snapshot;
    const tag = { keyId: "k", endpoint: "search" };
    const failed = new CallCharges(meter, a.id, tag, () => {});
    failed.add(snapshot, 1);
    await failed.refundAll(); // the call failed: its own credit given back
    failed.add(snapshot, 1); // a page charge of the same call, landing only now
    failed.end();
    const ended = new CallCharges(meter, a.id, tag, () => {});
    ended.add(snapshot, 1);
    ended.end(); // answered and paid
    ended.add(snapshot, 1); // a charge that lands after the answer
    for (let i = 0; i < 50 && (await accounts.get(a.id)).used !== 1; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal((await accounts.get(a.id)).used, 1, "only the answered call's credit stays");
    assert.equal(heldCredits(a.id), 0);
  });
});

Deno.test("an account whose calls have all ended or failed holds nothing and is not named by a stop", async () => {
  await onStoreFile(async ({ meter, charged }) => {
    const a = await charged("ended-calls@example.com", 2);
    const snapshot = { periodStart: a.period, at: Date.now() } as Snapshot;
    const tag = { keyId: "k", endpoint: "search" };
    const ended = new CallCharges(meter, a.id, tag, () => {});
    ended.add(snapshot, 1);
    ended.add(snapshot, 2);
    assert.deepEqual(allHeld().filter(([id]) => id === a.id), [[a.id, 3]]);
    ended.end(); // answered and paid
    const failed = new CallCharges(meter, a.id, tag, () => {});
    failed.add(snapshot, 1);
    await failed.refundAll(); // the call failed: given back
    failed.end();
    assert.equal(heldCredits(a.id), 0);
    // A stop names each account in allHeld() with credits "not given back": none here.
    assert.deepEqual(allHeld().filter(([id]) => id === a.id), []);
  });
});

/**
 * Edges of giving credits back (probe HY): what a failed call's answer says is left, the very
 * millisecond a period ends, a refund larger than the period's usage, a search's refund of pages
 * that never reaches the call's own credit, and the stop's line for a put-off refund, which says
 * it may have landed only when a write of it was under way.
 * Real server on loopback, or a real meter on a KV file of its own; a second SQLite connection
 * holding the file's write lock makes the store refuse writes.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { ControlledSource, ManualClock, meterHeadersOf, startServer } from "./test_server.ts";
import { Accounts } from "../metering/accounts.ts";
import { Meter, type RefundResult } from "../metering/meter.ts";
import { CallCharges } from "../routes/call_charges.ts";
import { builtinPlans, parsePlans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";
import { PERIOD_MS } from "../metering/account_state.ts";
import { ApiError } from "../core/api_error.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import type { DataRequest } from "../upstream/data_source.ts";

const plans = parsePlans(JSON.stringify({
  plans: [{ id: "three", credits: 100, rate_limit_per_sec: 3, max_keys: 1, groups: ["products"] }],
}));
const OFFERS = "/v1/products/offers?asin=B07H57DNVV";
const NOT_APPLIED = "not applied before the stop";
const UNDER_WAY = "still under way at the stop";

/** Answers only once let go, so that the clock can be moved while the call is under way. */
class HeldSource extends ControlledSource {
  readonly started = Promise.withResolvers<void>();
  readonly go = Promise.withResolvers<void>();

  override async fetch(req: DataRequest): Promise<unknown> {
    this.started.resolve();
    await this.go.promise;
    return await super.fetch(req);
  }
}

/** A meter and accounts on a KV file of their own, the file removed after. */
async function store() {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(path);
  const accounts = new Accounts(kv, builtinPlans(), systemClock);
  const meter = new Meter(kv, builtinPlans(), systemClock);
  const lines: string[] = [];
  return {
    path,
    accounts,
    meter,
    /** The lines written to `log`, the refunds' log in these tests. */
    lines,
    log: (m: string) => void lines.push(m),
    /** A starter account with one key that `calls` calls of 1 credit were charged to. */
    async charged(calls: number) {
      const a = await accounts.create(`r${crypto.randomUUID()}@example.com`, "starter");
      const { key } = await accounts.createKey(a.id);
      for (let i = 0; i < calls; i++) {
        await meter.call(a.id, key.id, { group: "products", cost: 1, valid: true });
      }
      return { id: a.id, keyId: key.id, period: (await accounts.get(a.id)).period_start };
    },
    [Symbol.asyncDispose]: async () => {
      kv.close();
      await removeKvFiles(path);
    },
  };
}

/** Another connection takes the file's write lock: every commit throws until `release`. */
function holdWrites(path: string) {
  const lock = new DatabaseSync(path);
  lock.exec("BEGIN EXCLUSIVE");
  return {
    release() {
      lock.exec("ROLLBACK");
      lock.close();
    },
  };
}

async function until(done: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 100 && !(await done()); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(await done(), what);
}

Deno.test("a failed call's answer tells the credits as its refund left them, its own credit back", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 5, 12));
  await using s = await startServer({ clock, plans });
  const { id, key } = await s.account("three");
  s.source.failWith = new ApiError(502, "upstream_error", "the marketplace failed");
  const failed = await meterHeadersOf(s.get(OFFERS, key));
  assert.deepEqual([failed.status, failed.cost, failed.remaining], [502, "0", "100"]);
  assert.equal((await s.accounts.get(id)).used, 0);
});

Deno.test("a call answered at the very millisecond its period ends tells the new period's credits and reset", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 5, 12));
  const source = new HeldSource();
  await using s = await startServer({ clock, plans, source });
  const { id, key } = await s.account("three");
  const end = (await s.accounts.get(id)).period_start + PERIOD_MS;
  clock.set(end - 1_000);
  const answer = meterHeadersOf(s.get(OFFERS, key));
  await source.started.promise; // admitted and charged in the period about to end
  clock.set(end);
  source.go.resolve();
  assert.deepEqual(await answer, {
    status: 200,
    cost: "1",
    remaining: "100",
    reset: new Date(end + PERIOD_MS).toISOString(),
    rate: '"per-key";r=3;t=1', // a new second: the key's whole window
  });
});

Deno.test("a refund of more credits than the period has used leaves it at none used, never below", async () => {
  await using s = await store();
  const a = await s.charged(1);
  const allowance = builtinPlans().get("starter")!.credits;
  const r = await s.meter.refund(a.id, a.period, 3);
  assert.equal(r?.applied, true);
  assert.equal(r?.snapshot.remaining, allowance, "no more credits than the plan gives");
  assert.equal((await s.accounts.get(a.id)).used, 0);
});

Deno.test("a search's refund of more pages than it was charged for never gives back the call's own credit", async () => {
  await using s = await store();
  const a = await s.charged(0);
  const tag = { keyId: a.keyId, endpoint: "/v1/products/search" };
  const charges = new CallCharges(s.meter, a.id, tag, s.log);
  const admitted = await s.meter.call(a.id, a.keyId, {
    group: "products",
    cost: 1,
    valid: true,
    endpoint: tag.endpoint,
  });
  charges.add(admitted.snapshot!, admitted.charged);
  const page = await s.meter.charge(a.id, 1, tag, "products");
  assert.ok(page.ok);
  charges.add(page.snapshot!, 1);
  assert.equal(await charges.refundLast(2), 1, "the one page, not the call");
  assert.equal(charges.total, 1);
  assert.equal((await s.accounts.get(a.id)).used, 1, "the call itself stays charged");
  charges.end();
});

Deno.test("a put-off refund whose stop's try is still writing when the stop ends is named as one that may have landed", async () => {
  await using s = await store();
  const a = await s.charged(1);
  const lock = holdWrites(s.path);
  try {
    assert.equal(await s.meter.refundSurely(a.id, a.period, 1, undefined, s.log), null);
    s.lines.length = 0;
    // A try backs off the lock for 1.25 s at least before it gives up: under way at 500 ms.
    await s.meter.settleRefunds(500);
  } finally {
    lock.release();
  }
  const line = s.lines.find((l) => l.includes(a.id) && l.includes(NOT_APPLIED));
  assert.ok(line, s.lines.join("\n"));
  assert.ok(line.includes(UNDER_WAY), line);
  // As the line warns: that write lands once the store takes writes again.
  await until(async () => (await s.accounts.get(a.id)).used === 0, "the try under way landed");
});

Deno.test("a put-off refund that a stop gives up with no write of it under way is named without the may-have-landed note", async () => {
  await using s = await store();
  const a = await s.charged(1);
  const b = await s.charged(1);
  const lock = holdWrites(s.path);
  let first: Promise<RefundResult | null> = Promise.resolve(null);
  try {
    assert.equal(await s.meter.refundSurely(a.id, a.period, 1, undefined, s.log), null);
    s.lines.length = 0;
    // a's next try is 1 s away. b's first try backs off the lock for 1.25 s at least, and the
    // stop waits on it for all of its 300 ms: a is given up untried.
    first = s.meter.refundSurely(b.id, b.period, 1, undefined, s.log);
    await s.meter.settleRefunds(300);
  } finally {
    lock.release();
  }
  const line = s.lines.find((l) => l.includes(a.id) && l.includes(NOT_APPLIED));
  assert.ok(line, s.lines.join("\n"));
  assert.ok(!line.includes(UNDER_WAY), line);
  const other = s.lines.find((l) => l.includes(b.id) && l.includes(NOT_APPLIED));
  assert.ok(other?.includes(UNDER_WAY), s.lines.join("\n"));
  assert.equal((await first)?.applied, true, "b's first try lands once the store takes writes");
  assert.equal((await s.accounts.get(a.id)).used, 1, "a was given up, not given back");
});

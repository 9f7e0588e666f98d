/**
 * KeyedLimiter (core/limiter.ts): slots per key, waiters served round-robin by owner, a bound on
 * each owner's waiters, and waiters that leave the queue when their signal aborts.
 */
import assert from "node:assert/strict";
import { KeyedLimiter, LimiterFull } from "../core/limiter.ts";

/** Work that runs until `release()` is called; `started` tells whether it has begun. */
function gate() {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  const g = { started: false, release, work: () => ((g.started = true), done) };
  return g;
}

const tick = () => new Promise((r) => setTimeout(r, 0));

/** Work that notes its name and ends. */
const note = (order: unknown[], name: unknown) => () => Promise.resolve(void order.push(name));

Deno.test("a freed slot goes to the next owner in turn, not to the oldest waiter", async () => {
  const limiter = new KeyedLimiter(1);
  const order: string[] = [];
  const holder = gate();
  const running = [limiter.run("US", holder.work, { owner: "a" })];
  for (const name of ["a1", "a2", "a3"]) {
    running.push(limiter.run("US", note(order, name), { owner: "a" }));
  }
  running.push(limiter.run("US", note(order, "b1"), { owner: "b" }));
  running.push(limiter.run("US", note(order, "c1"), { owner: "c" }));
  holder.release();
  await Promise.all(running);
  assert.deepEqual(order, ["a1", "b1", "c1", "a2", "a3"]);
});

Deno.test("without owners the queue is first come, first served, as before", async () => {
  const limiter = new KeyedLimiter(1);
  const order: number[] = [];
  const holder = gate();
  const running = [limiter.run("scrypt", holder.work)];
  for (let i = 0; i < 5; i++) running.push(limiter.run("scrypt", note(order, i)));
  holder.release();
  await Promise.all(running);
  assert.deepEqual(order, [0, 1, 2, 3, 4]);
});

Deno.test("an owner past its waiting bound is refused at once; other owners and keys are not", async () => {
  const limiter = new KeyedLimiter(1, 2);
  const holder = gate();
  const running = [limiter.run("US", holder.work, { owner: "a" })];
  running.push(limiter.run("US", () => Promise.resolve(), { owner: "a" }));
  running.push(limiter.run("US", () => Promise.resolve(), { owner: "a" }));
  await assert.rejects(limiter.run("US", () => Promise.resolve(), { owner: "a" }), LimiterFull);
  running.push(limiter.run("US", () => Promise.resolve(), { owner: "b" }));
  assert.equal(await limiter.run("DE", () => Promise.resolve(7), { owner: "a" }), 7);
  holder.release();
  await Promise.all(running);
});

Deno.test("a waiter whose signal aborts leaves the queue; the slot goes to the next one", async () => {
  const limiter = new KeyedLimiter(1, 1);
  const holder = gate();
  const running = limiter.run("US", holder.work, { owner: "a" });
  const stop = new AbortController();
  const left = limiter.run("US", () => Promise.resolve("ran"), { owner: "a", signal: stop.signal });
  stop.abort(new Error("stopping"));
  await assert.rejects(left, /stopping/);
  // Its place is free again (the bound is 1), and the slot passes it by.
  const next = gate();
  const after = limiter.run("US", next.work, { owner: "a" });
  holder.release();
  await running;
  await tick();
  assert.ok(next.started);
  next.release();
  await after;
  // Nothing is held: a new call starts at once.
  const fresh = gate();
  const last = limiter.run("US", fresh.work);
  await tick();
  assert.ok(fresh.started);
  fresh.release();
  await last;
});

Deno.test("an owner holds at most its share of the slots: another owner starts at once, and the owner's own waiters go on as its slots free", async () => {
  const limiter = new KeyedLimiter(3, Infinity, 2);
  const a = [gate(), gate(), gate()];
  const running = a.map((g) => limiter.run("US", g.work, { owner: "a" }));
  await tick();
  assert.deepEqual(a.map((g) => g.started), [true, true, false], "a holds two of three");
  const b = gate();
  running.push(limiter.run("US", b.work, { owner: "b" }));
  await tick();
  assert.ok(b.started, "b takes the slot a may not");
  a[0].release();
  await tick();
  assert.ok(a[2].started, "a's waiter takes a's freed slot");
  const c = gate();
  running.push(limiter.run("US", c.work, { owner: "c" }));
  await tick();
  assert.ok(!c.started, "every slot is taken");
  b.release();
  await tick();
  assert.ok(c.started, "b's freed slot goes to c, a holding its share");
  for (const g of [a[1], a[2], c]) g.release();
  await Promise.all(running);
});

Deno.test("work that pauses gives its slot to the next owner meanwhile, then gets one back in turn", async () => {
  const limiter = new KeyedLimiter(1, 1);
  const order: string[] = [];
  const backoff = gate();
  const a = limiter.run("US", async (pause) => {
    order.push("a tries");
    await pause(backoff.work); // a retry's back-off
    order.push("a retries");
  }, { owner: "a" });
  await tick();
  // b waited behind a's whole back-off before; now it runs while a sleeps.
  await limiter.run("US", note(order, "b"), { owner: "b" });
  assert.deepEqual(order, ["a tries", "b"]);
  // Another call of a takes the free slot, and a third waits: a's one allowed waiter.
  const held = gate();
  const a2 = limiter.run("US", held.work, { owner: "a" });
  const a3 = limiter.run("US", note(order, "a3"), { owner: "a" });
  await tick();
  assert.ok(held.started);
  // The paused call waits for a slot again past that bound: it held one.
  backoff.release();
  await tick();
  assert.deepEqual(order, ["a tries", "b"]);
  held.release();
  await Promise.all([a, a2, a3]);
  assert.deepEqual(order, ["a tries", "b", "a3", "a retries"]);
});

Deno.test("a pause whose signal aborts meanwhile ends the work without a slot held", async () => {
  const limiter = new KeyedLimiter(1);
  const ctl = new AbortController();
  const backoff = gate();
  const a = limiter.run("US", (pause) => pause(backoff.work), { owner: "a", signal: ctl.signal });
  await tick();
  const other = gate();
  const b = limiter.run("US", other.work, { owner: "b" });
  await tick();
  ctl.abort(new Error("hung up"));
  backoff.release();
  await assert.rejects(a, /hung up/);
  // b's slot is the only one counted: after it, c starts at once.
  other.release();
  await b;
  const order: string[] = [];
  await limiter.run("US", note(order, "c"), { owner: "c" });
  assert.deepEqual(order, ["c"]);
});

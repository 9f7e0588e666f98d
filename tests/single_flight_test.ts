/**
 * One upstream fetch shared by identical concurrent requests (upstream/single_flight.ts): each
 * caller waits as long as its own signal allows, and the fetch is aborted only once every caller
 * that joined it has given up (probes ED, EF: one call's deadline failed another's shared fetch).
 */
import assert from "node:assert/strict";
import { SingleFlight } from "../upstream/single_flight.ts";
import { startRig } from "./upstream_harness.ts";

/** A fetch that ends when told to, or when its signal aborts. */
function pending() {
  let finish!: (v: string) => void;
  const seen: AbortSignal[] = [];
  let started = 0;
  const work = (signal: AbortSignal) => {
    started++;
    seen.push(signal);
    return new Promise<string>((resolve, reject) => {
      finish = resolve;
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
  };
  return { work, seen, finish: (v: string) => finish(v), started: () => started };
}

/** Two callers, each with a signal of its own, joined on one fetch. */
function twoCallers() {
  const flights = new SingleFlight<string>();
  const f = pending();
  const a = new AbortController();
  const b = new AbortController();
  const first = flights.run("k", f.work, a.signal);
  const second = flights.run("k", f.work, b.signal);
  return { flights, f, a, b, first, second };
}

Deno.test("single flight: a caller that gives up leaves the fetch to the others, who get its answer", async () => {
  const { f, a, first, second } = twoCallers();
  assert.equal(f.started(), 1);
  a.abort(new Error("a's deadline"));
  await assert.rejects(first, /a's deadline/);
  assert.equal(f.seen[0].aborted, false, "still wanted by the second caller");
  f.finish("page");
  assert.equal(await second, "page");
});

Deno.test("single flight: the fetch is aborted once every caller has given up, and the next caller starts anew", async () => {
  const { flights, f, a, b, first, second } = twoCallers();
  a.abort(new Error("a"));
  b.abort(new Error("b"));
  await assert.rejects(first, /a/);
  await assert.rejects(second, /b/);
  assert.equal(f.seen[0].aborted, true);
  const third = flights.run("k", f.work, new AbortController().signal);
  assert.equal(f.started(), 2, "not joined to the aborted fetch");
  f.finish("again");
  assert.equal(await third, "again");
});

Deno.test("single flight: a caller without a signal keeps the fetch going; an aborted signal does not join", async () => {
  const flights = new SingleFlight<string>();
  const f = pending();
  const a = new AbortController();
  const first = flights.run("k", f.work, a.signal);
  const second = flights.run("k", f.work);
  a.abort(new Error("a"));
  await assert.rejects(first, /a/);
  assert.equal(f.seen[0].aborted, false);
  f.finish("page");
  assert.equal(await second, "page");
  await assert.rejects(flights.run("k", f.work, AbortSignal.abort(new Error("late"))), /late/);
  assert.equal(f.started(), 1);
});

Deno.test("over HTTP: a call joined to another's fetch is not ended by the other's deadline (probes ED, EF)", async () => {
  await using rig = await startRig({
    times: { deadlineMs: 2_000, morePagesMs: 60_000 },
    browser: { timeoutMs: 5_000 }, // the marketplace's slowness is the deadline's to meet
  });
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  // Past the first call's deadline, and 1.1 s within the second's: with 0.2 s, a loaded CI
  // machine once read the page too late for the second call as well.
  rig.fake.delayMs = 2_400;
  const first = rig.call("/v1/products/details?asin=B07H57DNVV");
  await new Promise((r) => setTimeout(r, 1_500));
  const second = rig.call("/v1/products/details?asin=B07H57DNVV");
  const [a, b] = await Promise.all([first, second]);
  assert.equal(a.status, 504, JSON.stringify(a.body).slice(0, 200));
  assert.equal(b.status, 200, JSON.stringify(b.body).slice(0, 200));
  assert.equal(rig.fake.pageRequests("/dp/"), 1, "one shared fetch");
  assert.equal(((await rig.call("/v1/usage")).body as { requests_used: number }).requests_used, 1);
  assert.equal(rig.server.errors.length, 0, rig.server.errors.join("\n"));
});

Deno.test("single flight: a caller arriving after every waiter gave up, while the aborted fetch has not settled, gets a fetch of its own", async () => {
  const flights = new SingleFlight<string>();
  // A fetch that sees its abort only once its work is done (a page still in a worker): it
  // settles, with the abort, some time after every caller gave up.
  const gates: (() => void)[] = [];
  const signals: AbortSignal[] = [];
  const work = async (signal: AbortSignal) => {
    signals.push(signal);
    const n = signals.length;
    await new Promise<void>((r) => gates.push(r));
    signal.throwIfAborted();
    return `page ${n}`;
  };
  const a = new AbortController();
  const first = flights.run("k", work, a.signal);
  a.abort(new Error("a's deadline"));
  await assert.rejects(first, /a's deadline/);
  assert.equal(signals[0].aborted, true);
  // The first fetch is still under way: a new caller must not join it.
  const late = flights.run("k", work, new AbortController().signal);
  assert.equal(signals.length, 2, "a fetch of its own");
  assert.equal(signals[1].aborted, false);
  gates[0](); // the aborted fetch settles (with its abort)
  gates[1]();
  assert.equal(await late, "page 2");
});

/**
 * A marketplace's upstream slots are shared out among accounts, over real HTTP with the real
 * browser transport against the fake marketplace serving corpus pages: one account's flood of
 * slow calls neither holds up another account's call nor queues without bound (503
 * upstream_busy, uncharged), and a call's deadline counts its wait for a slot (504, uncharged).
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import type { TestServer } from "./test_server.ts";
import { WAITING_PER_OWNER } from "../upstream/browser_transport.ts";
import type { KeyedLimiter } from "../core/limiter.ts";

const PRODUCT = "product/amazon.com__app-B07H57DNVV.html";

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

async function call(server: TestServer, key: string, path: string): Promise<Answer> {
  const res = await server.get(path, key);
  return { status: res.status, body: await res.json(), headers: res.headers };
}

async function used(server: TestServer, key: string): Promise<number> {
  return ((await call(server, key, "/v1/usage")).body as { requests_used: number }).requests_used;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const code = (a: Answer) => (a.body.error as { code?: string } | undefined)?.code;

/** Waits until `done()` holds, or `ms` have passed (so that a test without the fix fails, not hangs). */
async function until(done: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) await sleep(10);
}

Deno.test("one account's flood neither holds up another account's call nor queues past its bound", async () => {
  await using rig = await startRig({ plan: "scale", browser: { perMarketplace: 2 } });
  const other = await rig.server.account("scale");
  // One under way (an account holds all slots but one), WAITING_PER_OWNER waiting, and six more
  // that find the queue full.
  const flood = Array.from(
    { length: 1 + WAITING_PER_OWNER + 6 },
    (_, i) => `B0SLOW${String(i).padStart(4, "0")}`,
  );
  for (const asin of flood) rig.fake.page(`https://www.amazon.com/dp/${asin}`, PRODUCT);
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", PRODUCT);
  rig.fake.slowMs = 300; // each flood page holds a slot this long, then answers
  rig.fake.fail("slow", flood.length, "/dp/B0SLOW");

  const settled: Answer[] = [];
  const flooding = flood.map((asin) =>
    call(rig.server, rig.key, `/v1/products/details?asin=${asin}`).then((a) => {
      settled.push(a);
      return a;
    })
  );
  // The refusals come at once; once they are in, the rest of the flood is under way or queued.
  await until(() => settled.filter((a) => a.status === 503).length >= 6, 1_500);

  const mine = await call(rig.server, other.key, "/v1/products/details?asin=B07H57DNVV");
  const doneBefore = settled.filter((a) => a.status !== 503).length;
  assert.equal(mine.status, 200, JSON.stringify(mine.body).slice(0, 300));
  assert.equal(mine.body.asin, "B07H57DNVV");
  // It got the slot freed by the flood's first wave (or the next), not the one after the queue.
  assert.ok(
    doneBefore <= 4,
    `the other account's call waited for ${doneBefore} of the flood's calls to finish`,
  );

  const answers = await Promise.all(flooding);
  const busy = answers.filter((a) => a.status === 503);
  assert.equal(busy.length, 6, JSON.stringify(answers.map((a) => a.status)));
  for (const a of busy) {
    assert.equal(code(a), "upstream_busy");
    assert.equal(a.headers.get("retry-after"), "1");
    assert.equal(a.headers.get("x-credits-cost"), "0");
  }
  assert.equal(answers.filter((a) => a.status === 200).length, flood.length - 6);
  assert.equal(rig.fake.pageRequests("/dp/B0SLOW"), flood.length - 6, "refused calls never went");
  // Only the answered calls are paid for; the refusals were refunded.
  assert.equal(await used(rig.server, rig.key), flood.length - 6);
  assert.equal(await used(rig.server, other.key), 1);
});

Deno.test("a call whose deadline passes while it waits for a slot is an uncharged 504, and never goes", async () => {
  // One slot, a 10 s deadline per call, slow pages that outlast it. With a 5 s deadline, a loaded
  // machine once took so long to queue the three calls that the holder's deadline had passed.
  await using rig = await startRig({
    plan: "scale",
    browser: { perMarketplace: 1, deadlineMs: 10_000, timeoutMs: 20_000 },
  });
  const other = await rig.server.account("scale");
  for (const asin of ["B0SLOW0000", "B0FAST0001", "B0FAST0002", "B0SLOW0003"]) {
    rig.fake.page(`https://www.amazon.com/dp/${asin}`, PRODUCT);
  }
  rig.fake.slowMs = 20_000;
  rig.fake.fail("slow", 10, "/dp/B0SLOW");
  const details = (key: string, asin: string) =>
    call(rig.server, key, `/v1/products/details?asin=${asin}`);
  const limiter = (rig.transport as unknown as { limiter: KeyedLimiter }).limiter;
  const waiting = async (owner: string, n: number) => {
    await until(() => limiter.waitingOf("US", owner) === n, 4_000);
    assert.equal(limiter.waitingOf("US", owner), n, "queued");
  };

  // The account's slow call holds the slot until its deadline (10 s); its next two calls wait
  // behind it; the other account's slow call joins the queue after them. When the slot frees,
  // the account's first waiter has it, then the other account's turn comes, whose call holds the
  // slot until its own deadline, past that of the account's second waiter: that one times out
  // while still queued. Each call is seen queued before the next is made: with fixed pauses, a
  // loaded CI machine once queued the other account's call too late, and the waiter was served.
  let holderDone = false;
  const holder = details(rig.key, "B0SLOW0000").finally(() => (holderDone = true));
  await until(() => rig.fake.pageRequests("/dp/B0SLOW0000") === 1, 2_000);
  // A second apart, so that each deadline passes well after the one before: the holder's slot
  // frees a little after its deadline, and a waiter whose deadline fell within that went too.
  await sleep(1_000);
  const first = details(rig.key, "B0FAST0001");
  await waiting(rig.accountId, 1);
  await sleep(1_000);
  const queued = details(rig.key, "B0FAST0002");
  await waiting(rig.accountId, 2);
  await sleep(1_000);
  const others = details(other.key, "B0SLOW0003");
  await waiting(other.id, 1);
  assert.equal(rig.fake.pageRequests("/dp/B0SLOW0000"), 1, "all queued while the slot was held");
  assert.equal(holderDone, false, "the holder still held the slot when the last call queued");

  const waited = await queued;
  assert.equal(waited.status, 504, JSON.stringify(waited.body).slice(0, 300));
  assert.equal(code(waited), "upstream_timeout");
  assert.equal(waited.headers.get("x-credits-cost"), "0");
  assert.equal(rig.fake.pageRequests("/dp/B0FAST0002"), 0, "it left the queue without a request");

  assert.equal((await holder).status, 504);
  const served = (await first).status === 200 ? 1 : 0;
  await others;
  assert.equal(await used(rig.server, rig.key), served);
});

Deno.test("an account asking for a page another account has queued gets it in its own turn, not behind the other's queue", async () => {
  // Slow pages of 2.5 s (a longer exchange timeout than the rig's), so that the other account's
  // call has time to finish first on a loaded machine: at 0.8 s it failed once in CI.
  await using rig = await startRig({
    plan: "scale",
    browser: { perMarketplace: 2, timeoutMs: 6_000, deadlineMs: 15_000 },
  });
  const other = await rig.server.account("scale");
  for (const asin of ["B0SLOW0000", "B0SLOW0001", "B07H57DNVV"]) {
    rig.fake.page(`https://www.amazon.com/dp/${asin}`, PRODUCT);
  }
  rig.fake.slowMs = 2_500;
  rig.fake.fail("slow", 2, "/dp/B0SLOW");
  // The first account holds its one slot with a slow page and queues two more behind it.
  const settled: string[] = [];
  const first = ["B0SLOW0000", "B0SLOW0001", "B07H57DNVV"].map((asin) =>
    call(rig.server, rig.key, `/v1/products/details?asin=${asin}`).then((a) => {
      settled.push(asin);
      return a;
    })
  );
  await until(() => rig.fake.pageRequests("/dp/B0SLOW0000") > 0, 1_500);
  const mine = await call(rig.server, other.key, "/v1/products/details?asin=B07H57DNVV");
  assert.equal(mine.status, 200, JSON.stringify(mine.body).slice(0, 300));
  assert.deepEqual(settled, [], "answered before any of the first account's queue moved");
  for (const a of await Promise.all(first)) assert.equal(a.status, 200);
});

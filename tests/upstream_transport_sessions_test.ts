/**
 * The browser transport's bookkeeping that probe HW found unpinned, over the real transport and
 * the fake marketplace serving corpus pages: the shared-fetch key, the blocked run (what counts,
 * and whose it is), the redirect bound, which session eviction spares, the read budget checked
 * before a request, a caller's abort, a failed location flow forgotten, and the backoff between
 * retries (before the first one, and cut short by the call's deadline).
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { BLOCKED_CALLS } from "../upstream/browser_transport.ts";
import { MAX_UPSTREAM_BYTES, processReadBudget } from "../upstream/read_capped.ts";

const ASIN = "B07H57DNVV";
const PAGE = `https://www.amazon.com/dp/${ASIN}`;
const FIXTURE = "product/amazon.com__app-B07H57DNVV.html";
const DETAILS = `/v1/products/details?asin=${ASIN}`;
// Another product served with the same page: a call the result cache cannot answer.
const OTHER_PAGE = "https://www.amazon.com/dp/B0BJLF2BRM";
const UK_PAGE = "https://www.amazon.co.uk/dp/B07CL39Z8Q";
const UK_FIXTURE = "product/amazon.co.uk__app-B07CL39Z8Q.html";

type Rig = Awaited<ReturnType<typeof startRig>>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `done()` holds, or `ms` have passed (so that a broken build fails, not hangs). */
async function until(done: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) await sleep(10);
}

/** `p`'s value, or a rejection once `ms` have passed; the timer is cleared either way. */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const code = (r: { body: Record<string, unknown> }) =>
  (r.body.error as { code?: string } | undefined)?.code;

const posts = (rig: Rig) => rig.fake.requests.filter((q) => q.method === "POST").length;

/** The fake's requests for a page of `host` whose path starts with `prefix`. */
const pagesOf = (rig: Rig, host: string, prefix: string) =>
  rig.fake.requests.filter((q) => q.host === host && q.path.startsWith(prefix));

/**
 * The process's read budget taken whole by other accounts (as 32 pages at the cap), so that
 * every account's next read is refused; given back when disposed.
 */
function spendReadBudget(): Disposable {
  const held: string[] = [];
  for (let i = 0; processReadBudget.take(MAX_UPSTREAM_BYTES, `hog-${i}`); i++) {
    held.push(`hog-${i}`);
  }
  assert.ok(processReadBudget.spent("anyone"), "the read budget is spent");
  return {
    [Symbol.dispose]() {
      for (const owner of held) processReadBudget.give(MAX_UPSTREAM_BYTES, owner);
    },
  };
}

Deno.test("one account's concurrent calls for one page with two postcodes are two fetches, each located for its own postcode", async () => {
  await using rig = await startRig({ browser: { timeoutMs: 10_000 } });
  rig.fake.page(PAGE, FIXTURE);
  // The first call's page is held while the second call arrives: sharing its fetch would answer
  // the second postcode with the page located for the first.
  rig.fake.delayMs = 1_000;
  const first = rig.call(`${DETAILS}&zip=10001`);
  await until(() => pagesOf(rig, "www.amazon.com", "/dp/").length === 1, 5_000);
  const second = rig.call(`${DETAILS}&zip=94103`);
  const [a, b] = await Promise.all([first, second]);
  assert.equal(a.status, 200, JSON.stringify(a.body).slice(0, 300));
  assert.equal(b.status, 200, JSON.stringify(b.body).slice(0, 300));
  assert.equal(pagesOf(rig, "www.amazon.com", "/dp/").length, 2, "one page fetch per postcode");
  assert.equal(posts(rig), 2, "one location flow per postcode");
});

Deno.test("a robot check followed by connection resets is an uncharged 503 upstream_blocked, not a 502", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE).fail("robot", 1).fail("reset", 2);
  const r = await rig.call(DETAILS);
  assert.equal(r.status, 503, JSON.stringify(r.body));
  assert.equal(code(r), "upstream_blocked");
  assert.equal(r.headers.get("x-credits-cost"), "0");
  assert.equal(rig.fake.pageRequests("/dp/"), 3, "the first attempt and two retries");
});

Deno.test("a chain of exactly five redirects is followed; a sixth is refused", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  const chain = (name: string, hops: number) => {
    for (let i = 0; i < hops; i++) {
      const next = i === hops - 1 ? `/dp/${ASIN}` : `/gp/${name}${i + 1}`;
      rig.fake.redirect(`https://www.amazon.com/gp/${name}${i}`, next);
    }
    return "/v1/scrape?url=" + encodeURIComponent(`https://www.amazon.com/gp/${name}0`);
  };
  const five = await rig.call(chain("r", 5));
  assert.equal(five.status, 200, JSON.stringify(five.body).slice(0, 300));
  assert.equal((five.body.data as { asin: string }).asin, ASIN);
  const six = await rig.call(chain("s", 6));
  assert.equal(six.status, 502);
  assert.match((six.body.error as { message: string }).message, /redirected more than 5 times/);
});

Deno.test("past maxSessions, postcode sessions are forgotten, never the marketplace's session without a postcode", async () => {
  // That session is the one carrying the operator's sign-in (and the marketplace's renewals of
  // it); here it carries the session-id cookie the fake gave it on its first page.
  await using rig = await startRig({ browser: { maxSessions: 2 } });
  rig.fake.page(PAGE, FIXTURE).page(OTHER_PAGE, FIXTURE);
  assert.equal((await rig.call(DETAILS)).status, 200);
  // Asked with no cookie, that page's answer set the fake's first session-id, s1.
  assert.equal(rig.fake.requests[0].cookie, "");
  for (const zip of ["10001", "94103"]) {
    assert.equal((await rig.call(`${DETAILS}&zip=${zip}`)).status, 200, zip);
  }
  assert.equal((await rig.call("/v1/products/details?asin=B0BJLF2BRM")).status, 200);
  const last = pagesOf(rig, "www.amazon.com", "/dp/B0BJLF2BRM").at(-1)!;
  assert.equal(
    /session-id=([^;]+)/.exec(last.cookie)?.[1],
    "s1",
    `the session without a postcode was forgotten: ${JSON.stringify(last.cookie)}`,
  );
});

Deno.test("a robot check in the location flow counts toward the account's blocked run: one attempt next time, a pause after five", async () => {
  await using rig = await startRig({ browser: { pauseMs: 60_000 } });
  rig.fake.page(PAGE, FIXTURE);
  rig.fake.flowFailures.push({ step: "home", status: 503, times: 1_000 });
  const homes = () => rig.fake.requests.filter((q) => q.path === "/").length;
  const first = await rig.call(`${DETAILS}&zip=10001`);
  assert.equal(first.status, 503, JSON.stringify(first.body));
  assert.equal(code(first), "upstream_blocked");
  assert.equal(homes(), 3, "the first attempt and two retries");
  for (let i = 1; i < BLOCKED_CALLS; i++) {
    const r = await rig.call(`${DETAILS}&zip=10001`);
    assert.equal(code(r), "upstream_blocked");
    assert.equal(homes(), 3 + i, `call ${i + 1} made one attempt, no retry`);
  }
  const before = rig.fake.requests.length;
  const paused = await rig.call(`${DETAILS}&zip=10001`);
  assert.equal(paused.status, 503);
  assert.equal(code(paused), "upstream_blocked");
  assert.ok(Number(paused.headers.get("retry-after")) > 0, "a pause says when it ends");
  assert.equal(paused.headers.get("x-credits-cost"), "0");
  assert.equal(rig.fake.requests.length, before, "no upstream request while paused");
});

Deno.test("an account paused on one marketplace still reaches another, with its full retries", async () => {
  await using rig = await startRig({ browser: { pauseMs: 60_000 } });
  rig.fake.page(PAGE, FIXTURE).page(UK_PAGE, UK_FIXTURE);
  // Every attempt of five US calls: the first tries three times, the rest once.
  rig.fake.fail("robot", 3 + BLOCKED_CALLS - 1, `/dp/${ASIN}`);
  for (let i = 0; i < BLOCKED_CALLS; i++) assert.equal((await rig.call(DETAILS)).status, 503);
  const paused = await rig.call(DETAILS);
  assert.ok(paused.headers.get("retry-after"), "paused on US");
  // On UK a robot check once is retried on a fresh session, as for any account not blocked there.
  rig.fake.fail("robot", 1, "/dp/B07CL39Z8Q");
  const uk = await rig.call("/v1/products/details?asin=B07CL39Z8Q&marketplace=UK");
  assert.equal(uk.status, 200, JSON.stringify(uk.body).slice(0, 300));
  assert.equal(pagesOf(rig, "www.amazon.co.uk", "/dp/").length, 2, "blocked once, then retried");
  // Nor did the UK call that got through end the US run.
  const us = pagesOf(rig, "www.amazon.com", "/dp/").length;
  const still = await rig.call(DETAILS);
  assert.equal(still.status, 503);
  assert.ok(still.headers.get("retry-after"), "still paused on US");
  assert.equal(pagesOf(rig, "www.amazon.com", "/dp/").length, us);
});

Deno.test("an account whose read budget is spent sends nothing upstream: refused before the request, not halfway through its body", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  {
    using _spent = spendReadBudget();
    const r = await rig.call(DETAILS);
    assert.equal(r.status, 503, JSON.stringify(r.body));
    assert.equal(code(r), "upstream_busy");
    assert.equal(r.headers.get("x-credits-cost"), "0");
    assert.equal(rig.fake.requests.length, 0, "the marketplace was asked for a page");
  }
  assert.equal((await rig.call(DETAILS)).status, 200, "read again once the budget is back");
});

Deno.test("a location flow that failed with an error is not remembered: the next call on the postcode runs it again", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  {
    // The flow's first request is refused (503 upstream_busy), which keeps its session.
    using _spent = spendReadBudget();
    const r = await rig.call(`${DETAILS}&zip=10001`);
    assert.equal(r.status, 503, JSON.stringify(r.body));
    assert.equal(code(r), "upstream_busy");
    assert.equal(rig.fake.requests.length, 0);
  }
  const later = await rig.call(`${DETAILS}&zip=10001`);
  assert.equal(later.status, 200, JSON.stringify(later.body).slice(0, 300));
  assert.equal(posts(rig), 1, "the flow ran for this call");
});

Deno.test("a caller's abort releases its upstream request and the account's slot at once", async () => {
  // Two slots, one of them kept for other accounts: owner "a" has one. The slow page, the
  // exchange's timeout and the call's deadline are all 30 s: held until then, the account's next
  // call waits that long.
  await using rig = await startRig({
    browser: { perMarketplace: 2, timeoutMs: 30_000, deadlineMs: 30_000 },
  });
  const slow = "https://www.amazon.com/dp/B0SLOW0000";
  rig.fake.page(slow, FIXTURE).page(PAGE, FIXTURE);
  rig.fake.slowMs = 30_000;
  rig.fake.fail("slow", 1, "/dp/B0SLOW0000");
  const caller = new AbortController();
  const held = rig.transport.fetch({
    url: slow,
    marketplace: "US",
    owner: "a",
    signal: caller.signal,
  });
  await until(() => rig.fake.pageRequests("/dp/B0SLOW0000") === 1, 5_000);
  assert.equal(rig.fake.pageRequests("/dp/B0SLOW0000"), 1, "the slow page was asked for");
  caller.abort(new Error("the caller left"));
  await assert.rejects(held);
  // An order of magnitude apart: at once against the 30 s the slot would otherwise be held.
  const next = await within(
    rig.transport.fetch({ url: PAGE, marketplace: "US", owner: "a" }),
    10_000,
    "the account's next call",
  );
  assert.equal(next.status, 200);
});

Deno.test("the backoff before a retry ends at the call's deadline: a 504, not a wait for the backoff", async () => {
  const lines: Record<string, unknown>[] = [];
  // A backoff of 20 to 40 s after the first attempt, against a deadline of 4 s.
  await using rig = await startRig({
    browser: {
      backoffMs: 40_000,
      deadlineMs: 4_000,
      timeoutMs: 3_000,
      log: (l) => lines.push(l),
    },
  });
  rig.fake.page(PAGE, FIXTURE).fail("robot", 10);
  const started = performance.now();
  const r = await rig.call(DETAILS);
  const took = performance.now() - started;
  assert.equal(r.status, 504, JSON.stringify(r.body));
  assert.equal(code(r), "upstream_timeout");
  assert.ok(
    lines.some((l) => l.event === "upstream_retry" && l.attempt === 1),
    `the first attempt met the robot check before the deadline: ${JSON.stringify(lines)}`,
  );
  // An order of magnitude, not a race: the shortest backoff alone is 20 s.
  assert.ok(took < 10_000, `answered after ${Math.round(took)} ms`);
});

Deno.test("a retry comes only after a backoff, the first retry too", async () => {
  const at: { line: Record<string, unknown>; t: number }[] = [];
  // One retry, after 750 to 1,500 ms.
  await using rig = await startRig({
    browser: {
      backoffMs: 1_500,
      retries: 1,
      log: (line) => at.push({ line, t: performance.now() }),
    },
  });
  rig.fake.page(PAGE, FIXTURE).fail("robot", 2);
  const r = await rig.call(DETAILS);
  assert.equal(r.status, 503);
  assert.equal(rig.fake.pageRequests("/dp/"), 2);
  const retry = at.find((a) => a.line.event === "upstream_retry" && a.line.attempt === 1);
  const failure = at.find((a) => a.line.event === "upstream_failure" && a.line.attempt === 2);
  assert.ok(retry && failure, JSON.stringify(at.map((a) => a.line)));
  // From the first attempt's answer to the retry's: the backoff's least, half its base, and more.
  const gap = failure.t - retry.t;
  assert.ok(gap >= 750, `the retry came ${Math.round(gap)} ms after the first attempt's answer`);
});

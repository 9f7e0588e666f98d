/**
 * Upstream failures over real HTTP map to INTERFACE.md's uncharged errors, never a 500: a robot
 * check that persists → 503 upstream_blocked, one that a fresh session gets past → 200, a slow
 * page → 504, an unknown ASIN → 404, a reset connection → 502, a 503 → retried.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { BLOCKED_CALLS } from "../upstream/browser_transport.ts";

const DETAILS = "/v1/products/details?asin=B07H57DNVV";
const PAGE = "https://www.amazon.com/dp/B07H57DNVV";
const FIXTURE = "product/amazon.com__app-B07H57DNVV.html";

async function assertUncharged(rig: Awaited<ReturnType<typeof startRig>>, r: { headers: Headers }) {
  assert.equal(r.headers.get("x-credits-cost"), "0");
  const usage = await rig.call("/v1/usage");
  assert.equal((usage.body as { requests_used: number }).requests_used, 0);
}

Deno.test("a robot check that persists through the retries is an uncharged 503 upstream_blocked", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE).fail("robot", 10);
  const r = await rig.call(DETAILS);
  assert.equal(r.status, 503);
  assert.equal((r.body.error as { code: string }).code, "upstream_blocked");
  assert.equal(rig.fake.pageRequests("/dp/"), 3); // first attempt and two retries
  await assertUncharged(rig, r);
});

Deno.test("a robot check once: the retry on a fresh session gets the page", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  assert.equal((await rig.call(DETAILS)).status, 200); // the session now holds a cookie
  rig.fake.fail("robot", 1);
  rig.fake.page("https://www.amazon.com/dp/B0BJLF2BRM", FIXTURE);
  const r = await rig.call("/v1/products/details?asin=B0BJLF2BRM");
  assert.equal(r.status, 200);
  const [flagged, retry] = rig.fake.requests.filter((q) => q.path === "/dp/B0BJLF2BRM").map((q) =>
    q.cookie
  );
  assert.match(flagged, /session-id=s1/);
  assert.doesNotMatch(
    retry,
    /session-id=s1/,
    "the retry must not reuse the flagged session's cookies",
  );
});

Deno.test("a 503 is retried and then served", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE).fail("503", 2);
  const r = await rig.call(DETAILS);
  assert.equal(r.status, 200);
  assert.equal(rig.fake.pageRequests("/dp/"), 3);
});

Deno.test("a page slower than the timeout is an uncharged 504 upstream_timeout", async () => {
  await using rig = await startRig({ browser: { timeoutMs: 300 } });
  rig.fake.slowMs = 2_000;
  rig.fake.page(PAGE, FIXTURE).fail("slow", 1);
  const started = performance.now();
  const r = await rig.call(DETAILS);
  assert.equal(r.status, 504);
  assert.equal((r.body.error as { code: string }).code, "upstream_timeout");
  assert.ok(performance.now() - started < 1_500);
  await assertUncharged(rig, r);
});

Deno.test("an unknown ASIN (the marketplace's 404 page) is an uncharged 404 not_found", async () => {
  await using rig = await startRig();
  const r = await rig.call("/v1/products/details?asin=B000000000");
  assert.equal(r.status, 404);
  assert.equal((r.body.error as { code: string }).code, "not_found");
  await assertUncharged(rig, r);
});

Deno.test("a connection reset on every attempt is an uncharged 502 upstream_error", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE).fail("reset", 10);
  const r = await rig.call(DETAILS);
  assert.equal(r.status, 502);
  assert.equal((r.body.error as { code: string }).code, "upstream_error");
  // The cause (the runtime's text, which may name the operator's files, proxies or addresses) is
  // the log's, not the client's.
  assert.equal(
    (r.body.error as { message: string }).message,
    "The marketplace connection failed.",
  );
  await assertUncharged(rig, r);
});

Deno.test("a page that is no known page type is an uncharged 502, not a 500", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, { html: "<html><body><p>Hello</p></body></html>" });
  const r = await rig.call(DETAILS);
  assert.equal(r.status, 502);
  await assertUncharged(rig, r);
});

Deno.test("a page nested deeper than any real one is an uncharged 502 at once, not minutes of parsing", async () => {
  await using rig = await startRig(); // pages read inline, on the serving thread
  const deep = "<html><head><script>ue_pty='Detail'</script></head><body>" +
    "<div>".repeat(200_000) + "</body></html>";
  rig.fake.page(PAGE, { html: deep });
  const r = await rig.call(DETAILS);
  assert.equal(r.status, 502);
  assert.equal((r.body.error as { code: string }).code, "upstream_error");
  assert.match((r.body.error as { message: string }).message, /nests elements more than 128 deep/);
  await assertUncharged(rig, r);
});

Deno.test("after five calls in a row blocked through every retry, the marketplace's calls pause: refused at once, uncharged, then tried again", async () => {
  await using rig = await startRig({ browser: { pauseMs: 500 } });
  // Every attempt of five calls: the first tries three times, the rest once (see below).
  rig.fake.page(PAGE, FIXTURE).fail("robot", 3 + BLOCKED_CALLS - 1);
  for (let i = 0; i < BLOCKED_CALLS; i++) {
    assert.equal((await rig.call(DETAILS)).status, 503);
  }
  const before = rig.fake.pageRequests("/dp/");
  assert.equal(before, 3 + BLOCKED_CALLS - 1);
  const paused = await rig.call(DETAILS);
  assert.equal(paused.status, 503);
  assert.equal((paused.body.error as { code: string }).code, "upstream_blocked");
  assert.equal(paused.headers.get("retry-after"), "1");
  assert.equal(rig.fake.pageRequests("/dp/"), before, "no upstream request while paused");
  await assertUncharged(rig, paused);
  await new Promise((r) => setTimeout(r, 600));
  const after = await rig.call(DETAILS);
  assert.equal(after.status, 200, "tried again once the pause is over");
});

Deno.test("once a call ended blocked through its retries, the marketplace's next calls try once, until one gets through", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE).fail("robot", 4);
  const first = await rig.call(DETAILS);
  assert.equal(first.status, 503);
  assert.equal(rig.fake.pageRequests("/dp/"), 3, "the first attempt and two retries");
  const second = await rig.call(DETAILS);
  assert.equal(second.status, 503);
  assert.equal((second.body.error as { code: string }).code, "upstream_blocked");
  assert.equal(rig.fake.pageRequests("/dp/"), 4, "one attempt, no retry");
  await assertUncharged(rig, second);
  assert.equal((await rig.call(DETAILS)).status, 200, "the block has lifted");
  // A call that got through ends the run: a robot check is retried again.
  rig.fake.fail("robot", 1);
  rig.fake.page("https://www.amazon.com/dp/B0BJLF2BRM", FIXTURE);
  assert.equal((await rig.call("/v1/products/details?asin=B0BJLF2BRM")).status, 200);
  assert.equal(rig.fake.pageRequests("/dp/B0BJLF2BRM"), 2);
});

Deno.test("one account's blocked calls pause that account only: another account's call still goes upstream", async () => {
  await using rig = await startRig({ browser: { pauseMs: 60_000 } });
  rig.fake.page(PAGE, FIXTURE).fail("robot", 3 + BLOCKED_CALLS - 1);
  for (let i = 0; i < BLOCKED_CALLS; i++) {
    assert.equal((await rig.call(DETAILS)).status, 503);
  }
  const paused = await rig.call(DETAILS);
  assert.equal(paused.status, 503);
  assert.ok(paused.headers.get("retry-after"), "this account is paused");
  const before = rig.fake.pageRequests("/dp/");
  const other = await rig.server.account("growth");
  const r = await rig.server.get(DETAILS, other.key);
  assert.equal(r.status, 200, "another account is not");
  assert.equal(rig.fake.pageRequests("/dp/"), before + 1);
});

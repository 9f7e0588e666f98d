/**
 * How one upstream exchange becomes an answer (upstream/fetch_page.ts), at the edges probe HT
 * found unpinned: a 429 that persists is a block whatever its body holds; a status of 300 is not a
 * page; a persistent robot check is named in words; a parser's "blocked" is a 503, not a 404; and
 * each page job reaches the page workers as its account's, so that one account's queue of pages
 * cannot refuse another account's. Real server, real browser transport, fake marketplace serving
 * corpus pages, and for the last a real pool of page workers (tests/page_worker_faulty.ts, the
 * real worker with a slow trigger).
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { fixture } from "./fixture.ts";
import { asApiError } from "../upstream/fetch_page.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { PagePool } from "../upstream/page_pool.ts";

const DETAILS = "/v1/products/details?asin=B07H57DNVV";
const PAGE = "https://www.amazon.com/dp/B07H57DNVV";
const PRODUCT = "product/amazon.com__app-B07H57DNVV.html";
const FAULTY = new URL("./page_worker_faulty.ts", import.meta.url);

type Failure = { error: { code: string; message: string } };

Deno.test("a page served 429 on every attempt is an uncharged 503 naming HTTP 429, even when its body is a robot check", async () => {
  await using rig = await startRig();
  // Not read: the status is the block, whatever the body says.
  rig.fake.page(PAGE, {
    status: 429,
    html: await fixture("blocked/amazon.com__app-robot-check.html"),
  });
  const r = await rig.call(DETAILS);
  assert.equal(r.status, 503, JSON.stringify(r.body).slice(0, 300));
  const { error } = r.body as Failure;
  assert.equal(error.code, "upstream_blocked");
  assert.equal(error.message, "The marketplace refused the request (HTTP 429) after retries.");
  assert.equal(r.headers.get("x-credits-cost"), "0");
});

Deno.test("a product page served with HTTP 300 is an uncharged 502 naming the status, not a 200", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, { status: 300, html: await fixture(PRODUCT) });
  const r = await rig.call(DETAILS);
  assert.equal(r.status, 502, JSON.stringify(r.body).slice(0, 300));
  const { error } = r.body as Failure;
  assert.equal(error.code, "upstream_error");
  assert.match(error.message, /HTTP 300/);
  assert.equal(r.headers.get("x-credits-cost"), "0");
});

Deno.test("a robot check that persists is named in words in the 503's message", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, PRODUCT).fail("robot", 10);
  const r = await rig.call(DETAILS);
  assert.equal(r.status, 503);
  assert.equal(
    (r.body as Failure).error.message,
    "The marketplace refused the request (robot check) after retries.",
  );
});

Deno.test("a parser that finds a block page is an uncharged 503 upstream_blocked; one that finds no such page, a 404", () => {
  const url = "https://www.amazon.com/dp/B07H57DNVV";
  const blocked = asApiError(new ParseError("blocked", "a captcha"), url);
  assert.equal(blocked.status, 503);
  assert.equal(blocked.code, "upstream_blocked");
  assert.equal(blocked.message, `The marketplace served a block page for ${url}.`);
  const missing = asApiError(new ParseError("not_found", "no such product"), url);
  assert.equal(missing.status, 404);
  assert.equal(missing.code, "not_found");
});

Deno.test("one account's pages queued for the page workers do not get another account's page refused as busy", async () => {
  // One worker; the queue holds 4, and one account's waiting pages at most 2 (half of it). A
  // job's time at the worker is not what is tested: generous, for a machine under load.
  const pool = new PagePool({ size: 1, workerUrl: FAULTY, queueLimit: 4, timeoutMs: 60_000 });
  await using rig = await startRig({ reader: pool });
  // The first read for 3 s of the worker's thread, the others for 0.2 s.
  const pagesOfA = ["B0SLOW0001", "B0PAUSE001", "B0PAUSE002"];
  for (const asin of [...pagesOfA, "B0WARM0001", "B07H57DNVV"]) {
    rig.fake.page(`https://www.amazon.com/dp/${asin}`, PRODUCT);
  }
  // The worker loaded (its module compiled on a first run) before the queue is filled.
  const warm = await rig.call("/v1/products/details?asin=B0WARM0001");
  assert.equal(warm.status, 200, JSON.stringify(warm.body).slice(0, 300));
  const until = async (cond: () => boolean, what: string) => {
    const end = Date.now() + 10_000;
    while (!cond()) {
      assert.ok(Date.now() < end, what);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  // Account A: one page at the worker, then two waiting, its share of the queue.
  const first = rig.call(`/v1/products/details?asin=${pagesOfA[0]}`);
  await until(
    () => rig.fake.pageRequests(`/dp/${pagesOfA[0]}`) > 0,
    "the first page was not fetched",
  );
  await new Promise((r) => setTimeout(r, 200)); // read, and handed to the worker
  const more = pagesOfA.slice(1).map((asin) => rig.call(`/v1/products/details?asin=${asin}`));
  await until(() => pool.queued === 2, "account A's pages did not wait for the worker");
  // Account B's page comes while account A holds its whole share.
  const other = await rig.server.account("growth");
  const res = await rig.server.get(DETAILS, other.key);
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body).slice(0, 300));
  assert.equal(body.asin, "B07H57DNVV");
  const a = await Promise.all([first, ...more]);
  assert.deepEqual(a.map((r) => r.status), [200, 200, 200], JSON.stringify(a.map((r) => r.body)));
});

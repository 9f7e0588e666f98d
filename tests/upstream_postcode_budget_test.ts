/**
 * An account's budget of location flows for new postcodes (browser_transport.ts), over the real
 * transport and the fake marketplace: flows under way count against it as refusals do, and a
 * spent budget says when it frees up, counted from the oldest postcode it remembers.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { ApiError } from "../core/api_error.ts";
import { REFUSED_POSTCODE_MS, REFUSED_POSTCODES_PER_OWNER } from "../upstream/browser_transport.ts";

const ASIN = "B07H57DNVV";
const PAGE = `https://www.amazon.com/dp/${ASIN}`;
const FIXTURE = "product/amazon.com__app-B07H57DNVV.html";

type Rig = Awaited<ReturnType<typeof startRig>>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Address changes (the location flow's POST) the fake marketplace received. */
const posts = (rig: Rig) => rig.fake.requests.filter((q) => q.method === "POST").length;

Deno.test("new postcodes of one account asked for all at once run at most REFUSED_POSTCODES_PER_OWNER location flows; the rest are told some are being located", async () => {
  // Slots for every call of the burst, so that nothing but the budget holds a flow back (through
  // the API the key's rate limit answered most of such a burst with 429 before any flow ran).
  await using rig = await startRig({ browser: { perMarketplace: 32, timeoutMs: 10_000 } });
  rig.fake.page(PAGE, FIXTURE);
  const zips = Array.from({ length: 30 }, (_, i) => String(70000 + i));
  // Refused, so that a flow that ended still counts: the limit holds however the flows interleave.
  for (const zip of zips) rig.fake.refusedZips.add(zip);
  const outcomes = await Promise.allSettled(
    zips.map((zip) => rig.transport.fetch({ url: PAGE, marketplace: "US", owner: "a", zip })),
  );
  assert.equal(posts(rig), REFUSED_POSTCODES_PER_OWNER, "address changes reaching the marketplace");
  const errors = outcomes.map((o, i) => {
    assert.equal(o.status, "rejected", `postcode ${zips[i]} was answered with a page`);
    const e = (o as PromiseRejectedResult).reason;
    assert.ok(e instanceof ApiError, String(e));
    assert.equal(e.status, 502, e.message);
    assert.equal(e.code, "upstream_error", e.message);
    return e;
  });
  const refused = errors.filter((e) => /did not accept the delivery postcode/.test(e.message));
  assert.equal(refused.length, REFUSED_POSTCODES_PER_OWNER, "the postcodes whose flows ran");
  const held = errors.filter((e) => /new postcodes being located/.test(e.message));
  assert.equal(
    held.length,
    zips.length - REFUSED_POSTCODES_PER_OWNER,
    errors.map((e) => e.message).join("\n"),
  );
  for (const e of held) {
    assert.match(e.message, new RegExp(`has ${REFUSED_POSTCODES_PER_OWNER} new postcodes`));
    assert.equal(e.headers["Retry-After"], "1");
  }
});

Deno.test("a spent budget of refused postcodes is retried after REFUSED_POSTCODE_MS from the oldest refusal, not the newest", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  const ask = (zip: string) => rig.call(`/v1/products/details?asin=${ASIN}&zip=${zip}`);
  const refuse = async (zip: string) => {
    rig.fake.refusedZips.add(zip);
    const r = await ask(zip);
    assert.equal(r.status, 502, JSON.stringify(r.body));
    assert.match((r.body.error as { message: string }).message, /did not accept/);
  };
  const beforeFirst = Date.now();
  await refuse("90000");
  const afterFirst = Date.now();
  // The oldest refusal lies over two whole seconds before the newest: counted from the newest,
  // the wait is the full 900 s.
  await sleep(2_100);
  for (let i = 1; i < REFUSED_POSTCODES_PER_OWNER; i++) {
    await refuse(String(90000 + i));
    await sleep(60); // within the key's rate
  }
  const flows = posts(rig);
  const beforeLast = Date.now();
  const past = await ask("94105");
  const afterLast = Date.now();
  assert.equal(past.status, 502, JSON.stringify(past.body));
  assert.equal(past.headers.get("x-credits-cost"), "0");
  assert.equal(posts(rig), flows, "no location flow past the budget");
  const message = (past.body.error as { message: string }).message;
  assert.match(message, /refused this account's last 10 new postcodes/);
  const retryAfter = Number(past.headers.get("retry-after"));
  const full = REFUSED_POSTCODE_MS / 1000;
  // Bounds from the clock read around the first refusal and the last call, so that a slow run
  // moves them rather than failing.
  const most = full - Math.floor((beforeLast - afterFirst) / 1000);
  const least = Math.ceil((beforeFirst + REFUSED_POSTCODE_MS - afterLast) / 1000);
  assert.ok(most <= full - 2);
  assert.ok(
    retryAfter >= least && retryAfter <= most,
    `Retry-After ${past.headers.get("retry-after")}, expected ${least}..${most}`,
  );
  assert.match(message, new RegExp(`another new one is tried in ${retryAfter} s\\.`));
});

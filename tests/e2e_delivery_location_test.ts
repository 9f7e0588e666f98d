/**
 * `zip` through the marketplace's own location-change flow, once per (marketplace, postcode)
 * session and reused; a refused postcode or a page showing another location is an uncharged 502.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { displayedLocation, locationMatches } from "../upstream/delivery_location.ts";
import {
  NEW_POSTCODES_PER_OWNER,
  REFUSED_POSTCODES_PER_OWNER,
} from "../upstream/browser_transport.ts";

const PAGE = "https://www.amazon.com/dp/B07H57DNVV";
const FIXTURE = "product/amazon.com__app-B07H57DNVV.html";

/**
 * Calls for postcode 10001, each uncharged, until the account's budget of location flows is
 * spent: it ends there, after exactly NEW_POSTCODES_PER_OWNER address changes.
 */
async function untilBudgetSpent(rig: Awaited<ReturnType<typeof startRig>>) {
  const flows = () => rig.fake.requests.filter((q) => q.method === "POST").length;
  let last: Awaited<ReturnType<typeof rig.call>> | undefined;
  for (let i = 0; i < 60; i++) {
    last = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001");
    assert.equal(last.headers.get("x-credits-cost"), "0");
    if (/ran the location flow/.test((last.body.error as { message: string }).message)) break;
    await new Promise((r) => setTimeout(r, 60)); // within the key's rate
  }
  assert.match((last!.body.error as { message: string }).message, /ran the location flow 50 times/);
  assert.equal(flows(), NEW_POSTCODES_PER_OWNER, "no flow past the budget");
}

Deno.test("zip runs the location flow once and the session is reused for later calls", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  for (let i = 0; i < 3; i++) {
    const r = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001");
    assert.equal(r.status, 200);
  }
  const posts = rig.fake.requests.filter((q) => q.method === "POST");
  assert.equal(posts.length, 1);
  assert.ok(posts[0].path.startsWith("/portal-migration/hz/glow/address-change?actionSource=glow"));
  // Every page request carried the session cookie the flow ran under.
  const session = /session-id=[^;]+/.exec(posts[0].cookie)![0];
  for (const q of rig.fake.requests.filter((q) => q.path.startsWith("/dp/"))) {
    assert.ok(q.cookie.includes(session));
  }
});

Deno.test("another zip gets its own session and flow; no zip runs none", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV")).status, 200);
  assert.equal(rig.fake.requests.filter((q) => q.method === "POST").length, 0);
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001")).status, 200);
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV&zip=94105")).status, 200);
  assert.equal(rig.fake.requests.filter((q) => q.method === "POST").length, 2);
});

Deno.test("a postcode the marketplace refuses is an uncharged 502 saying so", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  rig.fake.refusedZips.add("99999");
  const r = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=99999");
  assert.equal(r.status, 502);
  assert.match(
    (r.body.error as { message: string }).message,
    /did not accept the delivery postcode '99999'/,
  );
  assert.equal(r.headers.get("x-credits-cost"), "0");
  // Asked again, it is answered the same without a request to the marketplace.
  const before = rig.fake.requests.length;
  const again = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=99999");
  assert.equal(again.status, 502);
  assert.match((again.body.error as { message: string }).message, /'99999'/);
  assert.equal(rig.fake.requests.length, before, "no upstream request for a refused postcode");
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001")).status, 200);
});

Deno.test("a step of the location flow that fails is retried, and never taken as the postcode refused", async () => {
  // Probe BI: a 503 from the address change (or a robot page after it, or a failed address
  // selection) refused the postcode for every account for 15 minutes.
  const cases = [
    { step: "change", status: 503 },
    { step: "change", status: 403 },
    { step: "modal", status: 503 },
    { step: "home", status: 500 },
  ] as const;
  for (const { step, status } of cases) {
    await using rig = await startRig();
    rig.fake.page(PAGE, FIXTURE);
    const what = `${step} ${status}`;
    // Once: the retry on a fresh session gets through.
    rig.fake.flowFailures.push({ step, status, times: 1 });
    const once = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001");
    assert.equal(once.status, 200, what);
    // Every attempt: an uncharged error that does not say the postcode was refused...
    rig.fake.flowFailures.push({ step, status, times: 100 });
    const failed = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=60601");
    assert.ok(failed.status >= 500, `${what}: ${failed.status}`);
    assert.equal(failed.headers.get("x-credits-cost"), "0", what);
    assert.doesNotMatch((failed.body.error as { message: string }).message, /did not accept/);
    // ...nor is remembered as refused: once the marketplace answers, the postcode works.
    rig.fake.flowFailures.length = 0;
    const other = await rig.server.account("scale");
    const later = await rig.server.get("/v1/products/details?asin=B07H57DNVV&zip=60601", other.key);
    await later.body?.cancel();
    assert.equal(later.status, 200, what);
  }
});

Deno.test("a prompt in place of the location after the address change is a failed step, not a refused postcode", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  // "Update location", as real pages show before a location is set (probe DW: the postcode was
  // then refused for every account for 15 minutes).
  rig.fake.shownLocation = "Update location";
  const failed = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001");
  assert.equal(failed.status, 502);
  assert.equal(failed.headers.get("x-credits-cost"), "0");
  assert.doesNotMatch((failed.body.error as { message: string }).message, /did not accept/);
  rig.fake.shownLocation = null;
  const later = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001");
  assert.equal(later.status, 200, JSON.stringify(later.body));
});

Deno.test("a page showing another delivery location is an uncharged 502, not wrong prices", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  rig.fake.shownLocation = "Mill Valley 94941";
  const r = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001");
  assert.equal(r.status, 502);
  assert.match((r.body.error as { message: string }).message, /Delivery location mismatch.*94941/);
  assert.equal(r.headers.get("x-credits-cost"), "0");
});

Deno.test("the location a page shows is quoted in the mismatch error without its control characters", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  rig.fake.shownLocation = "Mill\x1b[2J Valley\x00 94941" + "x".repeat(300);
  const r = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001");
  assert.equal(r.status, 502);
  const message = (r.body.error as { message: string }).message;
  assert.match(
    message,
    /Delivery location mismatch: The marketplace shows delivery to 'Mill\[2J Valley 94941x+'/,
  );
  assert.ok(message.length < 300, `a bounded message: ${message.length} characters`);
});

Deno.test("an account whose new postcodes the marketplace keeps refusing gets no further location flows for a while", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001")).status, 200);
  for (let i = 0; i < REFUSED_POSTCODES_PER_OWNER; i++) {
    const zip = String(90000 + i);
    rig.fake.refusedZips.add(zip);
    const r = await rig.call(`/v1/products/details?asin=B07H57DNVV&zip=${zip}`);
    assert.match((r.body.error as { message: string }).message, /did not accept/);
  }
  const before = rig.fake.requests.length;
  const next = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=94105");
  assert.equal(next.status, 502);
  assert.equal(next.headers.get("x-credits-cost"), "0");
  assert.ok(Number(next.headers.get("retry-after")) > 0);
  assert.match((next.body.error as { message: string }).message, /refused this account's last 10/);
  assert.equal(rig.fake.requests.length, before, "no location flow was run for it");
  // A postcode the account already has a session for still works; another account is not held.
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001")).status, 200);
  const other = await rig.server.account("growth");
  const r = await rig.server.get("/v1/products/details?asin=B07H57DNVV&zip=94105", other.key);
  assert.equal(r.status, 200);
  await r.body?.cancel();
});

Deno.test("a postcode whose pages keep showing another location after its flow counts each flow against the budget", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  // The flow locates (its home page shows 10001), the product page then shows elsewhere (probe
  // DT: each call ran the flow again, uncounted: 60 calls, 60 address changes, 0 credits).
  rig.fake.pageLocation = "Mill Valley 94941";
  await untilBudgetSpent(rig);
});

Deno.test("postcodes written without their space, and a ZIP+4, match the location the marketplace shows", () => {
  assert.ok(locationMatches("London SW1A 1", "SW1A1AA"));
  assert.ok(locationMatches("London SW1A 1", "SW1A 1AA"));
  assert.ok(locationMatches("Manchester M1 1", "M11AE"));
  assert.ok(locationMatches("Toronto M5V", "M5V3L9"));
  assert.ok(locationMatches("New York 10001", "10001-1234"));
  assert.ok(!locationMatches("London SW1A 1", "EC1A1BB"));
  assert.ok(!locationMatches("New York 10001", "10002-1234"));
  // A district code is a whole word: E1 is not E14, M1 not M11, B1 not B15 (probe DT).
  for (const [shown, zip] of [["London E14 5", "E1 6AN"], ["London E14 5", "E16AN"]] as const) {
    assert.ok(!locationMatches(shown, zip), `${zip} in ${shown}`);
  }
  assert.ok(!locationMatches("Manchester M11 2", "M1 1AE"));
  assert.ok(!locationMatches("Manchester M11 2", "M11AE"));
  assert.ok(!locationMatches("Birmingham B15 2", "B1 1BB"));
  assert.ok(locationMatches("London E1 6", "E1 6AN"));
  assert.ok(locationMatches("London E1 6", "E16AN"));
  assert.ok(locationMatches("Tokyo 100-0001", "100-0001"));
  // Written without the page's dash or space, it is the same postcode (probe DU: refused, and
  // so for every account for 15 minutes).
  for (
    const [shown, zip] of [
      ["Tokyo 100-0001", "1000001"],
      ["São Paulo 01310-100", "01310100"],
      ["Warszawa 00-001", "00001"],
      ["Stockholm 114 55", "11455"],
      ["Amsterdam 1012 AB", "1012ab"],
      ["Dublin D02 X285", "D02X285"],
      ["London SW1A 1AA", "SW1A1AA"],
    ] as const
  ) assert.ok(locationMatches(shown, zip), `${zip} in ${shown}`);
  // Joined words stand for a whole postcode only: "M1 1" is not district M11, nor "E1 4" E14; and
  // a first part without a letter is no UK, Canadian or Irish one (probe DW).
  for (
    const [shown, zip] of [
      ["Manchester M1 1", "M11 2AB"],
      ["Manchester M1 1", "M112AB"],
      ["London E1 4", "E14 5AB"],
      ["London E1 4", "E145AB"],
      ["Stockholm 111 51", "111 22"],
      ["Tokyo 100-0002", "100 0001"],
      ["Amsterdam 1012 XY", "1012 AB"],
    ] as const
  ) assert.ok(!locationMatches(shown, zip), `${zip} in ${shown}`);
  assert.ok(locationMatches("Stockholm 111 22", "111 22"));
  // An Eircode written without its space, as with its space (probe DX).
  assert.ok(locationMatches("Dublin D02", "D02X285"));
  assert.ok(locationMatches("Athlone A65", "A65F4E2"));
  assert.ok(!locationMatches("Dublin D03", "D02X285"));
  assert.ok(locationMatches("New York 10001", "10001 1234"));
});

Deno.test("a postcode the marketplace accepts but then shows another location for is remembered and counted as refused", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  rig.fake.shownLocation = "Mill Valley 94941"; // whatever postcode is asked for
  const flows = () => rig.fake.requests.filter((q) => q.method === "POST").length;
  const first = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001");
  assert.equal(first.status, 502);
  assert.equal(flows(), 1);
  const again = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001");
  assert.equal(again.status, 502);
  assert.equal(flows(), 1, "remembered: no second flow");
  for (let i = 1; i < REFUSED_POSTCODES_PER_OWNER; i++) {
    await rig.call(`/v1/products/details?asin=B07H57DNVV&zip=${90000 + i}`);
  }
  assert.equal(flows(), REFUSED_POSTCODES_PER_OWNER);
  const past = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=60601");
  assert.equal(past.status, 502);
  assert.equal(flows(), REFUSED_POSTCODES_PER_OWNER, "counted: no flow past the budget");
});

Deno.test("a burst of new postcodes runs at most the budget's location flows", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  const zips = Array.from({ length: 30 }, (_, i) => String(70000 + i));
  for (const zip of zips) rig.fake.refusedZips.add(zip);
  const answers = await Promise.all(
    zips.map((zip) => rig.call(`/v1/products/details?asin=B07H57DNVV&zip=${zip}`)),
  );
  for (const r of answers) {
    assert.ok(r.status === 502 || r.status === 429, `${r.status}`); // 429: the key's rate
    assert.equal(r.headers.get("x-credits-cost"), "0");
  }
  assert.ok(answers.filter((r) => r.status === 502).length > REFUSED_POSTCODES_PER_OWNER);
  const flows = rig.fake.requests.filter((q) => q.method === "POST").length;
  assert.ok(flows <= REFUSED_POSTCODES_PER_OWNER, `${flows} flows`);
});

Deno.test("one refused postcode asked for by many calls at once counts once against the account's budget", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  rig.fake.refusedZips.add("99999");
  const answers = await Promise.all(
    Array.from(
      { length: 8 },
      (_, i) => rig.call(`/v1/products/details?asin=B07H57DNV${i}&zip=99999`),
    ),
  );
  for (const r of answers) assert.equal(r.status, 502);
  // The account may still try another new postcode: the one mistake did not spend its budget.
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001")).status, 200);
});

Deno.test("accepted new postcodes count too: at most NEW_POSTCODES_PER_OWNER flows in 15 minutes", async () => {
  await using rig = await startRig();
  const flows = () => rig.fake.requests.filter((q) => q.method === "POST").length;
  // Each call asks for a product the marketplace does not have: an uncharged 404 after the flow.
  for (let i = 0; i < NEW_POSTCODES_PER_OWNER; i++) {
    const r = await rig.call(`/v1/products/details?asin=B0NOPE0000&zip=${10_000 + i}`);
    assert.equal(r.status, 404, `call ${i}: ${JSON.stringify(r.body)}`);
    assert.equal(r.headers.get("x-credits-cost"), "0");
    await new Promise((r) => setTimeout(r, 60)); // within the key's rate
  }
  assert.equal(flows(), NEW_POSTCODES_PER_OWNER);
  const past = await rig.call("/v1/products/details?asin=B0NOPE0000&zip=20000");
  assert.equal(past.status, 502);
  assert.match((past.body.error as { message: string }).message, /ran the location flow 50 times/);
  assert.equal(flows(), NEW_POSTCODES_PER_OWNER, "no flow past the budget");
});

Deno.test("a postcode whose location flow keeps failing counts each flow against the account's budget", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  // The address change always fails without refusing (probe BK: each call ran the flow again,
  // with its retries, uncharged and uncounted).
  rig.fake.flowFailures.push({ step: "change", status: 400, times: 1_000 });
  await untilBudgetSpent(rig);
});

Deno.test("sessions are bounded: past maxSessions postcodes the session used least lately is forgotten (15.4)", async () => {
  await using rig = await startRig({ browser: { maxSessions: 2 } });
  rig.fake.page(PAGE, FIXTURE);
  const flows = () => rig.fake.requests.filter((q) => q.method === "POST").length;
  for (const zip of ["10001", "94105"]) {
    assert.equal((await rig.call(`/v1/products/details?asin=B07H57DNVV&zip=${zip}`)).status, 200);
  }
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001")).status, 200);
  assert.equal(flows(), 2, "both sessions kept, the first reused");
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV&zip=60601")).status, 200);
  assert.equal(flows(), 3, "a third postcode: a new session, 94105 (used least lately) forgotten");
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001")).status, 200);
  assert.equal(flows(), 3, "10001, the first created but used since, is still kept");
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV&zip=94105")).status, 200);
  assert.equal(flows(), 4, "94105 was forgotten: its flow runs again");
});

Deno.test("one account's new postcodes forget its own sessions past its share, not another account's", async () => {
  await using rig = await startRig({ browser: { maxSessions: 4, sessionsPerOwner: 2 } });
  rig.fake.page(PAGE, FIXTURE);
  const other = await rig.server.account("growth");
  const flows = () => rig.fake.requests.filter((q) => q.method === "POST").length;
  const otherCall = async (zip: string) => {
    const r = await rig.server.get(`/v1/products/details?asin=B07H57DNVV&zip=${zip}`, other.key);
    await r.body?.cancel();
    assert.equal(r.status, 200);
  };
  // The other account's two sessions are the oldest in use when the churn starts.
  await otherCall("10001");
  await otherCall("94105");
  for (const zip of ["60601", "73301", "30301", "02101", "98101"]) {
    assert.equal((await rig.call(`/v1/products/details?asin=B07H57DNVV&zip=${zip}`)).status, 200);
  }
  assert.equal(flows(), 7);
  await otherCall("10001");
  await otherCall("94105");
  assert.equal(flows(), 7, "the other account's sessions outlived five new postcodes of this one");
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV&zip=98101")).status, 200);
  assert.equal(flows(), 7, "this account keeps its last two");
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV&zip=60601")).status, 200);
  assert.equal(flows(), 8, "its older ones were its own to forget");
});

Deno.test("the displayed location is read near its id: a page of decoys costs linear time", () => {
  assert.equal(
    displayedLocation(
      '<span id="glow-ingress-line2" class="nav-line-2">New York 10001&nbsp;</span>',
    ),
    "New York 10001",
  );
  // 60,000 copies of the id and no closing tag: a pattern run to the page's end from each copy
  // (as before) reads 60,000 × 1.7 MB.
  const decoys = '<b id="glow-ingress-line2">x'.repeat(60_000);
  assert.equal(displayedLocation(decoys), null);
  // Cut at 120 characters between the halves of an emoji: no lone surrogate is left.
  const split = displayedLocation(
    `<span id="glow-ingress-line2">${"x".repeat(119)}\u{1F600}</span>`,
  )!;
  assert.ok(split.isWellFormed());
  assert.equal(split.length, 120);
});

Deno.test("with the operator's session configured, a postcode runs on a session of its own: clients' postcodes do not move each other", async () => {
  await using rig = await startRig({
    env: { UPSTREAM_COOKIES_US: "session-id=OPSESSION; session-token=OPTOKEN" },
  });
  rig.fake.page(PAGE, FIXTURE);
  for (const zip of ["10001", "90210", "10001", "90210"]) {
    const r = await rig.call(`/v1/products/details?asin=B07H57DNVV&zip=${zip}`);
    assert.equal(r.status, 200, `${zip}: ${JSON.stringify(r.body).slice(0, 200)}`);
  }
  const flow = rig.fake.requests.filter((q) => q.path.startsWith("/portal-migration/"));
  assert.ok(flow.length > 0);
  for (const q of flow) assert.doesNotMatch(q.cookie, /OPSESSION|OPTOKEN/, q.path);
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV")).status, 200);
  const last = rig.fake.requests.filter((q) => q.path.startsWith("/dp/")).at(-1)!;
  assert.match(last.cookie, /session-id=OPSESSION/, "a call without a postcode is signed in");
});

Deno.test("a 4xx at the address change is a failed flow, retried, never the postcode refused, even where the page shows another location", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  // The session's pages show a location of their own (with digits, as real ones do), so that a
  // flow carried on past the 403 would read "another location after the change" and take the
  // postcode as refused (probe GT, DL4).
  rig.fake.shownLocation = "New York 10001";
  rig.fake.flowFailures.push({ step: "change", status: 403, times: 100 });
  const posts = () => rig.fake.requests.filter((q) => q.method === "POST").length;
  const failed = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=60601");
  assert.equal(failed.status, 502);
  assert.equal(failed.headers.get("x-credits-cost"), "0");
  const message = (failed.body.error as { message: string }).message;
  assert.match(message, /flow failed; the postcode was not refused/);
  assert.doesNotMatch(message, /did not accept|instead of postcode/);
  assert.ok(
    posts() >= 2,
    `the flow was tried again on a fresh session (${posts()} address changes)`,
  );
  // Nor is it remembered as refused: once the marketplace answers, the same account's call works.
  rig.fake.flowFailures.length = 0;
  rig.fake.shownLocation = null;
  const later = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=60601");
  assert.equal(later.status, 200, JSON.stringify(later.body));
});

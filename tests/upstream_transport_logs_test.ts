/**
 * What the browser transport tells the operator (its log lines: each failed attempt, a paused
 * marketplace, a signed-out operator session) and how it moves sessions between proxies and
 * through a soft interstitial's form, seen from outside: the ops log lines it writes, the proxies
 * that take its requests, and the requests the fake marketplace receives.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { fixture, onSite } from "./fixture.ts";
import { countingProxies } from "./counting_proxies.ts";
import { BLOCKED_CALLS } from "../upstream/browser_transport.ts";

const PAGE = "https://www.amazon.com/dp/B07H57DNVV";
const FIXTURE = "product/amazon.com__app-B07H57DNVV.html";
const DETAILS = "/v1/products/details?asin=B07H57DNVV";
const SOFT = "blocked/amazon.com__akeel-soft-interstitial-dp.html";

type Line = Record<string, unknown>;

const REVIEWS_PATH = "/product-reviews/B0BBPNPZTC";
const REVIEWS = "/v1/products/reviews?asin=B0BBPNPZTC";

/** A corpus page whose account link is the sign-in one: the marketplace greets a visitor. */
async function visitorsPage(): Promise<string> {
  const html = await fixture("reviews/amazon.com__metaagent-dawn-B0BBPNPZTC.html");
  assert.ok(html.includes('data-csa-c-content-id="nav_ya_signin"'));
  return html;
}

/**
 * The corpus's soft interstitial with its form's action and return path set, and its `amzn`
 * field replaced when `amzn` is given (the fake marketplace refuses the form then, with a 403).
 */
async function interstitial(action: string, back: string, amzn?: string): Promise<string> {
  let html = (await fixture(SOFT))
    .replace('action="/errors/validateCaptcha"', `action="${action}"`)
    .replace(/(name="amzn-r" value=")[^"]*/, `$1${back}`);
  if (amzn) html = html.replace(/(name="amzn" value=")[^"]*/, `$1${amzn}`);
  assert.ok(html.includes(`action="${action}"`), "the form's action was set");
  return html;
}

Deno.test("each blocked attempt is logged with its attempt number: retries 1 and 2, then the failure as attempt 3", async () => {
  const lines: Line[] = [];
  await using rig = await startRig({ browser: { retries: 2, log: (l) => void lines.push(l) } });
  rig.fake.page(PAGE, FIXTURE).fail("robot", 10);
  const r = await rig.call(DETAILS);
  assert.equal(r.status, 503, JSON.stringify(r.body));
  const attempts = lines.filter((l) =>
    l.event === "upstream_retry" || l.event === "upstream_failure"
  );
  const line = (event: string, attempt: number) => ({
    event,
    marketplace: "US",
    url: PAGE,
    outcome: "blocked (HTTP 200)",
    attempt,
  });
  assert.deepEqual(attempts, [
    line("upstream_retry", 1),
    line("upstream_retry", 2),
    line("upstream_failure", 3),
  ]);
});

Deno.test("the marketplace's calls pausing after BLOCKED_CALLS blocked calls is logged once, naming the account", async () => {
  const lines: Line[] = [];
  await using rig = await startRig({
    browser: { pauseMs: 700, log: (l) => void lines.push(l) },
  });
  // The first call tries three times, the next ones once (the run of blocked calls has begun).
  rig.fake.page(PAGE, FIXTURE).fail("robot", 3 + BLOCKED_CALLS - 1);
  for (let i = 0; i < BLOCKED_CALLS; i++) {
    const r = await rig.call(DETAILS);
    assert.equal(r.status, 503, JSON.stringify(r.body));
    if (i < BLOCKED_CALLS - 1) {
      assert.deepEqual(lines.filter((l) => l.event === "upstream_paused"), [], `after call ${i}`);
    }
  }
  assert.deepEqual(lines.filter((l) => l.event === "upstream_paused"), [{
    event: "upstream_paused",
    marketplace: "US",
    account: rig.accountId,
    calls: BLOCKED_CALLS,
    ms: 700,
  }]);
});

Deno.test("a signed-out operator session is logged once per marketplace: the US's line does not silence the UK's", async () => {
  const lines: Line[] = [];
  await using rig = await startRig({
    env: {
      UPSTREAM_COOKIES_US: "at-main=us-token; sess-at-main=x",
      UPSTREAM_COOKIES_UK: "at-acbuk=uk-token; sess-at-acbuk=y",
    },
    browser: { log: (l) => void lines.push(l) },
  });
  // The page greets a visitor ("Hello, sign in") though the operator's cookies went with it.
  const html = await visitorsPage();
  rig.fake.page(`https://www.amazon.com${REVIEWS_PATH}`, { html });
  rig.fake.page(`https://www.amazon.co.uk${REVIEWS_PATH}`, { html: onSite(html, "UK") });
  for (const call of [REVIEWS, `${REVIEWS}&marketplace=UK`]) {
    const r = await rig.call(call);
    assert.equal(r.status, 200, `${call}: ${JSON.stringify(r.body).slice(0, 300)}`);
    assert.equal(r.body.authenticated, false, call);
  }
  const sent = rig.fake.requests.filter((q) => q.path.startsWith(REVIEWS_PATH));
  assert.match(sent[0].cookie, /at-main=us-token/);
  assert.match(sent[1].cookie, /at-acbuk=uk-token/);
  assert.deepEqual(lines.filter((l) => l.event === "upstream_signed_out"), [
    { event: "upstream_signed_out", marketplace: "US" },
    { event: "upstream_signed_out", marketplace: "UK" },
  ]);
});

Deno.test("without an operator session, a page greeting a visitor is no signed-out session: nothing is logged", async () => {
  const lines: Line[] = [];
  await using rig = await startRig({ browser: { log: (l) => void lines.push(l) } });
  rig.fake.page(`https://www.amazon.com${REVIEWS_PATH}`, { html: await visitorsPage() });
  const r = await rig.call(REVIEWS);
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.deepEqual(lines.filter((l) => l.event === "upstream_signed_out"), []);
});

Deno.test("after a retry gets through on the next proxy, a new session starts on that proxy", async () => {
  await using proxies = countingProxies(2);
  await using rig = await startRig({
    env: { UPSTREAM_PROXIES: proxies.setting },
    browser: { timeoutMs: 1_500, deadlineMs: 10_000, backoffMs: 5 },
  });
  rig.fake.page(PAGE, FIXTURE);
  rig.fake.page("https://www.amazon.de/dp/B07H57DNVV", {
    html: onSite(await fixture(FIXTURE), "DE"),
  });
  // The shared session's first proxy meets a robot check; the retry, on the next, gets the page.
  rig.fake.fail("robot", 1);
  const us = await rig.call(DETAILS);
  assert.equal(us.status, 200, JSON.stringify(us.body).slice(0, 300));
  assert.deepEqual(proxies.taken, [1, 1]);
  // Another marketplace's first session starts where the last answer came from.
  const de = await rig.call(`${DETAILS}&marketplace=DE`);
  assert.equal(de.status, 200, JSON.stringify(de.body).slice(0, 300));
  assert.deepEqual(
    proxies.taken,
    [1, 2],
    "the new session's request went through the second proxy",
  );
});

Deno.test("a scrape's retry after a block page goes through another proxy than the one that met it", async () => {
  await using proxies = countingProxies(2);
  await using rig = await startRig({
    env: { UPSTREAM_PROXIES: proxies.setting },
    browser: { timeoutMs: 1_500, deadlineMs: 10_000, backoffMs: 5 },
  });
  rig.fake.page(PAGE, FIXTURE);
  rig.fake.fail("robot", 1);
  const r = await rig.call(`/v1/scrape?url=${encodeURIComponent(PAGE)}`);
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(rig.fake.pageRequests("/dp/"), 2);
  assert.deepEqual(proxies.taken, [1, 1], "the block page on the first, the retry on the second");
});

Deno.test("a location flow that fails is retried on a fresh session: the retry's home request carries no cookie of the failed one", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  // The home page answers a 500 once (not a robot check): the flow fails, nothing is refused.
  rig.fake.flowFailures.push({ step: "home", status: 500, times: 1 });
  const r = await rig.call(`${DETAILS}&zip=10001`);
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  const homes = rig.fake.requests.filter((q) => q.path === "/");
  assert.ok(homes.length >= 2, JSON.stringify(homes));
  assert.doesNotMatch(homes[0].cookie, /session-id=/);
  // The failed answer set a session-id too; it went with the session that was dropped.
  assert.doesNotMatch(homes[1].cookie, /session-id=/, "the retry reused the failed session");
});

Deno.test("an interstitial whose form the marketplace refuses (403 or 404) stays a block: an uncharged 503, not the refusal's page", async () => {
  await using rig = await startRig();
  const cases: [string, string, string | undefined][] = [
    // The fake marketplace answers 403 to a form whose own fields are not the page's.
    ["B07H57DNV1", "/errors/validateCaptcha", "not-the-pages-own"],
    // ... and 404 to an action it does not serve.
    ["B07H57DNV2", "/errors/validateCaptchaGone", undefined],
  ];
  for (const [asin, action, amzn] of cases) {
    rig.fake.page(`https://www.amazon.com/dp/${asin}`, {
      html: await interstitial(action, `/dp/${asin}`, amzn),
    });
    const r = await rig.call(`/v1/products/details?asin=${asin}`);
    assert.equal(r.status, 503, `${asin}: ${JSON.stringify(r.body).slice(0, 300)}`);
    assert.equal((r.body.error as { code: string }).code, "upstream_blocked", asin);
    assert.equal(r.headers.get("x-credits-cost"), "0", asin);
    assert.equal(rig.fake.pageRequests(action.slice(1)), 1, `${asin}: the form was tried once`);
  }
  assert.equal((await rig.call("/v1/usage")).body.requests_used, 0);
});

Deno.test("an interstitial's form is sent with its own fields only, not the query its action carries", async () => {
  await using rig = await startRig();
  rig.fake.page(PAGE, FIXTURE);
  const held = "https://www.amazon.com/gp/held";
  rig.fake.page(held, {
    html: await interstitial(
      "/errors/validateCaptcha?x=1&amp;amzn-r=%2Fgp%2Fother",
      "/dp/B07H57DNVV",
    ),
  });
  const r = await rig.call(`/v1/scrape?url=${encodeURIComponent(held)}`);
  const form = rig.fake.requests.find((q) => q.path.startsWith("/errors/validateCaptcha"));
  assert.ok(form, "the form was sent");
  const query = new URLSearchParams(form.path.split("?")[1]);
  assert.deepEqual([...query.keys()].sort(), ["amzn", "amzn-r", "field-keywords"]);
  assert.equal(query.get("amzn-r"), "/dp/B07H57DNVV");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(rig.fake.pageRequests("/dp/B07H57DNVV"), 1, "the form led back to the page");
});

Deno.test("a proxy that answers again starts its stalls over: its next stall passes it over for stalledProxyMs, not twice that", async () => {
  const STALL_MS = 2_000;
  // The first proxy forwards, or takes requests and answers nothing while `stalling`.
  let stalling = true;
  let toA = 0;
  const a = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    toA++;
    if (stalling) await new Promise((r) => setTimeout(r, 2_500));
    return fetch(req.url, { headers: req.headers, redirect: "manual" })
      .catch(() => new Response(null, { status: 502 })); // the marketplace gone by then
  });
  await using b = countingProxies(1);
  try {
    await using rig = await startRig({
      env: { UPSTREAM_PROXIES: `http://127.0.0.1:${a.addr.port},${b.setting}` },
      browser: { timeoutMs: 300, deadlineMs: 5_000, stalledProxyMs: STALL_MS },
    });
    const html = await fixture(FIXTURE);
    rig.fake.page(PAGE, { html });
    for (const asin of ["B07H57DNV1", "B07H57DNV2"]) {
      rig.fake.page(`https://www.amazon.de/dp/${asin}`, { html: onSite(html, "DE") });
    }
    rig.fake.page("https://www.amazon.co.uk/dp/B07H57DNVV", { html: onSite(html, "UK") });
    const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

    // A first stall: passed over for STALL_MS.
    assert.equal((await rig.call(DETAILS)).status, 504);
    stalling = false;
    await wait(STALL_MS + 500);
    // A new session starts on it again, and it answers.
    const before = toA;
    const de = await rig.call("/v1/products/details?asin=B07H57DNV1&marketplace=DE");
    assert.equal(de.status, 200, JSON.stringify(de.body).slice(0, 300));
    assert.equal(toA, before + 1, "the proxy that had stalled took the new session's request");
    // A second stall, after it answered: again the first of a run, passed over for STALL_MS.
    stalling = true;
    assert.equal(
      (await rig.call("/v1/products/details?asin=B07H57DNV2&marketplace=DE")).status,
      504,
    );
    stalling = false;
    await wait(STALL_MS * 1.5);
    const again = toA;
    const uk = await rig.call(`${DETAILS}&marketplace=UK`);
    assert.equal(uk.status, 200, JSON.stringify(uk.body).slice(0, 300));
    assert.equal(toA, again + 1, "passed over past STALL_MS: its stall count was not reset");
  } finally {
    await a.shutdown();
  }
});

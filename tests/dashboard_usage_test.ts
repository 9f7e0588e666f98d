/**
 * The dashboard's usage page (issue 14.11): credits per key and per endpoint for the current
 * period, refunds taken off, the chart labelled as credits, and the tallies starting afresh
 * with the next period. Real server on loopback, real KV file, plain HTTP.
 */
import assert from "node:assert/strict";
import { ManualClock, startServer } from "./test_server.ts";
import { browser } from "./dashboard_client.ts";
import { ApiError } from "../core/api_error.ts";
import { PERIOD_MS } from "../metering/account_state.ts";
import { BUILTIN_PLANS, Plans } from "../metering/plans.ts";
import { withTinyPlan } from "./tiny_plan.ts";

const PASSWORD = "correct horse battery";

/** The rows of a usage table as "name=credits". */
function tally(html: string, id: string): string[] {
  const table = new RegExp(`<table[^>]*id="${id}"[\\s\\S]*?</table>`).exec(html)?.[0] ?? "";
  return [...table.matchAll(/<tr><td[^>]*>([^<]*)<\/td><td[^>]*>(\d+)<\/td><\/tr>/g)]
    .map((m) => `${m[1].replaceAll("&amp;", "&")}=${m[2]}`);
}

Deno.test("dashboard usage: credits by key and by endpoint this period, refunds taken off, chart in credits", async () => {
  const clock = new ManualClock();
  await using s = await startServer({ signup: "open", clock });
  const b = browser(s.url);
  const email = "tally@example.com";
  const page = await b.send("/dashboard/signup");
  assert.equal(
    (await b.send("/dashboard/signup", { form: { _csrf: page.csrf, email, password: PASSWORD } }))
      .status,
    303,
  );
  const id = (await s.accounts.idByEmail(email))!;
  await s.accounts.update(id, { plan: "starter" });
  const a = await s.accounts.createKey(id, { name: "alpha" });
  const z = await s.accounts.createKey(id, { name: "zulu" });

  for (let i = 0; i < 2; i++) {
    const r = await s.get("/v1/products/offers?asin=B07H57DNVV", a.value);
    assert.equal(r.status, 200);
    await r.body?.cancel();
  }
  s.source.searchPages = 3;
  const search = await s.get("/v1/products/search?query=tea&limit=100", z.value);
  assert.equal(search.status, 200);
  assert.equal(search.headers.get("x-credits-cost"), "3");
  await search.body?.cancel();
  s.source.failWith = new ApiError(502, "upstream_error", "down");
  const failed = await s.get("/v1/deals", z.value);
  assert.equal(failed.status, 502);
  await failed.body?.cancel();
  s.source.failWith = null;

  const usage = await b.send("/dashboard/usage");
  assert.equal(usage.status, 200);
  assert.deepEqual(tally(usage.text, "by-key"), [
    `zulu (${z.key.prefix}…${z.key.last4})=3`,
    `alpha (${a.key.prefix}…${a.key.last4})=2`,
  ]);
  assert.deepEqual(tally(usage.text, "by-endpoint"), [
    "/v1/products/search=3",
    "/v1/products/offers=2",
  ]);
  assert.match(usage.text, /<h2>Credits charged per day \(UTC\) this period<\/h2>/);
  assert.match(usage.text, /aria-label="Credits charged per UTC day in the current period"/);
  assert.match(usage.text, /: 5 credits<\/title>/);

  // A revoked key leaves the record; its credits stay counted for the period, under the name the
  // keys page shows it by (probe FB: its id, which no page shows).
  await s.accounts.revokeKey(a.key.id);
  const after = await b.send("/dashboard/usage");
  assert.deepEqual(tally(after.text, "by-key"), [
    `zulu (${z.key.prefix}…${z.key.last4})=3`,
    `alpha (${a.key.prefix}…${a.key.last4}), revoked=2`,
  ]);

  clock.advance(PERIOD_MS + 1000);
  const r = await s.get("/v1/products/offers?asin=B07H57DNVV", z.value);
  assert.equal(r.status, 200);
  await r.body?.cancel();
  // The session has expired meanwhile (7 days): sign in again.
  const signin = await b.send("/dashboard/signin");
  await b.send("/dashboard/signin", { form: { _csrf: signin.csrf, email, password: PASSWORD } });
  const next = await b.send("/dashboard/usage");
  assert.deepEqual(tally(next.text, "by-key"), [`zulu (${z.key.prefix}…${z.key.last4})=1`]);
  assert.deepEqual(tally(next.text, "by-endpoint"), ["/v1/products/offers=1"]);
});

Deno.test("dashboard usage: an alert the mail server could not take says so without naming the operator's network", async () => {
  // A port nothing listens on: the error names its address ("connect ECONNREFUSED 127.0.0.1:…").
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = closed.addr.port;
  closed.close();
  const plans = new Plans([...BUILTIN_PLANS, {
    id: "two",
    credits: 2,
    rate_limit_per_sec: 10,
    max_keys: 1,
    groups: ["products"],
  }]);
  await using s = await startServer({
    signup: "open",
    plans,
    smtp: {
      url: `smtp://127.0.0.1:${port}`,
      timing: { pollMs: 50, retryMs: 50, maxDelayMs: 200 },
    },
  });
  const b = browser(s.url);
  const email = "unsent@example.com";
  const page = await b.send("/dashboard/signup");
  await b.send("/dashboard/signup", { form: { _csrf: page.csrf, email, password: PASSWORD } });
  const id = (await s.accounts.idByEmail(email))!;
  await s.accounts.update(id, { plan: "two" });
  const { value: key } = await s.accounts.createKey(id, { name: "k" });
  for (let i = 0; i < 2; i++) {
    await (await s.get("/v1/products/offers?asin=B07H57DNVV", key)).body?.cancel();
  }
  let text = "";
  for (let i = 0; i < 100 && !/attempt/.test(text); i++) {
    await new Promise((r) => setTimeout(r, 50));
    text = (await b.send("/dashboard/usage")).text;
  }
  assert.match(text, /not delivered yet \(\d+ attempts?: the mail server could not be reached\)/);
  assert.doesNotMatch(text, new RegExp(`ECONNREFUSED|127\\.0\\.0\\.1|${port}`));
  assert.ok(
    s.errors.some((e) => e.includes("ECONNREFUSED")),
    "the operator's log keeps the mail server's own words",
  );
});

Deno.test("dashboard usage: after a plan change the chart holds the days whose usage carried into the new period (probe GH)", async () => {
  const DAY = 86_400_000;
  const clock = new ManualClock(Date.UTC(2028, 1, 27, 12, 0, 0)); // Feb 27 2028, a leap year
  await using s = await startServer({ signup: "open", clock });
  const b = browser(s.url);
  const email = "chart@example.com";
  const page = await b.send("/dashboard/signup");
  await b.send("/dashboard/signup", { form: { _csrf: page.csrf, email, password: PASSWORD } });
  const id = (await s.accounts.idByEmail(email))!;
  const { value: key } = await s.accounts.createKey(id, { name: "k" });
  const call = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const r = await s.get("/v1/products/offers?asin=B07H57DNVV", key);
      assert.equal(r.status, 200);
      await r.body?.cancel();
      clock.advance(1_100);
    }
  };
  await call(3); // Feb 27
  clock.advance(DAY);
  await call(2); // Feb 28
  clock.advance(DAY);
  await call(4); // Feb 29
  await s.accounts.update(id, { plan: "starter" });
  clock.advance(DAY);
  await call(1); // Mar 1
  const html = (await b.send("/dashboard/usage")).text;
  const bars = new Map(
    [...html.matchAll(/data-day="([^"]+)" data-count="(\d+)"/g)].map((m) => [m[1], Number(m[2])]),
  );
  const used = (await (await s.get("/v1/usage", key)).json()).requests_used;
  assert.equal(used, 10, "usage carries over a plan change");
  // The chart began on the day of the change: Feb 27 and 28 were left out, 5 of the 10.
  assert.deepEqual(
    ["2028-02-27", "2028-02-28", "2028-02-29", "2028-03-01"].map((d) => bars.get(d)),
    [3, 2, 4, 1],
  );
  assert.equal([...bars.values()].reduce((a, n) => a + n, 0), used);
});

Deno.test("dashboard usage: a chain of plan changes older than the chart reaches still shows the carried days it can (probe GI)", async () => {
  const DAY = 86_400_000;
  const clock = new ManualClock(Date.UTC(2028, 0, 1, 12));
  await using s = await startServer({ signup: "open", clock });
  const b = browser(s.url);
  const page = await b.send("/dashboard/signup");
  await b.send("/dashboard/signup", {
    form: { _csrf: page.csrf, email: "chain@example.com", password: PASSWORD },
  });
  const id = (await s.accounts.idByEmail("chain@example.com"))!;
  const { value: key } = await s.accounts.createKey(id, { name: "k" });
  const call = async () => {
    const r = await s.get("/v1/products/offers?asin=B07H57DNVV", key);
    assert.equal(r.status, 200);
    await r.body?.cancel();
    clock.advance(1_100);
  };
  // A plan change every 20 days keeps carrying usage from January 1 on.
  for (const [i, plan] of ["starter", "free", "starter", "free", "starter"].entries()) {
    if (i === 1) {
      clock.set(Date.UTC(2028, 0, 1, 12) + 35 * DAY); // February 5: 65 days before the period
      await call();
    }
    clock.set(Date.UTC(2028, 0, 1, 12) + (i + 1) * 20 * DAY);
    await s.accounts.update(id, { plan });
  }
  clock.set(Date.UTC(2028, 0, 1, 12) + 85 * DAY); // March 26, after the fourth change
  await call();
  clock.set(Date.UTC(2028, 0, 1, 12) + 101 * DAY); // April 11, after the fifth
  await call();
  // The sign-up's session has long ended: signed in again.
  const signin = await b.send("/dashboard/signin");
  await b.send("/dashboard/signin", {
    form: { _csrf: signin.csrf, email: "chain@example.com", password: PASSWORD },
  });
  const html = (await b.send("/dashboard/usage")).text;
  const counts = [...html.matchAll(/data-day="([^"]+)" data-count="(\d+)"/g)]
    .filter((m) => m[2] !== "0").map((m) => `${m[1]}=${m[2]}`);
  // The chain began more than three periods back: the chart is cut at three periods before the
  // period's start (April 10), and shows the carried days within them (February 5, March 26).
  assert.deepEqual(counts, ["2028-02-05=1", "2028-03-26=1", "2028-04-11=1"]);
});

Deno.test("dashboard usage: usage a downgrade carried past the new allowance shows as 100%, not more (probe GV)", async () => {
  const plans = withTinyPlan(100);
  const clock = new ManualClock();
  await using s = await startServer({ signup: "open", plans, clock });
  const b = browser(s.url);
  const email = "over@example.com";
  const page = await b.send("/dashboard/signup");
  await b.send("/dashboard/signup", { form: { _csrf: page.csrf, email, password: PASSWORD } });
  const id = (await s.accounts.idByEmail(email))!;
  const { value: key } = await s.accounts.createKey(id, { name: "k" });
  for (let i = 0; i < 10; i++) {
    const r = await s.get("/v1/products/offers?asin=B07H57DNVV", key);
    assert.equal(r.status, 200);
    await r.body?.cancel();
    clock.advance(1_100); // the free plan's one call a second
  }
  await s.accounts.update(id, { plan: "tiny" }); // 10 used carried into an allowance of 2
  const html = (await b.send("/dashboard/usage")).text;
  assert.match(html, /<strong id="used">10<\/strong> of <strong>2<\/strong>/);
  assert.match(html, /credits used \(100%\)/);
  assert.doesNotMatch(html, /500%/);
});

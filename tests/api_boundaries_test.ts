/**
 * Limits checked from both sides (issue 18, beyond the list): the RateLimit header's count of
 * calls left in the window, call by call down to the refusal; the request-body limits at exactly
 * their size and one byte over; search `limit` at -1, 0, 200 and 201. Real server on loopback.
 */
import assert from "node:assert/strict";
import { ControlledSource, ManualClock, startServer } from "./test_server.ts";
import { BUILTIN_PLANS, parsePlans, Plans } from "../metering/plans.ts";
import { FORM_BODY_LIMIT, JSON_BODY_LIMIT } from "../schemas/request_limits.ts";
import type { DataRequest } from "../upstream/data_source.ts";
import { MAX_ANSWER_CHARS } from "../upstream/page_read.ts";

const OFFERS = "/v1/products/offers?asin=B07H57DNVV";
const ADMIN = "boundaries-test-admin-token-0123456789";

Deno.test("RateLimit counts the calls left in the second, 2, 1, 0, then 429 with Retry-After: 1", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 5, 12, 0, 0, 0)); // a whole second
  const plans = parsePlans(JSON.stringify({
    plans: [{
      id: "three",
      credits: 100,
      rate_limit_per_sec: 3,
      max_keys: 1,
      groups: ["products"],
    }],
  }));
  await using s = await startServer({ clock, plans });
  const { key } = await s.account("three");
  const seen: string[] = [];
  for (let i = 0; i < 4; i++) {
    clock.advance(100);
    const r = await s.get(OFFERS, key);
    await r.body?.cancel();
    seen.push(`${r.status} ${r.headers.get("ratelimit")} ${r.headers.get("retry-after")}`);
  }
  assert.deepEqual(seen, [
    '200 "per-key";r=2;t=1 null',
    '200 "per-key";r=1;t=1 null',
    '200 "per-key";r=0;t=1 null',
    '429 "per-key";r=0;t=1 1',
  ]);
  clock.advance(600); // the next whole second
  const next = await s.get(OFFERS, key);
  await next.body?.cancel();
  assert.equal(next.status, 200);
  assert.equal(next.headers.get("ratelimit"), '"per-key";r=2;t=1');
  assert.equal(next.headers.get("ratelimit-policy"), '"per-key";q=3;w=1');
});

Deno.test("body limits hold at exactly their size and refuse one byte more (form 16 KiB, JSON 64 KiB)", async () => {
  await using s = await startServer({ adminToken: ADMIN });
  const json = (bytes: number) => {
    const base = JSON.stringify({ email: `b${bytes}@example.com`, pad: "" });
    return base.slice(0, -2) + "x".repeat(bytes - base.length) + '"}';
  };
  const admin = (body: string) =>
    fetch(`${s.url}/admin/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body,
    });
  const atLimit = await admin(json(JSON_BODY_LIMIT));
  assert.equal(new TextEncoder().encode(json(JSON_BODY_LIMIT)).length, JSON_BODY_LIMIT);
  assert.equal(atLimit.status, 201, await atLimit.text());
  const over = await admin(json(JSON_BODY_LIMIT + 1));
  assert.equal(over.status, 413);
  assert.equal((await over.json()).error.status, 413);

  const form = (bytes: number) => {
    const base = "email=a%40b.c&password=";
    return base + "x".repeat(bytes - base.length);
  };
  const signin = (body: string) =>
    fetch(`${s.url}/dashboard/signin`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body,
      redirect: "manual",
    });
  const formAt = await signin(form(FORM_BODY_LIMIT));
  await formAt.body?.cancel();
  assert.notEqual(formAt.status, 413, "a form of exactly the limit is read");
  const formOver = await signin(form(FORM_BODY_LIMIT + 1));
  await formOver.body?.cancel();
  assert.equal(formOver.status, 413);
  assert.equal(FORM_BODY_LIMIT, 16 * 1024, "the README documents 16 KiB");
  assert.equal(JSON_BODY_LIMIT, 64 * 1024, "the README documents 64 KiB");
});

Deno.test("search limit: -1 and 201 are 422 on `limit`, 0 and 200 are accepted", async () => {
  await using s = await startServer();
  const { key } = await s.account("growth");
  for (
    const [limit, status, type] of [
      ["-1", 422, "greater_than_equal"],
      ["0", 200, null],
      ["200", 200, null],
      ["201", 422, "less_than_equal"],
    ] as const
  ) {
    const r = await s.get(`/v1/products/search?query=tea&limit=${limit}`, key);
    const body = await r.json();
    assert.equal(r.status, status, `limit=${limit}: ${JSON.stringify(body)}`);
    if (type) {
      assert.deepEqual(body.detail.map((d: { loc: string[]; type: string }) => [d.loc, d.type]), [
        [["query", "limit"], type],
      ]);
    }
  }
});

Deno.test("authenticated answers, paid or refused, tell shared caches not to keep them", async () => {
  await using s = await startServer();
  const { key } = await s.account("starter");
  for (const path of [OFFERS, "/v1/usage", "/v1/products/details?asin=bad", "/v1/watches"]) {
    const r = await s.get(path, key);
    await r.body?.cancel();
    assert.equal(r.headers.get("cache-control"), "private, no-store", `${path}: ${r.status}`);
  }
});

Deno.test("the answer bound counts bytes: under a third of it in a three-byte script passes, just over a third is refused (probe FZ)", async () => {
  const third = Math.floor(MAX_ANSWER_CHARS / 3);
  const answer = (chars: number) =>
    class extends ControlledSource {
      override async fetch(req: DataRequest) {
        const body = await super.fetch(req) as Record<string, unknown>;
        return { ...body, url: `https://www.amazon.com/${"語".repeat(chars)}` };
      }
    };
  for (const [chars, status] of [[third - 10_000, 200], [third + 100, 502]] as const) {
    await using s = await startServer({ source: new (answer(chars))() });
    const { key } = await s.account("starter");
    const r = await s.get(OFFERS, key);
    await r.body?.cancel();
    assert.equal(r.status, status, `${chars} three-byte characters`);
    assert.equal(r.headers.get("x-credits-cost"), status === 200 ? "1" : "0");
  }
});

Deno.test("the answer bound counts a surrogate pair as its four UTF-8 bytes: emoji just under the bound pass, just over are refused (probe GP, CA2)", async () => {
  // "😀" is two UTF-16 units and four bytes of UTF-8. Counted as three bytes a unit (six a
  // character), an answer of emoji past two thirds of the bound was a false 502.
  const quarter = Math.floor(MAX_ANSWER_CHARS / 4);
  const answer = (emoji: number) =>
    class extends ControlledSource {
      override async fetch(req: DataRequest) {
        const body = await super.fetch(req) as Record<string, unknown>;
        return { ...body, url: `https://www.amazon.com/${"😀".repeat(emoji)}` };
      }
    };
  for (const [emoji, status] of [[quarter - 10_000, 200], [quarter + 100, 502]] as const) {
    await using s = await startServer({ source: new (answer(emoji))() });
    const { key } = await s.account("starter");
    const r = await s.get(OFFERS, key);
    const text = await r.text();
    assert.equal(r.status, status, `${emoji} emoji`);
    assert.equal(r.headers.get("x-credits-cost"), status === 200 ? "1" : "0");
    if (status === 200) {
      const bytes = new TextEncoder().encode(text).byteLength;
      assert.ok(bytes > MAX_ANSWER_CHARS * 0.99 && bytes <= MAX_ANSWER_CHARS, `${bytes} bytes`);
    }
  }
});

Deno.test("an answer larger than any real page yields is an uncharged 502, not a charge for half a gigabyte", async () => {
  class Repeating extends ControlledSource {
    override async fetch(req: DataRequest) {
      const body = await super.fetch(req) as Record<string, unknown>;
      return { ...body, url: `https://www.amazon.com/${"x".repeat(MAX_ANSWER_CHARS)}` };
    }
  }
  await using s = await startServer({ source: new Repeating() });
  const { key } = await s.account("starter");
  const r = await s.get(OFFERS, key);
  assert.equal(r.status, 502);
  assert.equal((await r.json()).error.code, "upstream_error");
  assert.equal(r.headers.get("x-credits-cost"), "0");
  assert.equal((await (await s.get("/v1/usage", key)).json()).requests_used, 0);
});

/** Rate and credits these tests' runs of calls never reach. */
const roomy = new Plans([...BUILTIN_PLANS, {
  id: "roomy",
  credits: 1_000,
  rate_limit_per_sec: 1_000,
  max_keys: 1,
  groups: ["products", "reviews", "sellers", "merchandising", "utility", "scrape"],
}]);

/**
 * Sends each value of `param` to each path: `bad` ones must be an uncharged 422 on `param` alone,
 * with `type`, reaching no data source; `good` ones must pass validation (the test source answers
 * search and offers, and gives the others an uncharged 502, past validation).
 */
async function pinBound(
  param: string,
  paths: string[],
  good: string[],
  bad: [string, string][],
) {
  await using s = await startServer({ plans: roomy });
  const { key } = await s.account("roomy");
  for (const path of paths) {
    for (const [value, type] of bad) {
      const r = await s.get(`${path}&${param}=${value}`, key);
      const body = await r.json();
      assert.equal(r.status, 422, `${path} ${param}=${value}: ${JSON.stringify(body)}`);
      assert.equal(r.headers.get("x-credits-cost"), "0");
      assert.deepEqual(
        body.detail.map((
          d: { loc: string[]; type: string; input: unknown },
        ) => [d.loc, d.type, d.input]),
        [[["query", param], type, value]],
        `${path} ${param}=${value}`,
      );
    }
  }
  assert.equal(s.source.calls, 0, "no refused call reached the data source");
  assert.equal((await (await s.get("/v1/usage", key)).json()).requests_used, 0, "nothing charged");
  for (const path of paths) {
    for (const value of good) {
      const before: number = s.source.calls;
      const r = await s.get(`${path}&${param}=${value}`, key);
      const body = await r.json();
      assert.notEqual(r.status, 422, `${path} ${param}=${value}: ${JSON.stringify(body)}`);
      assert.equal(s.source.calls, before + 1, `${path} ${param}=${value} is admitted`);
      assert.equal(s.source.lastParams?.[param], param === "page" ? Number(value) : value);
    }
  }
}

Deno.test("page: 1 and 400 pass, 0 and 401 are an uncharged 422 on `page`, on every endpoint that pages", async () => {
  await pinBound(
    "page",
    [
      "/v1/products/search?query=tea",
      "/v1/bestsellers?category=hi",
      "/v1/products/category?category_id=electronics",
      "/v1/sellers/products?seller_id=A1B2C3D4E5",
      "/v1/products/reviews?asin=B07H57DNVV",
    ],
    ["1", "400"],
    [["0", "greater_than_equal"], ["401", "less_than_equal"]],
  );
});

Deno.test("search query: 300 characters pass, 301 are an uncharged 422 string_too_long", async () => {
  await pinBound("query", ["/v1/products/search?limit=0"], ["q".repeat(300)], [
    ["q".repeat(301), "string_too_long"],
  ]);
});

Deno.test("seller_id: 8 and 20 characters pass, 7 and 21 are an uncharged 422, on both seller endpoints", async () => {
  await pinBound(
    "seller_id",
    ["/v1/sellers/products?page=1", "/v1/sellers/profile?marketplace=us"],
    ["A1B2C3D4", "A1B2C3D4E5F6G7H8J9K0"],
    [["A1B2C3D", "string_pattern_mismatch"], ["A1B2C3D4E5F6G7H8J9K0L", "string_pattern_mismatch"]],
  );
});

import assert from "node:assert/strict";
import { ManualClock, startServer } from "./test_server.ts";
import { DATA_ENDPOINTS } from "../schemas/endpoints.ts";
import { BUILTIN_PLANS, Plans } from "../metering/plans.ts";

const ALL = ["products", "reviews", "sellers", "merchandising", "utility", "scrape"];
const roomy = new Plans([{
  id: "roomy",
  credits: 1000,
  rate_limit_per_sec: 1000,
  max_keys: 5,
  groups: ALL,
}, ...BUILTIN_PLANS]);

Deno.test("every endpoint answers 422 'Field required' for each missing required parameter, uncharged", async () => {
  await using s = await startServer({ plans: roomy });
  const { key } = await s.account("roomy");
  let checked = 0;
  for (const ep of DATA_ENDPOINTS) {
    const required = Object.entries(ep.params).filter(([, p]) => p.required).map(([n]) => n);
    if (!required.length) continue;
    const r = await s.get(ep.path, key);
    assert.equal(r.status, 422, ep.path);
    assert.equal(r.headers.get("x-credits-cost"), "0");
    const body = await r.json();
    assert.deepEqual(Object.keys(body), ["detail"], ep.path);
    assert.deepEqual(
      body.detail,
      required.map((name) => ({
        loc: ["query", name],
        msg: "Field required",
        type: "missing",
        input: null,
      })),
      ep.path,
    );
    checked++;
  }
  assert.equal(checked, 15); // every endpoint with a required parameter, history (17.3) included
  assert.equal((await (await s.get("/v1/usage", key)).json()).requests_used, 0);
});

Deno.test("422 names each failing parameter with pydantic's type and the input given", async () => {
  await using s = await startServer({ plans: roomy });
  const { key } = await s.account("roomy");
  const r = await s.get(
    "/v1/products/search?query=x&page=0&limit=201&sort=cheap&prime_only=maybe&min_price=abc&marketplace=zz",
    key,
  );
  assert.equal(r.status, 422);
  const { detail } = await r.json();
  const byName = Object.fromEntries(detail.map((d: { loc: string[] }) => [d.loc[1], d]));
  assert.deepEqual(Object.keys(byName).sort(), [
    "limit",
    "marketplace",
    "min_price",
    "page",
    "prime_only",
    "sort",
  ]);
  assert.deepEqual(byName.page, {
    loc: ["query", "page"],
    msg: "Input should be greater than or equal to 1",
    type: "greater_than_equal",
    input: "0",
  });
  assert.equal(byName.limit.type, "less_than_equal");
  assert.equal(byName.sort.type, "enum");
  assert.equal(byName.prime_only.type, "bool_parsing");
  assert.equal(byName.min_price.type, "float_parsing");
  assert.equal(byName.marketplace.input, "zz");
});

Deno.test("valid values in every accepted form pass validation", async () => {
  await using s = await startServer({ plans: roomy });
  const { key } = await s.account("roomy");
  for (
    const q of [
      "query=usb&limit=0",
      "query=usb&limit=200",
      "query=usb&prime_only=true&include_sponsored=false",
      "query=usb&marketplace=de&sort=price_asc&min_price=1.5&max_price=99",
      "query=usb&page=3",
    ]
  ) {
    const r = await s.get(`/v1/products/search?${q}`, key);
    assert.equal(r.status, 200, q);
    await r.body?.cancel();
  }
  const r = await s.get("/v1/products/search?query=usb&marketplace=de", key);
  assert.equal((await r.json()).marketplace, "DE");
  const page = await s.get("/v1/products/search?query=usb&page=1.5", key);
  assert.equal((await page.json()).detail[0].type, "int_parsing");
});

Deno.test("ids are upper-cased a–z only: letters that upper-case to others are a 422, uncharged (probe EA)", async () => {
  await using s = await startServer({ plans: roomy });
  const { key } = await s.account("roomy");
  for (
    const [path, param, value] of [
      ["/v1/products/details", "asin", "B07H57DN\uFB00"], // "ﬀ", upper-cased "FF"
      ["/v1/products/details", "asin", "B07H57DNV\u017F"], // long s, upper-cased "S"
      ["/v1/products/details", "asin", "B07H57DNV\u0131"], // dotless i, upper-cased "I"
      ["/v1/products/reviews/details", "review_id", "R3ABCDEFGH\u00DF"], // "ß", upper-cased "SS"
      ["/v1/products/details?asin=B07H57DNVV", "marketplace", "\u017FE"], // "ſE" for SE
    ]
  ) {
    const sep = path.includes("?") ? "&" : "?";
    const r = await s.get(`${path}${sep}${param}=${encodeURIComponent(value)}`, key);
    assert.equal(r.status, 422, `${param}=${value}`);
    const names = (await r.json()).detail.map((d: { loc: string[] }) => d.loc[1]);
    assert.ok(names.includes(param), `${param}=${value}: ${names}`);
  }
  // a–z still pass (this server has no upstream for details: past validation, a 502).
  const lower = await s.get("/v1/products/details?asin=b07h57dnvv&marketplace=de", key);
  assert.equal(lower.status, 502);
  await lower.body?.cancel();
  assert.equal((await (await s.get("/v1/usage", key)).json()).requests_used, 0);
});

Deno.test("booleans take the words pydantic takes: 1/yes/on/t/y and 0/no/off/f/n, in any case", async () => {
  await using s = await startServer({ plans: roomy });
  const { key } = await s.account("roomy");
  for (
    const [word, value] of [["1", true], ["YES", true], ["on", true], ["0", false], ["No", false], [
      "off",
      false,
    ]] as const
  ) {
    const r = await s.get(`/v1/products/search?query=usb&prime_only=${word}`, key);
    assert.equal(r.status, 200, word);
    await r.body?.cancel();
    assert.equal(s.source.lastParams?.prime_only, value, word);
  }
});

Deno.test("min_price above max_price is a 422 on min_price, uncharged; equal or one-sided prices pass (issue 13.17)", async () => {
  await using s = await startServer({ plans: roomy });
  const { key } = await s.account("roomy");
  const r = await s.get("/v1/products/search?query=ipad&min_price=50&max_price=49.99", key);
  assert.equal(r.status, 422);
  assert.equal(r.headers.get("x-credits-cost"), "0");
  const body = await r.json();
  assert.equal(body.detail.length, 1);
  assert.deepEqual(body.detail[0].loc, ["query", "min_price"]);
  assert.equal(body.detail[0].type, "less_than_equal");
  assert.equal(body.detail[0].input, "50");
  for (
    const q of [
      "min_price=50&max_price=50",
      "min_price=49.99&max_price=50",
      "min_price=500",
      "max_price=1",
    ]
  ) {
    const ok = await s.get(`/v1/products/search?query=ipad&${q}`, key);
    assert.equal(ok.status, 200, q);
    await ok.body?.cancel();
  }
  assert.equal(s.source.calls, 4, "only the valid calls reached the data source");
});

Deno.test("refusals come before validation: bad parameters get 401, 403 or 429 where valid ones would, never 422", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 5, 12));
  await using s = await startServer({ clock });
  const BAD = "/v1/products/details?asin=not-an-asin";
  const status = async (path: string, key: string) => {
    const r = await s.get(path, key);
    await r.body?.cancel();
    return r.status;
  };
  const revoked = await s.account("starter");
  await s.accounts.revokeKey(revoked.keyId);
  assert.equal(await status(BAD, revoked.key), 401, "a revoked key");

  const inactive = await s.account("starter");
  await s.accounts.update(inactive.id, { status: "inactive" });
  assert.equal(await status(BAD, inactive.key), 403, "an inactive account");

  const free = await s.account("free");
  assert.equal(await status("/v1/scrape?url=not-a-url", free.key), 403, "a group the plan lacks");

  // The free plan admits one call a second; the second, however malformed, is over the limit.
  assert.equal(await status(BAD, free.key), 422, "the second's one call is validated");
  assert.equal(await status(BAD, free.key), 429, "the next in the same second is rate limited");
  clock.advance(1_000);
  assert.equal(await status(BAD, free.key), 422, "a new second");
});

/** A call's status, credit cost and 422 entries (loc name, type, input); the body is read. */
async function answer(
  s: { get: (p: string, k: string) => Promise<Response> },
  path: string,
  key: string,
) {
  const r = await s.get(path, key);
  const body = await r.json();
  const detail = r.status === 422
    ? body.detail.map((
      d: { loc: string[]; type: string; input: unknown },
    ) => [d.loc[1], d.type, d.input])
    : null;
  return { status: r.status, cost: r.headers.get("x-credits-cost"), detail, body };
}

Deno.test("a repeated data parameter takes its last value: a bad last value is an uncharged 422, a good one is the value used", async () => {
  await using s = await startServer({ plans: roomy });
  const { key } = await s.account("roomy");
  const bad = await answer(s, "/v1/products/offers?asin=B0ABCDEFGH&asin=bad", key);
  assert.equal(bad.status, 422);
  assert.equal(bad.cost, "0");
  assert.deepEqual(bad.detail, [["asin", "string_pattern_mismatch", "bad"]]);
  assert.equal(s.source.calls, 0, "a refused call reaches no data source");
  assert.equal((await (await s.get("/v1/usage", key)).json()).requests_used, 0);

  const good = await answer(s, "/v1/products/offers?asin=bad&asin=B0ABCDEFGH", key);
  assert.equal(good.status, 200, JSON.stringify(good.body));
  assert.equal(good.cost, "1");
  assert.equal(good.body.asin, "B0ABCDEFGH");
  for (
    const [q, value] of [["prime_only=true&prime_only=false", false], [
      "prime_only=no&prime_only=1",
      true,
    ]] as const
  ) {
    const r = await answer(s, `/v1/products/search?query=usb&${q}`, key);
    assert.equal(r.status, 200, q);
    assert.equal(s.source.lastParams?.prime_only, value, q);
  }
  const pages = await answer(s, "/v1/products/search?query=usb&page=2&page=0", key);
  assert.deepEqual(pages.detail, [["page", "greater_than_equal", "0"]]);
  assert.equal((await (await s.get("/v1/usage", key)).json()).requests_used, 3);
});

Deno.test("an ASIN is exactly 10 characters: 9 and 11 are an uncharged 422 string_pattern_mismatch, 10 passes", async () => {
  await using s = await startServer({ plans: roomy });
  const { key } = await s.account("roomy");
  for (const asin of ["B0ABCDEFGHX", "B0ABCDEFG", "B0ABCDEFGH1234567890"]) {
    for (const path of ["/v1/products/offers", "/v1/products/details", "/v1/products/reviews"]) {
      const r = await answer(s, `${path}?asin=${asin}`, key);
      assert.equal(r.status, 422, `${path} ${asin}`);
      assert.equal(r.cost, "0");
      assert.deepEqual(r.detail, [["asin", "string_pattern_mismatch", asin]], `${path} ${asin}`);
    }
  }
  assert.equal(s.source.calls, 0);
  assert.equal((await (await s.get("/v1/usage", key)).json()).requests_used, 0);
  const ok = await answer(s, "/v1/products/offers?asin=B0ABCDEFGH", key);
  assert.equal(ok.status, 200);
  assert.equal(ok.cost, "1");
  assert.equal((await (await s.get("/v1/usage", key)).json()).requests_used, 1);
});

Deno.test("an empty or blank boolean is no boolean: an uncharged 422 bool_parsing, never read as true", async () => {
  await using s = await startServer({ plans: roomy });
  const { key } = await s.account("roomy");
  for (
    const [name, raw] of [["prime_only", ""], ["prime_only", "%20"], ["include_sponsored", ""]]
  ) {
    const r = await answer(s, `/v1/products/search?query=usb&${name}=${raw}`, key);
    assert.equal(r.status, 422, `${name}=${raw}`);
    assert.equal(r.cost, "0");
    assert.deepEqual(r.detail, [[name, "bool_parsing", decodeURIComponent(raw)]], `${name}=${raw}`);
  }
  const verified = await answer(s, "/v1/products/reviews?asin=B07H57DNVV&verified_only=", key);
  assert.deepEqual(verified.detail, [["verified_only", "bool_parsing", ""]]);
  assert.equal(s.source.calls, 0);
  assert.equal((await (await s.get("/v1/usage", key)).json()).requests_used, 0);
});

Deno.test("numbers are decimal: hex, binary, octal, blank and empty prices are an uncharged 422 float_parsing; decimal forms pass", async () => {
  await using s = await startServer({ plans: roomy });
  const { key } = await s.account("roomy");
  for (const raw of ["0x10", "0b1", "0o7", "%20", "", "1_000", "Infinity", "1.2.3"]) {
    for (const name of ["min_price", "max_price"]) {
      const r = await answer(s, `/v1/products/search?query=usb&${name}=${raw}`, key);
      assert.equal(r.status, 422, `${name}=${raw}`);
      assert.equal(r.cost, "0");
      assert.deepEqual(
        r.detail,
        [[name, "float_parsing", decodeURIComponent(raw)]],
        `${name}=${raw}`,
      );
    }
  }
  assert.equal(s.source.calls, 0);
  assert.equal((await (await s.get("/v1/usage", key)).json()).requests_used, 0);
  for (
    const [raw, value] of [["16", 16], ["1e1", 10], [".5", 0.5], ["+3", 3], ["2.", 2], [
      "%207%20",
      7,
    ]] as const
  ) {
    const r = await answer(s, `/v1/products/search?query=usb&min_price=${raw}`, key);
    assert.equal(r.status, 200, `min_price=${raw}`);
    assert.equal(s.source.lastParams?.min_price, value, `min_price=${raw}`);
  }
});

Deno.test("a postcode starts with a letter or digit and holds 2-12 characters: -1234 and the bounds' outsides are an uncharged 422", async () => {
  await using s = await startServer({ plans: roomy });
  const { key } = await s.account("roomy");
  for (const zip of ["-1234", "-", "1", "1".repeat(13), "12_34"]) {
    const r = await answer(s, `/v1/products/offers?asin=B07H57DNVV&zip=${zip}`, key);
    assert.equal(r.status, 422, `zip=${zip}`);
    assert.equal(r.cost, "0");
    assert.deepEqual(r.detail.map((d: unknown[]) => d[0]), ["zip"], `zip=${zip}`);
    assert.equal(r.detail[0][2], zip);
  }
  assert.equal(s.source.calls, 0);
  assert.equal((await (await s.get("/v1/usage", key)).json()).requests_used, 0);
  for (const zip of ["12", "1234-", "A1 2-3", "1".repeat(12)]) {
    const r = await answer(
      s,
      `/v1/products/offers?asin=B07H57DNVV&zip=${encodeURIComponent(zip)}`,
      key,
    );
    assert.equal(r.status, 200, `zip=${zip}`);
    assert.equal(s.source.lastParams?.zip, zip);
  }
});

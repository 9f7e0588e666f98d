/**
 * Query values in the forms a client may send them (routes/validate_query.ts,
 * routes/query_params.ts): padded and signed numbers read as pydantic reads them, strings
 * trimmed before they are checked, a number too large to be finite refused, the 422 of
 * min_price > max_price naming the value used, and a tab in a query dropped as the URL parser
 * drops it.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { BUILTIN_PLANS, Plans } from "../metering/plans.ts";
import { queryParams } from "../routes/query_params.ts";

const roomy = new Plans([{
  id: "roomy",
  credits: 1000,
  rate_limit_per_sec: 1000,
  max_keys: 5,
  groups: ["products", "reviews", "sellers", "merchandising", "utility", "scrape"],
}, ...BUILTIN_PLANS]);

Deno.test("a page sent as +2 or padded with spaces is page 2, as pydantic reads it", async () => {
  await using s = await startServer({ plans: roomy });
  const { key } = await s.account("roomy");
  // %2B is a literal "+"; a bare "+" decodes to a space, so "+2" arrives as " 2".
  for (const page of ["%2B2", "+2", "%202%20"]) {
    const r = await s.get(`/v1/products/search?query=usb&page=${page}`, key);
    const body = await r.json();
    assert.equal(r.status, 200, `page=${page}: ${JSON.stringify(body)}`);
    assert.equal(s.source.lastParams?.page, 2, `page=${page}`);
    assert.equal(body.page, 2, `page=${page}`);
  }
});

Deno.test("a price too large to be a finite number is a float_parsing 422, uncharged", async () => {
  await using s = await startServer({ plans: roomy });
  const { key } = await s.account("roomy");
  const r = await s.get("/v1/products/search?query=usb&min_price=1e999", key);
  assert.equal(r.status, 422);
  assert.equal(r.headers.get("x-credits-cost"), "0");
  assert.deepEqual((await r.json()).detail, [{
    loc: ["query", "min_price"],
    msg: "Input should be a valid number, unable to parse string as a number",
    type: "float_parsing",
    input: "1e999",
  }]);
  assert.equal(s.source.calls, 0);
});

Deno.test("a zip padded with spaces is trimmed before it is checked and reaches the source bare", async () => {
  await using s = await startServer({ plans: roomy });
  const { key } = await s.account("roomy");
  const r = await s.get("/v1/products/offers?asin=B0ABCDEFGH&zip=%2010001%20", key);
  assert.equal(r.status, 200, await r.text());
  assert.equal(s.source.lastParams?.zip, "10001");
});

Deno.test("min_price above max_price names the last min_price sent, the one compared", async () => {
  await using s = await startServer({ plans: roomy });
  const { key } = await s.account("roomy");
  const r = await s.get(
    "/v1/products/search?query=usb&min_price=1&min_price=50&max_price=10",
    key,
  );
  assert.equal(r.status, 422);
  const { detail } = await r.json();
  assert.equal(detail.length, 1, JSON.stringify(detail));
  assert.deepEqual(detail[0].loc, ["query", "min_price"]);
  assert.equal(detail[0].type, "less_than_equal");
  assert.equal(detail[0].input, "50");
});

Deno.test("queryParams() drops a tab in a query, with no newline beside it, as the URL parser does", () => {
  for (
    const url of [
      "http://127.0.0.1:8000/v1/products/offers?asin=B0ABC\tDEFGH&q=a\tb",
      "http://127.0.0.1:8000/v1/products/offers?asin=\tB0ABCDEFGH",
    ]
  ) {
    const expected = new Map<string, string[]>();
    for (const [k, v] of new URL(url).searchParams) {
      expected.set(k, [...(expected.get(k) ?? []), v]);
    }
    assert.deepEqual(queryParams(url), expected, JSON.stringify(url));
  }
  assert.deepEqual(
    queryParams("http://h/v1/x?asin=B0ABC\tDEFGH").get("asin"),
    ["B0ABCDEFGH"],
  );
});

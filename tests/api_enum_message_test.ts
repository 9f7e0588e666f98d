/**
 * An enum parameter's 422 lists every allowed value in pydantic's words (routes/pydantic_issues.ts):
 * "Input should be 'a', 'b' or 'c'", two values joined by "or" alone.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { BUILTIN_PLANS, Plans } from "../metering/plans.ts";

const roomy = new Plans([{
  id: "roomy",
  credits: 1000,
  rate_limit_per_sec: 1000,
  max_keys: 5,
  groups: ["products", "reviews"],
}, ...BUILTIN_PLANS]);

Deno.test("422 for an enum value names every allowed value: two joined by 'or', more by commas then 'or'", async () => {
  await using s = await startServer({ plans: roomy });
  const { key } = await s.account("roomy");
  const reviews = await s.get("/v1/products/reviews?asin=B0011UCPM4&sort=newest", key);
  assert.equal(reviews.status, 422);
  assert.deepEqual((await reviews.json()).detail, [{
    loc: ["query", "sort"],
    msg: "Input should be 'helpful' or 'recent'",
    type: "enum",
    input: "newest",
  }]);
  const search = await s.get("/v1/products/search?query=usb&sort=cheap", key);
  assert.equal(search.status, 422);
  const [detail] = (await search.json()).detail;
  assert.equal(detail.type, "enum");
  assert.equal(
    detail.msg,
    "Input should be 'relevance', 'price_asc', 'price_desc', 'rating', 'newest' or 'bestseller'",
  );
});

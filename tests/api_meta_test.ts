import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { ALL_ENDPOINTS } from "../schemas/endpoints.ts";

Deno.test("GET /v1/ lists every endpoint with its path, cost and group", async () => {
  await using s = await startServer();
  const body = await (await s.get("/v1/")).json();
  assert.equal(body.endpoints.length, ALL_ENDPOINTS.length);
  const byPath = Object.fromEntries(body.endpoints.map((e: { path: string }) => [e.path, e]));
  assert.equal(byPath["/v1/scrape"].cost, 2);
  assert.equal(byPath["/v1/usage"].cost, 0);
  assert.equal(byPath["/v1/products/search"].group, "products");
  assert.equal(byPath["/v1/deals/products"].group, "merchandising");
  for (const p of ["/v1/products/offers", "/v1/products/details", "/v1/bestsellers", "/v1/products/category",
    "/v1/sellers/products", "/v1/sellers/profile", "/v1/deals", "/v1/products/reviews",
    "/v1/products/reviews/details", "/v1/utility/gtin-to-asin", "/v1/utility/asin-to-gtin",
    "/v1/utility/categories", "/v1/promotions", "/v1/products/reviews/top"]) {
    assert.ok(byPath[p], p);
  }
});

Deno.test("/openapi.json is an OpenAPI 3.1 document generated from the schemas", async () => {
  await using s = await startServer();
  const doc = await (await s.get("/openapi.json")).json();
  assert.equal(doc.openapi, "3.1.0");
  assert.equal(Object.keys(doc.paths).length, ALL_ENDPOINTS.length);
  const search = doc.paths["/v1/products/search"].get;
  const limit = search.parameters.find((p: { name: string }) => p.name === "limit");
  assert.deepEqual([limit.schema.minimum, limit.schema.maximum, limit.schema.default], [0, 200, 0]);
  const item = search.responses["200"].content["application/json"].schema.properties.results.items;
  assert.ok(item.required.includes("bought_past_month"));
  assert.deepEqual(item.properties.price.anyOf[0].properties.list_price.type, ["number", "null"]);
  const offer = doc.paths["/v1/products/offers"].get.responses["200"].content["application/json"].schema.properties.offers.items;
  assert.equal(offer.properties.price.anyOf[0].properties.list_price, undefined, "offers' price has no list_price");
});

Deno.test("/docs serves the interactive documentation page", async () => {
  await using s = await startServer();
  const r = await s.get("/docs");
  assert.equal(r.status, 200);
  assert.match(r.headers.get("content-type") ?? "", /text\/html/);
  assert.match(await r.text(), /openapi\.json/);
});

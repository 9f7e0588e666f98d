import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { ALL_ENDPOINTS } from "../schemas/endpoints.ts";

Deno.test("GET /v1/ lists every endpoint with its path, cost and group", async () => {
  await using s = await startServer();
  const body = await (await s.get("/v1/")).json();
  // The data endpoints and the three watch routes (probe EY: the watches were left out).
  assert.equal(body.endpoints.length, ALL_ENDPOINTS.length + 3);
  assert.deepEqual(
    body.endpoints.filter((e: { path: string }) => e.path.startsWith("/v1/watches"))
      .map((e: { method: string; path: string; cost: number }) =>
        `${e.method} ${e.path} ${e.cost}`
      ),
    ["POST /v1/watches 0", "GET /v1/watches 0", "DELETE /v1/watches/{id} 0"],
  );
  const byPath = Object.fromEntries(body.endpoints.map((e: { path: string }) => [e.path, e]));
  assert.equal(byPath["/v1/scrape"].cost, 2);
  assert.equal(byPath["/v1/usage"].cost, 0);
  assert.equal(byPath["/v1/products/search"].group, "products");
  assert.equal(byPath["/v1/deals/products"].group, "merchandising");
  for (
    const p of [
      "/v1/products/offers",
      "/v1/products/details",
      "/v1/bestsellers",
      "/v1/products/category",
      "/v1/sellers/products",
      "/v1/sellers/profile",
      "/v1/deals",
      "/v1/products/reviews",
      "/v1/products/reviews/details",
      "/v1/utility/gtin-to-asin",
      "/v1/utility/asin-to-gtin",
      "/v1/utility/categories",
      "/v1/promotions",
      "/v1/products/reviews/top",
    ]
  ) {
    assert.ok(byPath[p], p);
  }
});

Deno.test("/openapi.json is an OpenAPI 3.1 document generated from the schemas", async () => {
  await using s = await startServer();
  const doc = await (await s.get("/openapi.json")).json();
  assert.equal(doc.openapi, "3.1.0");
  // Every GET endpoint, and the two paths of watches (POST/GET, DELETE).
  assert.equal(Object.keys(doc.paths).length, ALL_ENDPOINTS.length + 2);
  const deref = (o: { $ref?: string }) =>
    o.$ref ? o.$ref.split("/").slice(1).reduce((n, k) => n[k], doc) : o;
  const create = doc.paths["/v1/watches"].post;
  const createBody = deref(create.requestBody.content["application/json"].schema);
  assert.deepEqual(createBody.required.sort(), ["asin", "every_seconds", "on", "webhook_url"]);
  assert.equal(createBody.additionalProperties, false);
  assert.ok(
    deref(create.responses["201"].content["application/json"].schema).required.includes("secret"),
  );
  assert.equal(
    deref(doc.paths["/v1/watches"].get.responses["200"].content["application/json"].schema)
      .properties.watches.items.properties.secret,
    undefined,
  );
  assert.ok(doc.paths["/v1/watches/{id}"].delete.responses["404"]);
  const search = doc.paths["/v1/products/search"].get;
  const limit = search.parameters.find((p: { name: string }) => p.name === "limit");
  assert.deepEqual([limit.schema.minimum, limit.schema.maximum, limit.schema.default], [0, 200, 0]);
  const searchBody = search.responses["200"].content["application/json"].schema;
  assert.equal(
    searchBody.$ref,
    "#/components/schemas/SearchResponse",
    "responses are named components",
  );
  const item = deref(searchBody).properties.results.items;
  assert.ok(item.required.includes("bought_past_month"));
  assert.deepEqual(item.properties.price.anyOf[0].properties.list_price.type, ["number", "null"]);
  const offer =
    deref(doc.paths["/v1/products/offers"].get.responses["200"].content["application/json"].schema)
      .properties.offers.items;
  assert.equal(
    offer.properties.price.anyOf[0].properties.list_price,
    undefined,
    "offers' price has no list_price",
  );
});

Deno.test("/openapi.json names the metering headers, the three ways to send a key and both error shapes", async () => {
  await using s = await startServer();
  const doc = await (await s.get("/openapi.json")).json();
  const deref = (o: { $ref?: string }) =>
    o.$ref ? o.$ref.split("/").slice(1).reduce((n, k) => n[k], doc) : o;
  const details = doc.paths["/v1/products/details"].get;
  assert.deepEqual(Object.keys(details.responses["200"].headers).sort(), [
    "Age",
    "RateLimit",
    "RateLimit-Policy",
    "X-Credits-Cost",
    "X-Credits-Remaining",
    "X-Credits-Reset",
    "X-Request-Id",
  ]);
  for (const h of Object.values(details.responses["200"].headers) as { $ref: string }[]) {
    assert.ok(deref(h).schema);
  }
  const schemes = doc.components.securitySchemes;
  assert.deepEqual([schemes.apiKey.in, schemes.apiKey.name], ["header", "x-api-key"]);
  assert.equal(schemes.bearer.scheme, "bearer");
  assert.deepEqual([schemes.apiKeyQuery.in, schemes.apiKeyQuery.name], ["query", "api_key"]);
  assert.equal(
    deref(details.responses["401"]).content["application/json"].schema.$ref,
    "#/components/schemas/Error",
  );
  assert.equal(
    details.responses["422"].content["application/json"].schema.$ref,
    "#/components/schemas/ValidationError",
  );
  assert.deepEqual(doc.components.schemas.Error.properties.error.required.sort(), [
    "code",
    "message",
    "status",
  ]);
  for (const ep of ALL_ENDPOINTS) {
    const body = doc.paths[ep.path].get.responses["200"].content["application/json"].schema;
    assert.ok(deref(body).type, `${ep.path} has a named response schema`);
  }
  assert.equal(doc.paths["/v1/"].get.security.length, 0, "the index needs no key");
  // Probe BT: 429 and 503 listed no Retry-After, the watch routes no headers, and a watch
  // creation none of the answers to its body being refused.
  for (const status of ["429", "503"]) {
    assert.ok(deref(details.responses[status]).headers["Retry-After"], status);
    assert.ok(deref(details.responses[status]).headers["X-Credits-Remaining"], status);
  }
  const create = doc.paths["/v1/watches"].post.responses;
  assert.ok(create["201"].headers["X-Credits-Remaining"]);
  for (const status of ["400", "408", "413", "503"]) {
    assert.ok(deref(create[status]).content, status);
  }
  assert.ok(doc.paths["/v1/watches"].get.responses["200"].headers.RateLimit);
  // Probe DN: what each path answers, as the server answers it.
  const statuses = (op: { responses: Record<string, unknown> }) => Object.keys(op.responses).sort();
  assert.deepEqual(statuses(details), [
    "200",
    "400",
    "401",
    "403",
    "404",
    "405",
    "414",
    "422",
    "429",
    "502",
    "503",
    "504",
  ]);
  assert.deepEqual(statuses(doc.paths["/v1/usage"].get), [
    "200",
    "400",
    "401",
    "403",
    "405",
    "414",
    "503",
  ]);
  assert.deepEqual(statuses(doc.paths["/v1/"].get), ["200", "400", "405", "414"]);
  for (const op of [doc.paths["/v1/watches"].get, doc.paths["/v1/watches/{id}"].delete]) {
    assert.ok(op.responses["503"] && op.responses["414"]);
  }
  assert.ok(deref(details.responses["405"]).headers.Allow);
  assert.ok(create["422"].headers["X-Credits-Remaining"] && create["409"].headers.RateLimit);
  const tooLong = await s.get(`/v1/usage?q=${"x".repeat(17_000)}`);
  await tooLong.body?.cancel();
  assert.equal(tooLong.status, 414);
  // Answered before the key is read: the request id alone is listed, as sent (probe EY).
  assert.equal(tooLong.headers.get("x-credits-remaining"), null);
  for (const status of ["400", "414"]) {
    assert.deepEqual(
      Object.keys(deref(details.responses[status]).headers),
      ["X-Request-Id"],
      status,
    );
  }
  const post = await s.get("/v1/", null, { method: "POST" });
  await post.body?.cancel();
  assert.equal(post.status, 405);
});

Deno.test("/docs serves swagger-ui from the package itself, with no inline script and no CDN", async () => {
  await using s = await startServer();
  const r = await s.get("/docs");
  assert.equal(r.status, 200);
  assert.match(r.headers.get("content-type") ?? "", /text\/html/);
  assert.match(r.headers.get("content-security-policy") ?? "", /script-src 'self';/);
  const html = await r.text();
  assert.doesNotMatch(html, /<script>/, "no inline script");
  const srcs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
  assert.ok(srcs.length >= 3);
  for (const src of srcs) {
    assert.ok(src.startsWith("/docs/"), `${src} is served by Shelf`);
    const a = await s.get(src);
    assert.equal(a.status, 200, src);
    assert.ok((await a.text()).length > 0);
  }
  const init = await (await s.get("/docs/init.js")).text();
  assert.match(init, /\/openapi\.json/);
  const bundle = await (await s.get("/docs/swagger-ui-bundle.js")).text();
  assert.ok(bundle.length > 500_000, "the real swagger-ui bundle");
});

Deno.test("GET /v1 without the slash answers the same endpoint index as /v1/", async () => {
  await using s = await startServer();
  const bare = await s.get("/v1");
  assert.equal(bare.status, 200);
  assert.match(bare.headers.get("content-type") ?? "", /application\/json/);
  assert.deepEqual(await bare.json(), await (await s.get("/v1/")).json());
});

Deno.test("the endpoint index lists the watch routes in the products group they are admitted under", async () => {
  await using s = await startServer();
  const body = await (await s.get("/v1/")).json();
  // README "Watches with webhooks": they "need the products group".
  const watches = body.endpoints.filter((e: { path: string }) => e.path.startsWith("/v1/watches"));
  assert.equal(watches.length, 3);
  for (const e of watches) assert.equal(e.group, "products", `${e.method} ${e.path}`);
});

Deno.test("/docs/ with the slash is the docs page; the swagger-ui bundle is served as JavaScript", async () => {
  await using s = await startServer();
  const page = await s.get("/docs/");
  assert.equal(page.status, 200);
  assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
  assert.match(page.headers.get("content-security-policy") ?? "", /script-src 'self';/);
  assert.equal(await page.text(), await (await s.get("/docs")).text());
  for (const js of ["/docs/swagger-ui-bundle.js", "/docs/init.js"]) {
    const r = await s.get(js);
    await r.body?.cancel();
    // Served with nosniff: a browser runs no script sent as text/plain.
    assert.match(r.headers.get("content-type") ?? "", /^text\/javascript/, js);
    assert.equal(r.headers.get("x-content-type-options"), "nosniff", js);
  }
  const css = await s.get("/docs/swagger-ui.css");
  await css.body?.cancel();
  assert.match(css.headers.get("content-type") ?? "", /^text\/css/);
});

/**
 * The OpenAPI document's examples (issue 14.8) are Shelf's real answers to real corpus pages:
 * rebuilt over real HTTP from the demo's archive, they equal schemas/examples.json, each one
 * passes its endpoint's response schema, and /openapi.json serves them under the 200 responses.
 */
import assert from "node:assert/strict";
import committed from "../schemas/examples.json" with { type: "json" };
import { collectExamples, trimmed } from "../demo/examples.ts";
import { startDemo } from "../demo/server.ts";
import { ALL_ENDPOINTS } from "../schemas/endpoints.ts";

Deno.test("OpenAPI examples: still what Shelf answers for their corpus pages, valid, and served", async () => {
  await using demo = await startDemo({ port: 0 });
  const fresh = await collectExamples(demo);
  assert.deepEqual(
    fresh,
    committed,
    "schemas/examples.json is stale: run deno run -A demo/build_examples.ts",
  );
  assert.ok(Object.keys(fresh).length >= 6);
  for (const [name, e] of Object.entries(fresh)) {
    const ep = ALL_ENDPOINTS.find((x) => x.name === name);
    assert.ok(ep, `an endpoint named ${name}`);
    const checked = ep.response.safeParse(e.value);
    assert.ok(checked.success, `${name}'s example fits its schema: ${checked.error?.message}`);
  }

  const doc = await (await fetch(`${demo.origin}/openapi.json`)).json();
  const details =
    doc.paths["/v1/products/details"].get.responses["200"].content["application/json"];
  assert.equal(details.examples.corpus.value.title, "Anthem Of The Peaceful Army");
  assert.equal(details.examples.corpus.value.price.amount, 11.88);
  const unauthorized = doc.components.responses.Unauthorized.content["application/json"].example;
  const real = await (await fetch(`${demo.origin}/v1/products/details?asin=B07H57DNVV`)).json();
  assert.deepEqual(unauthorized, real, "the 401 example is the body a call without a key gets");
});

Deno.test("OpenAPI examples: lists are cut to two items at every depth, inside list items too", () => {
  const answer = {
    results: [
      { asin: "A", badges: ["x", "y", "z"], offers: [{ tags: [1, 2, 3] }, { tags: [4] }, {}] },
      { asin: "B", badges: [] },
      { asin: "C" },
    ],
    grid: [[1, 2, 3], [4, 5, 6], [7]],
    nested: { deeper: { list: [1, 2, 3] } },
    title: "kept",
  };
  assert.deepEqual(trimmed(answer), {
    results: [
      { asin: "A", badges: ["x", "y"], offers: [{ tags: [1, 2] }, { tags: [4] }] },
      { asin: "B", badges: [] },
    ],
    grid: [[1, 2], [4, 5]],
    nested: { deeper: { list: [1, 2] } },
    title: "kept",
  });
});

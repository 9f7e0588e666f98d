/**
 * Category browsing and the category list over real HTTP (issue 16.5): /v1/products/category
 * answers a real category listing with its products, count and department path;
 * /v1/utility/categories answers both the best sellers tree and the search bar's departments.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { DATA_ENDPOINTS } from "../schemas/endpoints.ts";

const schema = (name: string) => DATA_ENDPOINTS.find((e) => e.name === name)!.response;

Deno.test("/v1/products/category: products, count and the department path of a real listing", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.com/s?rh=n:13896617011",
    "category/amazon.com__azza-rh-n16225007011-n13896617011.html",
  );
  const r = await rig.call("/v1/products/category?category_id=13896617011");
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.ok(schema("category").safeParse(r.body).success);
  assert.equal(r.body.count, 33);
  assert.equal(r.body.category_id, "13896617011");
  assert.equal(r.body.total_results, 4000);
  assert.deepEqual(r.body.breadcrumb, [
    { id: "16225007011", name: "Computers" },
    { id: "13896617011", name: "Computers & Tablets" },
  ]);
  const first = (r.body.results as { asin: string; price: { currency: string } }[])[0];
  assert.equal(first.asin, "B0F941B7SL");
  assert.equal(first.price.currency, "EGP", "the currency shown, not the marketplace's");
});

Deno.test("/v1/utility/categories: the best sellers tree and the search bar's departments", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.com/gp/bestsellers",
    "bestsellers/amazon.com__parsy-zgbs-hi.html",
  );
  const r = await rig.call("/v1/utility/categories");
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.ok(schema("categories").safeParse(r.body).success);
  const categories = r.body.categories as { id: string; type: string; node: string | null }[];
  assert.equal(r.body.count, categories.length);
  assert.equal(categories.filter((c) => c.type === "bestsellers_slug").length, 13);
  assert.equal(categories.filter((c) => c.type === "search_alias").length, 27);
  assert.deepEqual(categories.find((c) => c.id === "hi/552684")?.node, "552684");
});

/**
 * The response contract of SPEC.md ("Response shapes"), pinned against the OpenAPI document a real
 * server publishes (/openapi.json, generated from the zod schemas that also check every answer
 * before it is charged, upstream/checked_answer.ts): each field the spec lists is required; it is
 * nullable only where the spec says "nullable" or README's "Choices where the spec is silent" says
 * so (`price` and `image` of listings and the details `price`); and the bounds the spec states hold
 * (a best-seller `rank` is 1..N, Identifiers values are digit strings).
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { ReviewsPage } from "../schemas/pages.ts";

// deno-lint-ignore no-explicit-any
type Schema = any;

let published: Schema | null = null;

/** The server's /openapi.json (read once per test file). */
async function openApi(): Promise<Schema> {
  if (published) return published;
  await using s = await startServer();
  const res = await s.get("/openapi.json");
  assert.equal(res.status, 200);
  published = await res.json();
  return published;
}

function deref(doc: Schema, s: Schema): Schema {
  return s?.$ref ? s.$ref.split("/").slice(1).reduce((n: Schema, k: string) => n[k], doc) : s;
}

/** The schema without its null alternative (`anyOf: [X, null]` or `type: [T, "null"]`). */
function nonNull(doc: Schema, s: Schema): Schema {
  s = deref(doc, s);
  if (Array.isArray(s.anyOf)) {
    const rest = s.anyOf.filter((a: Schema) => deref(doc, a).type !== "null");
    assert.equal(rest.length, 1, JSON.stringify(s));
    return deref(doc, rest[0]);
  }
  return s;
}

function isNullable(doc: Schema, s: Schema): boolean {
  s = deref(doc, s);
  if (Array.isArray(s.anyOf)) return s.anyOf.some((a: Schema) => isNullable(doc, a));
  return s.type === "null" || (Array.isArray(s.type) && s.type.includes("null"));
}

/** The schema at a path of property names, `[]` stepping into an array's items. */
function at(doc: Schema, component: string, path: string[]): Schema {
  let s = deref(doc, doc.components.schemas[component]);
  assert.ok(s, `component ${component}`);
  for (const step of path) {
    s = nonNull(doc, s);
    s = step === "[]" ? deref(doc, s.items) : deref(doc, s.properties?.[step]);
    assert.ok(s, `${component} ${path.join(".")}: no ${step}`);
  }
  return nonNull(doc, s);
}

/**
 * An object of the spec: every field listed is required; `nullable` fields, and only those, may be
 * null.
 */
function pinObject(
  doc: Schema,
  where: string,
  obj: Schema,
  fields: string[],
  nullable: string[] = [],
): void {
  assert.equal(obj.type, "object", where);
  for (const f of fields) {
    assert.ok(obj.required?.includes(f), `${where}: ${f} is required by SPEC.md`);
    assert.ok(obj.properties?.[f], `${where}: ${f} is published`);
    assert.equal(
      isNullable(doc, obj.properties[f]),
      nullable.includes(f),
      `${where}: ${f} ${nullable.includes(f) ? "is" : "is not"} nullable`,
    );
  }
}

const PRICE = ["amount", "display", "currency"];
const PRODUCT_ITEM = [
  "url",
  "asin",
  "badge",
  "image",
  "price",
  "prime",
  "title",
  "rating",
  "delivery",
  "position",
  "sponsored",
  "reviews_count",
  "bought_past_month",
];
const REVIEW = [
  "id",
  "url",
  "body",
  "date",
  "title",
  "author",
  "images",
  "rating",
  "country",
  "variant",
  "author_id",
  "helpful_votes",
  "verified_purchase",
];
const SINGLE_REVIEW = [
  "id",
  "body",
  "date",
  "title",
  "images",
  "rating",
  "country",
  "variant",
  "helpful_votes",
  "verified_purchase",
];

Deno.test("/openapi.json: every Price requires amount, display and currency, none of them nullable", async () => {
  const doc = await openApi();
  const prices: [string, string[], boolean][] = [
    ["SearchResponse", ["results", "[]", "price"], true],
    ["CategoryResponse", ["results", "[]", "price"], true],
    ["SellerProductsResponse", ["results", "[]", "price"], true],
    ["GtinToAsinResponse", ["match", "price"], true],
    ["DetailsResponse", ["price"], true],
    ["DealProductsResponse", ["results", "[]", "price"], true],
    ["OffersResponse", ["offers", "[]", "price"], false],
    ["BestsellersResponse", ["results", "[]", "price"], false],
    ["DealsResponse", ["results", "[]", "price"], false],
  ];
  for (const [component, path, withList] of prices) {
    const where = `${component}.${path.join(".")}`;
    const price = at(doc, component, path);
    pinObject(doc, where, price, withList ? [...PRICE, "list_price"] : PRICE, ["list_price"]);
    assert.equal(price.properties.currency.type, "string", where);
    if (!withList) assert.equal(price.properties.list_price, undefined, where);
  }
});

Deno.test("/openapi.json: a best-seller item has every spec field, and its rank is 1..N", async () => {
  const doc = await openApi();
  const item = at(doc, "BestsellersResponse", ["results", "[]"]);
  pinObject(
    doc,
    "best-seller item",
    item,
    ["url", "asin", "rank", "image", "price", "title", "rating", "reviews_count"],
    ["image", "price"],
  );
  assert.equal(item.properties.rank.type, "integer");
  assert.equal(item.properties.rank.minimum, 1, "rank counts from 1");
  // The ranks a product page shows (bestsellers_rank) count from 1 too.
  assert.equal(at(doc, "DetailsResponse", ["bestsellers_rank", "[]", "rank"]).minimum, 1);
});

Deno.test("/openapi.json: product details have every spec field, in_stock a boolean, each Image a thumbnail", async () => {
  const doc = await openApi();
  const details = at(doc, "DetailsResponse", []);
  pinObject(doc, "details", details, [
    "url",
    "asin",
    "brand",
    "price",
    "title",
    "images",
    "rating",
    "in_stock",
    "merchant",
    "variations",
    "availability",
    "product_facts",
    "reviews_count",
    "feature_bullets",
  ], ["price"]);
  assert.equal(details.properties.in_stock.type, "boolean");
  const image = at(doc, "DetailsResponse", ["images", "[]"]);
  pinObject(doc, "Image", image, ["url", "width", "height", "thumbnail"], ["width", "height"]);
  assert.equal(image.properties.thumbnail.type, "string");
  pinObject(doc, "variations", at(doc, "DetailsResponse", ["variations"]), ["parent_asin"]);
});

Deno.test("/openapi.json: reviews have every spec field, each rating a number that is never null", async () => {
  const doc = await openApi();
  pinObject(doc, "Review (in list)", at(doc, "ReviewsResponse", ["reviews", "[]"]), REVIEW, [
    "author",
    "author_id",
  ]);
  pinObject(
    doc,
    "Review summary",
    at(doc, "ReviewsResponse", ["summary"]),
    ["rating", "breakdown", "total_ratings"],
  );
  pinObject(doc, "Review (single)", at(doc, "ReviewDetailsResponse", ["review"]), SINGLE_REVIEW);
  for (
    const [component, path] of [
      ["ReviewsResponse", ["reviews", "[]", "rating"]],
      ["ReviewDetailsResponse", ["review", "rating"]],
      ["ReviewsResponse", ["summary", "rating"]],
    ] as const
  ) {
    const rating = deref(doc, at(doc, component, [...path]));
    assert.equal(rating.type, "number", `${component}.${path.join(".")}`);
  }
  pinObject(
    doc,
    "reviews",
    at(doc, "ReviewsResponse", []),
    [
      "url",
      "asin",
      "note",
      "page",
      "count",
      "reviews",
      "summary",
      "authenticated",
      "has_next_page",
      "filters_applied",
    ],
    ["note"],
  );
});

Deno.test("/openapi.json: product items of search, category, seller products and a GTIN match have every spec field", async () => {
  const doc = await openApi();
  for (
    const [component, path] of [
      ["SearchResponse", ["results", "[]"]],
      ["CategoryResponse", ["results", "[]"]],
      ["SellerProductsResponse", ["results", "[]"]],
      ["GtinToAsinResponse", ["match"]],
    ] as const
  ) {
    pinObject(doc, `${component} item`, at(doc, component, [...path]), PRODUCT_ITEM, [
      "badge",
      "image",
      "price",
      "bought_past_month",
    ]);
  }
});

Deno.test("/openapi.json: Identifiers (ASIN to GTIN) values are digit strings", async () => {
  const doc = await openApi();
  pinObject(
    doc,
    "asin-to-gtin",
    at(doc, "AsinToGtinResponse", []),
    ["asin", "gtin", "note", "identifiers", "marketplace"],
    ["note"],
  );
  const values = at(doc, "AsinToGtinResponse", ["identifiers"]).additionalProperties;
  assert.equal(values.type, "string");
  assert.ok(values.pattern, "identifier values carry a pattern");
  const pattern = new RegExp(values.pattern);
  for (const ok of ["012345678905", "4006381333931"]) assert.ok(pattern.test(ok), ok);
  for (const bad of ["", "01234a678905", "B07H57DNVV", "0123 4567", "../x"]) {
    assert.ok(!pattern.test(bad), `${JSON.stringify(bad)} is no digit string`);
  }
});

Deno.test("a reviews page's stated page number is 1 or more, or null (schemas/pages.ts ReviewsPage)", () => {
  // Not published (the route answers `page`), so pinned on the parser's schema itself.
  const pageNumber = ReviewsPage.shape.page_number;
  for (const ok of [1, 2, 400, null]) assert.ok(pageNumber.safeParse(ok).success, String(ok));
  for (const bad of [0, -1, 1.5]) assert.ok(!pageNumber.safeParse(bad).success, String(bad));
});

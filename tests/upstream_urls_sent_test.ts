/**
 * The exact upstream URL each endpoint asks for, read from the URL builders (upstream/urls.ts):
 * the query's encoding, the refinements, the AJAX and POST parameters and the paths that the
 * fake marketplace of the e2e tests does not tell apart.
 */
import assert from "node:assert/strict";
import {
  addressChangeUrl,
  categoryUrl,
  dealUrl,
  endpointUrl,
  offersUrl,
  productPageUrl,
  promotionUrl,
  searchUrl,
} from "../upstream/urls.ts";

Deno.test("search: a multi-word query reaches Amazon encoded once (k=usb+c), never double-encoded", () => {
  const url = new URL(endpointUrl("search", { query: "usb c", marketplace: "US", page: 1 }));
  assert.equal(url.searchParams.get("k"), "usb c");
  assert.ok(/[?&]k=usb(\+|%20)c(&|$)/.test(url.search), url.href);
  assert.equal(
    searchUrl("US", { query: "usb c" }, 1),
    "https://www.amazon.com/s?k=usb+c",
  );
  const odd = new URL(searchUrl("DE", { query: "50% off & more" }, 1));
  assert.equal(odd.searchParams.get("k"), "50% off & more");
});

Deno.test("search: the price refinement alone, with no trailing comma, where Amazon has no Prime refinement", () => {
  const de = new URL(
    endpointUrl("search", {
      query: "x",
      prime_only: true,
      min_price: 10,
      max_price: 50,
      marketplace: "DE",
    }),
  );
  assert.equal(de.host, "www.amazon.de");
  assert.equal(de.searchParams.get("rh"), "p_36:1000-5000");
  // On amazon.com the Prime refinement joins it.
  const us = new URL(
    endpointUrl("search", { query: "x", prime_only: true, min_price: 10, max_price: 50 }),
  );
  assert.equal(us.searchParams.get("rh"), "p_36:1000-5000,p_85:2470955011");
});

Deno.test("category: the sort reaches Amazon on page 1 as on further pages", () => {
  const first = new URL(
    endpointUrl("category", { category_id: "172282", sort: "price-asc-rank", page: 1 }),
  );
  assert.equal(first.searchParams.get("rh"), "n:172282");
  assert.equal(first.searchParams.get("s"), "price-asc-rank");
  assert.equal(first.searchParams.get("page"), null);
  const second = new URL(
    endpointUrl("category", { category_id: "172282", sort: "price-asc-rank", page: 2 }),
  );
  assert.equal(second.searchParams.get("s"), "price-asc-rank");
  assert.equal(second.searchParams.get("page"), "2");
  // Without a sort, no s= at all.
  assert.equal(
    endpointUrl("category", { category_id: "172282" }),
    "https://www.amazon.com/s?rh=n%3A172282",
  );
});

Deno.test("category: only an all-digits id is a browse node (rh=n:); a slug with digits is a search alias (i=)", () => {
  const slug = new URL(categoryUrl("US", "kindle-2", 1));
  assert.equal(slug.searchParams.get("i"), "kindle-2");
  assert.equal(slug.searchParams.get("rh"), null);
  const node = new URL(categoryUrl("US", "2407749011", 1));
  assert.equal(node.searchParams.get("rh"), "n:2407749011");
  assert.equal(node.searchParams.get("i"), null);
});

Deno.test("product page: /dp/ASIN exactly, with no trailing slash", () => {
  assert.equal(productPageUrl("US", "B07H57DNVV"), "https://www.amazon.com/dp/B07H57DNVV");
  assert.equal(
    endpointUrl("details", { asin: "B07H57DNVV", marketplace: "DE" }),
    "https://www.amazon.de/dp/B07H57DNVV",
  );
});

Deno.test("offers: the all-offers AJAX fragment is asked with pc=dp and experienceId=aodAjaxMain", () => {
  const url = new URL(offersUrl("US", "B07H57DNVV"));
  assert.equal(url.pathname, "/gp/product/ajax/");
  assert.equal(url.searchParams.get("asin"), "B07H57DNVV");
  assert.equal(url.searchParams.get("pc"), "dp");
  assert.equal(url.searchParams.get("experienceId"), "aodAjaxMain");
});

Deno.test("delivery location: the address change is posted with actionSource=glow", () => {
  const url = new URL(addressChangeUrl("US"));
  assert.equal(url.pathname, "/portal-migration/hz/glow/address-change");
  assert.equal(url.searchParams.get("actionSource"), "glow");
});

Deno.test("deal products and promotions: /deal/ID and /promotion/psp/ID", () => {
  assert.equal(dealUrl("US", "3c8a1b2f"), "https://www.amazon.com/deal/3c8a1b2f");
  assert.equal(
    endpointUrl("deal_products", { deal_id: "3c8a1b2f" }),
    "https://www.amazon.com/deal/3c8a1b2f",
  );
  assert.equal(
    promotionUrl("US", "A2QT3OVMA4RHZK"),
    "https://www.amazon.com/promotion/psp/A2QT3OVMA4RHZK",
  );
  assert.equal(
    endpointUrl("promotion", { promo_id: "A2QT3OVMA4RHZK", marketplace: "DE" }),
    "https://www.amazon.de/promotion/psp/A2QT3OVMA4RHZK",
  );
});

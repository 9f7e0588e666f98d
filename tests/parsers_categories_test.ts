import assert from "node:assert/strict";
import { parseCategories } from "../parsers/categories.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { CategoriesPage } from "../schemas/pages.ts";
import { fixture, fixtureMarketplace, fixtureNames } from "./fixture.ts";
import { assertRobust } from "./robustness.ts";

async function parsed(name: string) {
  return CategoriesPage.parse(
    parseCategories(await fixture(name), { marketplace: fixtureMarketplace(name) }),
  );
}

Deno.test("parseCategories() lists every department of the amazon.in landing page's tree", async () => {
  const { categories } = await parsed("bestsellers/amazon.in__santapan-gp-bestsellers.html");
  assert.equal(categories.length, 31);
  assert.deepEqual(categories[0], {
    id: "boost",
    url: "https://www.amazon.in/gp/bestsellers/boost",
    name: "Amazon Launchpad",
    type: "bestsellers_slug",
  });
  const electronics = categories.find((c) => c.id === "electronics");
  assert.deepEqual(electronics, {
    id: "electronics",
    url: "https://www.amazon.in/gp/bestsellers/electronics",
    name: "Electronics",
    type: "bestsellers_slug",
  });
  // "Any Department" is the selected root and has no slug of its own.
  assert.ok(!categories.some((c) => c.name === "Any Department"));
});

Deno.test("parseCategories() names sub-categories of a department by department/node", async () => {
  const com = await parsed("bestsellers/amazon.com__parsy-zgbs-hi.html");
  assert.equal(com.categories.length, 13);
  assert.deepEqual(com.categories[0], {
    id: "hi/552684",
    url:
      "https://www.amazon.com/Best-Sellers-Tools-Home-Improvement-Air-Powered-Tools/zgbs/hi/552684",
    name: "Air Tools",
    type: "bestsellers_slug",
  });
  assert.equal(com.categories.at(-1)?.name, "Storage & Home Organization");
  const de = await parsed("bestsellers/amazon.de__parsy-ce-de.html");
  assert.equal(de.categories.length, 18);
  assert.equal(de.categories[0].id, "ce-de/1071738");
  assert.equal(de.categories[0].name, "Auto- & Fahrzeugelektronik");
  const ae = await parsed("bestsellers/amazon.ae__aparser-appliances.html");
  assert.equal(ae.categories.length, 11);
  assert.equal(ae.categories[0].url, "https://www.amazon.ae/gp/bestsellers/appliances/15174960031");
});

Deno.test("parseCategories() refuses a page without a department tree", async () => {
  const search = await fixture("search/amazon.com__pavel-ipad-pro.html");
  assert.throws(() => parseCategories(search, { marketplace: "US" }), ParseError);
});

Deno.test("parseCategories() gives a valid page or ParseError on truncated and junk input", async () => {
  for (const name of fixtureNames("bestsellers")) {
    assertRobust(parseCategories, CategoriesPage, await fixture(name), fixtureMarketplace(name));
  }
});

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

/** The best sellers tree's part of a page's categories (the dropdown's follow it). */
async function tree(name: string) {
  const { categories } = await parsed(name);
  return { categories: categories.filter((c) => c.type === "bestsellers_slug") };
}

Deno.test("parseCategories() lists every department of the amazon.in landing page's tree", async () => {
  const { categories } = await tree("bestsellers/amazon.in__santapan-gp-bestsellers.html");
  assert.equal(categories.length, 31);
  assert.deepEqual(categories[0], {
    id: "boost",
    url: "https://www.amazon.in/gp/bestsellers/boost",
    name: "Amazon Launchpad",
    type: "bestsellers_slug",
    node: null,
  });
  const electronics = categories.find((c) => c.id === "electronics");
  assert.deepEqual(electronics, {
    id: "electronics",
    url: "https://www.amazon.in/gp/bestsellers/electronics",
    name: "Electronics",
    type: "bestsellers_slug",
    node: null,
  });
  // "Any Department" is the selected root and has no slug of its own.
  assert.ok(!categories.some((c) => c.name === "Any Department"));
});

Deno.test("parseCategories() names sub-categories of a department by department/node", async () => {
  const com = await tree("bestsellers/amazon.com__parsy-zgbs-hi.html");
  assert.equal(com.categories.length, 13);
  assert.deepEqual(com.categories[0], {
    id: "hi/552684",
    url:
      "https://www.amazon.com/Best-Sellers-Tools-Home-Improvement-Air-Powered-Tools/zgbs/hi/552684",
    name: "Air Tools",
    type: "bestsellers_slug",
    node: "552684",
  });
  assert.equal(com.categories.at(-1)?.name, "Storage & Home Organization");
  const de = await tree("bestsellers/amazon.de__parsy-ce-de.html");
  assert.equal(de.categories.length, 18);
  assert.equal(de.categories[0].id, "ce-de/1071738");
  assert.equal(de.categories[0].name, "Auto- & Fahrzeugelektronik");
  const ae = await tree("bestsellers/amazon.ae__aparser-appliances.html");
  assert.equal(ae.categories.length, 11);
  assert.equal(ae.categories[0].url, "https://www.amazon.ae/gp/bestsellers/appliances/15174960031");
});

// Read off the amazon.ca home page: #searchDropdownBox holds 41 options, "All Departments"
// (search-alias=aps) first, then "Alexa Skills" (alexa-skills) … "Video Games" (videogames);
// "Apps &amp; Games" is search-alias=mobile-apps. No option names a browse node.
Deno.test("parseCategories() lists the search bar's departments with their search aliases", async () => {
  const { categories } = await parsed(
    "categories/amazon.ca__amzorders-homepage-searchdropdown.html",
  );
  assert.equal(categories.length, 40);
  assert.ok(categories.every((c) => c.type === "search_alias" && c.node === null));
  assert.deepEqual(categories[0], {
    id: "alexa-skills",
    url: "https://www.amazon.ca/s?i=alexa-skills",
    name: "Alexa Skills",
    type: "search_alias",
    node: null,
  });
  assert.equal(categories.at(-1)?.id, "videogames");
  assert.equal(categories.find((c) => c.id === "mobile-apps")?.name, "Apps & Games");
  assert.ok(!categories.some((c) => c.id === "aps"), "All Departments is not a department");
  // A best sellers page has both: its tree, then the 27 departments of its dropdown.
  const com = await parsed("bestsellers/amazon.com__parsy-zgbs-hi.html");
  const aliases = com.categories.filter((c) => c.type === "search_alias");
  assert.equal(aliases.length, 27);
  assert.deepEqual(aliases[0].name, "Arts & Crafts");
  assert.equal(aliases[0].id, "arts-crafts-intl-ship");
});

Deno.test("parseCategories() refuses a page with neither a department tree nor a dropdown", async () => {
  const fragment = await fixture("offers/amazon.com__wk-aod-main-B0BN72FYFG.html");
  assert.throws(() => parseCategories(fragment, { marketplace: "US" }), ParseError);
});

Deno.test("parseCategories() gives a valid page or ParseError on truncated and junk input", async () => {
  for (const name of fixtureNames("bestsellers")) {
    assertRobust(parseCategories, CategoriesPage, await fixture(name), fixtureMarketplace(name));
  }
});

Deno.test("parseCategories() names a tree category only by a slug of letters, digits and dashes to its end", async () => {
  // The amazon.in landing page's tree links Electronics as <a href="/gp/bestsellers/electronics">.
  const name = "bestsellers/amazon.in__santapan-gp-bestsellers.html";
  const html = await fixture(name);
  const link = '<a href="/gp/bestsellers/electronics">Electronics';
  assert.ok(html.includes(link));
  for (const bad of ["electronics%22x", "electronics.x", "electronics/12/x", "electronics/abc"]) {
    const page = html.replace(link, `<a href="/gp/bestsellers/${bad}/ref=zg">Electronics`);
    const categories = parseCategories(page, { marketplace: "IN" }).categories
      .filter((c) => c.type === "bestsellers_slug");
    assert.ok(!categories.some((c) => c.name === "Electronics"), bad);
    assert.ok(categories.every((c) => /^[a-z0-9-]+(?:\/\d+)?$/.test(c.id)), bad);
  }
  const good = html.replace(
    link,
    '<a href="/gp/bestsellers/electronics/1389401031/ref=zg">Electronics',
  );
  const { categories } = parseCategories(good, { marketplace: "IN" });
  const electronics = categories.find((c) =>
    c.type === "bestsellers_slug" && c.name === "Electronics"
  );
  assert.equal(electronics?.id, "electronics/1389401031");
});

Deno.test("parseCategories() answers a dropdown option's node only when it is digits", async () => {
  // The amazon.ca home page's dropdown lists Books as <option value="search-alias=stripbooks">.
  const name = "categories/amazon.ca__amzorders-homepage-searchdropdown.html";
  const html = await fixture(name);
  const option = 'value="search-alias=stripbooks"';
  assert.ok(html.includes(option));
  const books = (node: string) => {
    const page = html.replace(option, `value="search-alias=stripbooks&amp;node=${node}"`);
    const { categories } = parseCategories(page, { marketplace: "CA" });
    return categories.find((c) => c.id === "stripbooks");
  };
  for (const node of ["abc", "12a", "-1", "1 2"]) {
    assert.deepEqual(books(node), {
      id: "stripbooks",
      url: "https://www.amazon.ca/s?i=stripbooks",
      name: "Books",
      type: "search_alias",
      node: null,
    }, node);
  }
  assert.equal(books("916520")?.node, "916520");
  assert.equal(books("916520")?.url, "https://www.amazon.ca/s?i=stripbooks&rh=n%3A916520");
});

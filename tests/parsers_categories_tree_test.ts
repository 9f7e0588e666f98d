// Which links of a best sellers page's department tree, and which options of the search bar's
// dropdown, are categories. The real pages show none of these cases, so each one changes a corpus
// page in one named place: the amazon.com Tools & Home Improvement best sellers page (its tree
// links Air Tools first, then 12 more sub-categories) and the amazon.ca home page's dropdown.
import assert from "node:assert/strict";
import { parseCategories } from "../parsers/categories.ts";
import { CategoriesPage } from "../schemas/pages.ts";
import { fixture } from "./fixture.ts";

const HI = "bestsellers/amazon.com__parsy-zgbs-hi.html";
const AIR_TOOLS_HREF =
  '<a href="/Best-Sellers-Tools-Home-Improvement-Air-Powered-Tools/zgbs/hi/552684/ref=zg_bs_nav_hi_1">';
const AIR_TOOLS = `${AIR_TOOLS_HREF}Air Tools</a>`;
// The tree's first sub-category item, from its opening tag to its close.
const AIR_TOOLS_ITEM =
  '<div role="treeitem" class="_p13n-zg-nav-tree-all_style_zg-browse-item__1rdKf _p13n-zg-nav-tree-all_style_zg-browse-height-large__1z5B8">' +
  AIR_TOOLS + "</div>";

async function hiPage(from: string, to: string): Promise<string> {
  const html = await fixture(HI);
  assert.ok(html.includes(from), `the page holds ${from}`);
  return html.replace(from, to);
}

/** The tree's categories (the dropdown's follow them). */
function treeOf(html: string) {
  return CategoriesPage.parse(parseCategories(html, { marketplace: "US" })).categories
    .filter((c) => c.type === "bestsellers_slug");
}

Deno.test("a tree category's id is always one /v1/bestsellers takes back: at most 80 characters, a node of at most 20 digits", async () => {
  // The category parameter's rule (schemas/endpoints.ts); a longer id could not be asked for.
  const ids = async (slug: string) =>
    treeOf(
      await hiPage(AIR_TOOLS_HREF, `<a href="/Best-Sellers-x/zgbs/${slug}/ref=zg_bs_nav_hi_1">`),
    )
      .filter((c) => c.name === "Air Tools").map((c) => c.id);
  assert.deepEqual(await ids("a".repeat(80)), ["a".repeat(80)]);
  assert.deepEqual(await ids("a".repeat(81)), []);
  assert.deepEqual(await ids("hi/" + "1".repeat(20)), ["hi/" + "1".repeat(20)]);
  assert.deepEqual(await ids("hi/" + "1".repeat(21)), []);
});

Deno.test("a tree category linked twice is listed once", async () => {
  const again = AIR_TOOLS_ITEM.replace("ref=zg_bs_nav_hi_1", "ref=zg_bs_nav_hi_2");
  const categories = treeOf(await hiPage(AIR_TOOLS_ITEM, AIR_TOOLS_ITEM + again));
  assert.equal(categories.length, 13);
  assert.deepEqual(categories.filter((c) => c.id === "hi/552684").map((c) => c.name), [
    "Air Tools",
  ]);
});

Deno.test("a search bar department listed twice is listed once, under its first name", async () => {
  const name = "categories/amazon.ca__amzorders-homepage-searchdropdown.html";
  const html = await fixture(name);
  const books = '<option value="search-alias=stripbooks">Books</option>';
  assert.ok(html.includes(books));
  const page = html.replace(
    books,
    books + '<option value="search-alias=stripbooks">Books &amp; Magazines</option>',
  );
  const { categories } = CategoriesPage.parse(parseCategories(page, { marketplace: "CA" }));
  assert.equal(categories.length, 40);
  assert.deepEqual(categories.filter((c) => c.id === "stripbooks").map((c) => c.name), ["Books"]);
});

Deno.test("a tree category whose slug is a browse node alone has that node", async () => {
  const page = await hiPage(
    AIR_TOOLS_HREF,
    '<a href="/Best-Sellers-Air-Tools/zgbs/552684/ref=zg_bs_nav_hi_1">',
  );
  const air = treeOf(page).find((c) => c.name === "Air Tools");
  assert.equal(air?.id, "552684");
  assert.equal(air?.node, "552684");
});

Deno.test("a tree after the end of the best sellers region is not the department tree", async () => {
  // Only the part of the page up to <!-- EndZeitgeist --> is the best sellers feature.
  const end = "<!-- EndZeitgeist -->";
  const page = await hiPage(
    end,
    end +
      '<div role="tree"><div role="treeitem"><a href="/Best-Sellers-Toys/zgbs/toys-and-games/ref=zg_bs_nav_0">Toys &amp; Games</a></div></div>',
  );
  const ids = treeOf(page).map((c) => c.id);
  assert.equal(ids.length, 13);
  assert.ok(!ids.includes("toys-and-games"));
});

Deno.test("a tree link with no text (an image alone) is no category", async () => {
  const page = await hiPage(
    AIR_TOOLS,
    `${AIR_TOOLS_HREF}<img src="https://m.media-amazon.com/images/G/01/air.png"></a>`,
  );
  const categories = treeOf(page);
  assert.equal(categories.length, 12);
  assert.ok(categories.every((c) => c.name !== "" && c.id !== "hi/552684"));
});

Deno.test("a link inside the tree but outside any tree item is no category", async () => {
  const page = await hiPage(
    AIR_TOOLS_ITEM,
    '<a href="/Best-Sellers-Toys/zgbs/toys-and-games/ref=zg_bs_see_more">See more</a>' +
      AIR_TOOLS_ITEM,
  );
  const ids = treeOf(page).map((c) => c.id);
  assert.equal(ids.length, 13);
  assert.ok(!ids.includes("toys-and-games"));
});

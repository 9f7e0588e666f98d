import assert from "node:assert/strict";
import { parseBestsellers } from "../parsers/bestsellers.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { BestsellersPage } from "../schemas/pages.ts";
import { fixture, fixtureMarketplace, fixtureNames } from "./fixture.ts";
import { assertRobust } from "./robustness.ts";

async function parsed(name: string) {
  return BestsellersPage.parse(
    parseBestsellers(await fixture(name), { marketplace: fixtureMarketplace(name) }),
  );
}

Deno.test("parseBestsellers() reads every corpus best sellers page into the schema", async () => {
  const names = fixtureNames("bestsellers");
  assert.equal(names.length, 4);
  for (const name of names) {
    const page = await parsed(name);
    assert.ok(page.results.length > 0, name);
    for (const item of page.results) {
      assert.match(item.asin, /^[A-Z0-9]{10}$/, name);
      assert.ok(item.url.endsWith(`/dp/${item.asin}`), name);
      assert.ok(item.title.length > 0, `${name} ${item.asin}`);
      assert.ok(item.image?.startsWith("https://"), `${name} ${item.asin}`);
    }
  }
});

// MANIFEST: "asserts title 'Best Sellers in Tools & Home Improvement', 30 products". The grid
// lists 50 ranks in data-client-recs-list but renders only the first 30; the rest load by script.
Deno.test("parseBestsellers() reads the amazon.com zgbs/hi grid", async () => {
  const page = await parsed("bestsellers/amazon.com__parsy-zgbs-hi.html");
  assert.equal(page.category, "Best Sellers in Tools & Home Improvement");
  assert.equal(page.page, 1);
  assert.equal(page.results.length, 30);
  assert.deepEqual(page.results.map((r) => r.rank), Array.from({ length: 30 }, (_, i) => i + 1));
  assert.deepEqual(page.results[0], {
    url: "https://www.amazon.com/dp/B08N5NQ869",
    asin: "B08N5NQ869",
    rank: 1,
    image: "https://images-na.ssl-images-amazon.com/images/I/71vtXgJBagL._AC_UL300_SR300,200_.jpg",
    price: { amount: 59.99, display: "$59.99", currency: "USD" },
    title:
      "Ring Video Doorbell - 1080p HD video, improved motion detection, easy installation – Satin Nickel",
    rating: 4.6,
    reviews_count: 132223,
  });
  assert.equal(page.results[1].asin, "B089DR29T6");
  assert.equal(page.results[1].price?.amount, 12.99);
  assert.equal(page.results[1].rating, 4.7);
  assert.equal(page.results[1].reviews_count, 527720);
  assert.equal(page.results[29].asin, "B07WNRN9WQ");
  assert.equal(page.results[29].rank, 30);
});

// MANIFEST: "asserts title 'Bestseller in Elektronik & Foto', 30 products".
Deno.test("parseBestsellers() reads the amazon.de grid with German prices and ratings", async () => {
  const page = await parsed("bestsellers/amazon.de__parsy-ce-de.html");
  assert.equal(page.category, "Bestseller in Elektronik & Foto");
  assert.equal(page.results.length, 30);
  const [first, second] = page.results;
  assert.equal(first.asin, "B09B8X9RGM");
  assert.equal(
    first.title,
    "Der neue Echo Dot (5. Generation, 2022) | Smarter Lautsprecher mit Alexa | Anthrazit",
  );
  assert.deepEqual(first.price, { amount: 24.99, display: "24,99 €", currency: "EUR" });
  assert.equal(first.rating, 4.4);
  assert.equal(first.reviews_count, 558);
  assert.equal(second.asin, "B08C1KN5J2");
  assert.equal(second.rank, 2);
  assert.equal(second.price?.amount, 19.99);
  // One ranked grid: no item names a list of its own.
  assert.ok(page.results.every((r) => r.list_title === undefined));
  // The page writes "(2.&nbsp;Generation) " then seven zero-width spaces before "mit".
  const airpods = page.results.find((r) => r.title.startsWith("Apple AirPods Pro"))!;
  assert.equal(airpods.title, "Apple AirPods Pro (2. Generation) mit MagSafe Ladecase (2022)");
});

Deno.test("parseBestsellers() reads the amazon.ae grid, AED prices and an unrated item", async () => {
  const page = await parsed("bestsellers/amazon.ae__aparser-appliances.html");
  // The page has two h1: the site banner "Amazon Best Sellers" and the list's own heading.
  assert.equal(page.category, "Best Sellers in Appliances");
  assert.equal(page.results.length, 30);
  assert.equal(page.results[0].asin, "B0C6DVQYLM");
  assert.deepEqual(page.results[0].price, {
    amount: 897.65,
    display: "AED 897.65",
    currency: "AED",
  });
  assert.equal(page.results[0].rating, 4);
  assert.equal(page.results[0].reviews_count, 110);
  assert.equal(page.results[3].price?.amount, 1132);
  // Rank 28 shows no stars and no rating count on the page.
  assert.equal(page.results[27].rating, 0);
  assert.equal(page.results[27].reviews_count, 0);
});

// No MANIFEST values. The all-departments landing page shows six department carousels of six
// items each; ranks restart at #1 in each, and no card shows a price (captured without a zip).
Deno.test("parseBestsellers() reads the amazon.in landing page's department carousels", async () => {
  const page = await parsed("bestsellers/amazon.in__santapan-gp-bestsellers.html");
  assert.equal(page.category, "Bestsellers");
  assert.equal(page.results.length, 36);
  assert.deepEqual(page.results.slice(0, 7).map((r) => r.rank), [1, 2, 3, 4, 5, 6, 1]);
  // Each rank belongs to its carousel, named by the heading above it (h2.a-carousel-heading).
  const lists = [...new Set(page.results.map((r) => r.list_title))];
  assert.deepEqual(lists, [
    "Bestsellers in Musical Instruments",
    "Bestsellers in Car & Motorbike",
    "Bestsellers in Clothing & Accessories",
    "Bestsellers in Beauty",
    "Bestsellers in Toys & Games",
    "Bestsellers in Industrial & Scientific",
  ]);
  for (const list of lists) {
    const ranks = page.results.filter((r) => r.list_title === list).map((r) => r.rank);
    assert.deepEqual(ranks, [1, 2, 3, 4, 5, 6], list);
  }
  assert.equal(page.results[0].asin, "B08SCG35MG");
  assert.equal(page.results[0].rating, 3.9);
  assert.equal(page.results[0].reviews_count, 18665);
  assert.ok(page.results.every((r) => r.price === null));
});

Deno.test("parseBestsellers() refuses pages that are not best sellers pages", async () => {
  const product = await fixture("product/amazon.com__webapis-B004OA758C.html");
  assert.throws(() => parseBestsellers(product, { marketplace: "US" }), ParseError);
  assert.throws(() => parseBestsellers("", { marketplace: "US" }), ParseError);
  assert.throws(() => parseBestsellers("<html></html>", { marketplace: "XX" }), ParseError);
});

Deno.test("parseBestsellers() gives a valid page or ParseError on truncated and junk input", async () => {
  for (const name of fixtureNames("bestsellers")) {
    assertRobust(parseBestsellers, BestsellersPage, await fixture(name), fixtureMarketplace(name));
  }
});

Deno.test("parseBestsellers() cuts a carousel heading each item repeats: a long one over many cards stays small", async () => {
  const html = await fixture("bestsellers/amazon.in__santapan-gp-bestsellers.html");
  const long = html.replace(
    "Bestsellers in Musical Instruments</h2>",
    `Bestsellers in ${"x".repeat(500_000)}</h2>`,
  );
  const page = parseBestsellers(long, { marketplace: "IN" });
  assert.equal(page.results[0].list_title?.length, 200);
  assert.ok(JSON.stringify(page).length < 100_000);
});

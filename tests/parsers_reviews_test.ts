import assert from "node:assert/strict";
import { parseReviews, parseReviewSummary, splitDateLine } from "../parsers/reviews.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { ReviewsPage } from "../schemas/pages.ts";
import { ReviewSummary } from "../schemas/resources.ts";
import { fixture, fixtureMarketplace, fixtureNames } from "./fixture.ts";
import { assertRobust } from "./robustness.ts";
import { startRig } from "./upstream_harness.ts";

async function page(name: string) {
  const html = await fixture(`reviews/${name}`);
  return ReviewsPage.parse(
    parseReviews(html, { marketplace: fixtureMarketplace(`reviews/${name}`) }),
  );
}

Deno.test("parseReviews() reads a 2024 amazon.com reviews page with variants and images", async () => {
  const p = await page("amazon.com__jachet-B01IPHVFUI.html");
  assert.equal(p.asin, "B01IPHVFUI");
  assert.equal(p.reviews.length, 10);
  assert.deepEqual(p.summary, {
    rating: 4.6,
    breakdown: { "5": 80, "4": 12, "3": 4, "2": 2, "1": 3 },
    total_ratings: 25181,
  });
  assert.equal(p.has_next_page, true);
  const [first] = p.reviews;
  assert.equal(first.id, "R2IWYAXSM40X0F");
  assert.equal(first.url, "https://www.amazon.com/gp/customer-reviews/R2IWYAXSM40X0F");
  assert.equal(first.title, "Randomly cuts off");
  assert.equal(first.rating, 3);
  assert.equal(first.country, "the United States");
  assert.equal(first.date, "January 6, 2024");
  assert.equal(first.author, "Paxton");
  assert.equal(first.author_id, "amzn1.account.AG77SLKLMKE2J36KC75YGQIIL5TQ");
  assert.equal(first.variant, "Size: 27-Inch | Style: Curved | Set: DP/HDMI 3-Yr Warranty");
  assert.equal(first.verified_purchase, true);
  assert.equal(first.helpful_votes, 0);
  assert.deepEqual(first.images, []);
  assert.ok(first.body.startsWith("This is a pretty standard monitor"));
  assert.ok(first.body.endsWith("it probably has blanked 20-30 times."));
  assert.deepEqual(p.reviews[2].images, [
    "https://m.media-amazon.com/images/I/71IgvreoZtL._SY88.jpg",
  ]);
  // The seventh review has no "Verified Purchase" badge on the page.
  assert.equal(p.reviews[6].id, "R2O1CX0FCFPNDN");
  assert.equal(p.reviews[6].verified_purchase, false);
  assert.equal(p.reviews[9].helpful_votes, 12);
  // 4 of the 10 show a helpful-vote statement ("One person found this helpful" twice).
  assert.deepEqual(p.reviews.map((r) => r.helpful_votes), [0, 0, 0, 0, 1, 0, 0, 3, 1, 12]);
});

Deno.test("parseReviews() reads the 2024 Dawn reviews page (metaagent; its test only asserts non-empty)", async () => {
  const p = await page("amazon.com__metaagent-dawn-B0BBPNPZTC.html");
  assert.equal(p.asin, "B0BBPNPZTC");
  assert.equal(p.reviews.length, 10);
  assert.deepEqual(p.summary, {
    rating: 4.8,
    breakdown: { "5": 89, "4": 6, "3": 1, "2": 1, "1": 3 },
    total_ratings: 5849,
  });
  assert.deepEqual(p.reviews.slice(0, 2).map((r) => [r.id, r.title, r.rating, r.helpful_votes]), [
    ["RIY0N097PYR7K", "Name brand and performance", 5, 0],
    ["R1RUZF3NO7Y1Q4", "Always works", 5, 4],
  ]);
  assert.equal(p.reviews[0].variant, "");
  assert.equal(p.reviews[6].helpful_votes, 22);
  assert.ok(p.reviews.every((r) => r.verified_purchase));
});

Deno.test("parseReviews() reads the 2025 page 10 (last page: next link disabled)", async () => {
  const p = await page("amazon.com__wk-B0BN72FYFG-p10.html");
  assert.equal(p.asin, "B0BN72FYFG");
  assert.equal(p.reviews.length, 10);
  assert.equal(p.has_next_page, false);
  assert.deepEqual(p.summary, {
    rating: 4.1,
    breakdown: { "5": 67, "4": 11, "3": 4, "2": 3, "1": 15 },
    total_ratings: 4266,
  });
  const [first, second] = p.reviews;
  assert.deepEqual([first.id, first.title, first.body, first.date], [
    "R1O9Q9IHXQV73Q",
    "It works great",
    "Looks great and works great.",
    "February 26, 2025",
  ]);
  assert.equal(first.variant, "Service Provider: Unlocked | Color: Midnight | Size: 256GB");
  assert.equal(second.id, "RJNBT9AIMGPOP");
  assert.equal(p.reviews[5].id, "RNGHX3D8KFMOA");
  assert.equal(p.reviews[5].images.length, 3);
  assert.equal(p.reviews[5].helpful_votes, 9);
  // The extension's JSON (data/raw/B0BN72FYFG-*.json) is a different capture (page 1 of 2025-03-17),
  // so its reviews do not overlap this page 10; nothing to compare beyond the date-line format.
});

Deno.test("parseReviews() reads the 2018 amazon.it page (mega-scraper, 10 reviews, date without country)", async () => {
  const p = await page("amazon.it__megascraper-B07747FR44-p1.html");
  assert.equal(p.asin, "B07747FR44");
  assert.equal(p.reviews.length, 10);
  assert.equal(p.has_next_page, true);
  assert.deepEqual(p.summary, {
    rating: 4.7,
    breakdown: { "5": 79, "4": 14, "3": 4, "2": 1, "1": 2 },
    total_ratings: 2345,
  });
  const [first, second] = p.reviews;
  assert.equal(first.id, "R3OXHZOZ0WM7AZ");
  assert.equal(first.url, "https://www.amazon.it/gp/customer-reviews/R3OXHZOZ0WM7AZ");
  assert.equal(first.title, "SONO RIUSCITI A MIGLIORARLO ANCORA!!!");
  assert.equal(first.rating, 5);
  assert.equal(first.helpful_votes, 921);
  assert.equal(first.author, "Darkphoenix");
  assert.equal(first.verified_purchase, true);
  // 2018 pages print only "14 novembre 2018": no country on the page.
  assert.deepEqual([first.date, first.country], ["14 novembre 2018", ""]);
  assert.equal(
    first.variant,
    "Connettività: Wi-Fi | Memoria: 8 | Configurazione: Con offerte speciali",
  );
  assert.equal(second.id, "RG0KOF6IEBCOF");
  assert.deepEqual(second.images, [
    "https://images-na.ssl-images-amazon.com/images/I/71LVyW10A1L._SY88.jpg",
  ]);
  assert.deepEqual(p.reviews.map((r) => r.rating), [5, 5, 2, 1, 3, 4, 1, 5, 5, 3]);
});

Deno.test("parseReviews() reads the amazon.nl page that has no ratings yet", async () => {
  // Browser-saved /-/en/ (English UI) page: "0 global ratings", an all-zero histogram, no reviews.
  const p = await page("amazon.nl__heartquake-nl-B08N5WRWNW.html");
  assert.equal(p.asin, "B08N5WRWNW");
  assert.deepEqual(p.reviews, []);
  assert.deepEqual(p.summary, {
    rating: 0,
    breakdown: { "5": 0, "4": 0, "3": 0, "2": 0, "1": 0 },
    total_ratings: 0,
  });
  assert.equal(p.has_next_page, false);
});

Deno.test("parseReviews() rejects the 2016 single-review page filed under reviews/ as unrecognised", async () => {
  // weih1214's reviewpage1.html is /review/R12J0UJC4DRYLC (one review, pre-data-hook markup), not a
  // product-reviews list; its expected JSON describes that one review, which this list parser cannot
  // honestly turn into a list page.
  const html = await fixture("reviews/amazon.com__weih-B003EM8008-p3837.html");
  assert.throws(
    () => parseReviews(html, { marketplace: "US" }),
    (e) => e instanceof ParseError && e.reason === "unrecognised",
  );
});

Deno.test("parseReviews() answers a sign-in wall with ParseError 'blocked'", async () => {
  for (
    const name of [
      "blocked/amazon.de__epic-reviews-signin-wall.html",
      "blocked/amazon.in__akanil-signin.html",
    ]
  ) {
    const html = await fixture(name);
    assert.throws(
      () => parseReviews(html, { marketplace: fixtureMarketplace(name) }),
      (e) => e instanceof ParseError && e.reason === "blocked",
      name,
    );
  }
});

Deno.test("parseReviewSummary() reads reviews pages and product pages alike", async () => {
  const cases: [string, ReviewSummary][] = [
    ["reviews/amazon.com__wk-B0BN72FYFG-p10.html", {
      rating: 4.1,
      breakdown: { "5": 67, "4": 11, "3": 4, "2": 3, "1": 15 },
      total_ratings: 4266,
    }],
    ["product/amazon.com__wk-B0BN72FYFG-renewed.html", {
      rating: 4.1,
      breakdown: { "5": 67, "4": 11, "3": 4, "2": 3, "1": 15 },
      total_ratings: 4266,
    }],
    ["product/amazon.de__poonam-000004458X.html", {
      rating: 4.3,
      breakdown: { "5": 62, "4": 18, "3": 10, "2": 4, "1": 5 },
      total_ratings: 430,
    }],
    ["product/amazon.com__msheraz-B0823MDHDJ.html", {
      rating: 4.7,
      breakdown: { "5": 87, "4": 7, "3": 3, "2": 0, "1": 3 },
      total_ratings: 1596,
    }],
    ["product/amazon.fr__app-B00004YS4O.html", {
      rating: 1.3,
      breakdown: { "5": 0, "4": 0, "3": 0, "2": 33, "1": 67 },
      total_ratings: 3,
    }],
    ["product/amazon.de__app-B01LW7X0JJ.html", {
      rating: 0,
      breakdown: { "5": 0, "4": 0, "3": 0, "2": 0, "1": 0 },
      total_ratings: 0,
    }],
  ];
  for (const [name, expected] of cases) {
    const got = parseReviewSummary(await fixture(name), { marketplace: fixtureMarketplace(name) });
    assert.deepEqual(ReviewSummary.parse(got), expected, name);
  }
});

Deno.test("parseReviewSummary() reads every corpus product page into a valid summary", async () => {
  for (const name of fixtureNames("product")) {
    const got = parseReviewSummary(await fixture(name), { marketplace: fixtureMarketplace(name) });
    ReviewSummary.parse(got);
    assert.ok(
      Object.keys(got.breakdown).length === 0 || Object.keys(got.breakdown).length === 5,
      name,
    );
  }
});

Deno.test("splitDateLine() keeps the page's country and date wording", () => {
  assert.deepEqual(splitDateLine("Reviewed in the United States on March 3, 2023"), {
    country: "the United States",
    date: "March 3, 2023",
  });
  assert.deepEqual(splitDateLine("Recensito in Italia il 14 novembre 2018"), {
    country: "Italia",
    date: "14 novembre 2018",
  });
  assert.deepEqual(splitDateLine("Recensito in Italia l'8 marzo 2023"), {
    country: "Italia",
    date: "8 marzo 2023",
  });
  assert.deepEqual(splitDateLine("Beoordeeld in Nederland op 3 maart 2023"), {
    country: "Nederland",
    date: "3 maart 2023",
  });
  assert.deepEqual(splitDateLine("Rezension aus Deutschland vom 3. März 2023"), {
    country: "Deutschland",
    date: "3. März 2023",
  });
  assert.deepEqual(splitDateLine("2023年3月3日に日本でレビュー済み"), {
    country: "日本",
    date: "2023年3月3日",
  });
  assert.deepEqual(splitDateLine("14 novembre 2018"), { country: "", date: "14 novembre 2018" });
});

Deno.test("parseReviews() returns a valid page or throws ParseError on truncated and junk input", async () => {
  for (const name of fixtureNames("reviews")) {
    const html = await fixture(name);
    assertRobust(parseReviews, ReviewsPage, html, fixtureMarketplace(name));
    assertRobust(parseReviewSummary, ReviewSummary, html, fixtureMarketplace(name));
  }
});

Deno.test("parseReviews() reads the page number a page states in its canonical link: 1 without pageNumber, none without the link", async () => {
  // <link rel="canonical" href="https://www.amazon.com/…/product-reviews/B0BN72FYFG?pageNumber=10" />
  assert.equal((await page("amazon.com__wk-B0BN72FYFG-p10.html")).page_number, 10);
  // A reviews canonical link without pageNumber is the first page's (probe EH: read as stating
  // nothing, a first page answered for page 3 was labelled 3).
  for (
    const name of [
      "amazon.com__jachet-B01IPHVFUI.html",
      "amazon.com__metaagent-dawn-B0BBPNPZTC.html",
    ]
  ) {
    const html = await fixture(`reviews/${name}`);
    const link = /<link[^>]*rel="canonical"[^>]*>/.exec(html)?.[0] ?? "";
    assert.match(link, /\/product-reviews\//);
    assert.doesNotMatch(link, /pageNumber/);
    assert.equal((await page(name)).page_number, 1, name);
  }
  // Without the link it states nothing.
  const html = (await fixture("reviews/amazon.com__jachet-B01IPHVFUI.html"))
    .replace(/<link[^>]*rel="canonical"[^>]*>/, "");
  assert.equal(
    parseReviews(html, { marketplace: "US" }).page_number,
    null,
  );
});

Deno.test("reviews: an input#ASIN whose value is not an ASIN labels nothing; the address's ASIN is answered", async () => {
  // amazon.com__app-B07H57DNVV is a product page: no reviewed-product link, and
  // <input type="hidden" id="ASIN" name="ASIN" value="B07H57DNVV">.
  const product = await fixture("product/amazon.com__app-B07H57DNVV.html");
  const input = '<input type="hidden" id="ASIN" name="ASIN" value="B07H57DNVV">';
  assert.ok(product.includes(input));
  const url = "https://www.amazon.com/product-reviews/B0CSPROBE1";
  assert.equal(parseReviews(product, { marketplace: "US", url }).asin, "B07H57DNVV");
  for (const value of ["../x", "B07H57DNV", "b07h57dnvv/../x", "B07H57DNVV?y"]) {
    const html = product.replace(input, input.replace("B07H57DNVV", value));
    assert.equal(parseReviews(html, { marketplace: "US", url }).asin, "B0CSPROBE1", value);
  }
  // And over HTTP: /v1/products/reviews takes the parser's ASIN as it comes (probe CS).
  await using rig = await startRig();
  rig.fake.page(url, { html: product.replace(input, input.replace("B07H57DNVV", "../x")) });
  const r = await rig.call("/v1/products/reviews?asin=B0CSPROBE1");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.asin, "B0CSPROBE1");
});

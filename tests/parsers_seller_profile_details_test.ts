// Finer readings of the seller profile (probe IC): which address, stars, count, id and business
// details the parser keeps when the page offers a second candidate. NOT YET VERIFIED ON A REAL
// PAGE: each case is the hand-built SELLER_PROFILE_PAGE with one change, named in the test.
import assert from "node:assert/strict";
import { parseSellerProfile } from "../parsers/seller_profile.ts";
import { SELLER_PROFILE_PAGE } from "./handbuilt_pages.ts";
import { changedPage } from "./page_edit.ts";

const US = { marketplace: "US" };

const changed = (from: string | RegExp, to: string) => changedPage(SELLER_PROFILE_PAGE, from, to);

Deno.test("parseSellerProfile() keeps the address it was read at when that address names no seller", () => {
  const url = "https://www.amazon.com/sp?ie=UTF8&marketplaceID=ATVPDKIKX0DER";
  const profile = parseSellerProfile(SELLER_PROFILE_PAGE, { ...US, url });
  assert.equal(profile.url, url);
  assert.equal(profile.seller_id, "A1EXAMPLE7SELLER");
});

Deno.test("parseSellerProfile() reads the seller asked for from the seller parameter only, not from a parameter whose name ends in seller", () => {
  // Read from "refseller=", the asked id differed from the page's and the address was rebuilt.
  const url = "https://www.amazon.com/sp?refseller=AOTHERSELLER9&seller=A1EXAMPLE7SELLER";
  const profile = parseSellerProfile(SELLER_PROFILE_PAGE, { ...US, url });
  assert.equal(profile.url, url);
  assert.equal(profile.seller_id, "A1EXAMPLE7SELLER");
});

Deno.test("parseSellerProfile() takes the rating from the feedback summary's stars, not from an earlier star icon on the page", () => {
  // Change: a 3-star icon before the seller's name, outside the summary.
  const page = changed(
    '<h1 id="seller-name">',
    '<i class="a-icon a-icon-star"><span class="a-icon-alt">3.0 out of 5 stars</span></i>' +
      '<h1 id="seller-name">',
  );
  assert.equal(parseSellerProfile(page, US).rating, 4.5);
});

Deno.test("parseSellerProfile() takes the rating from the twelve-month description when the summary shows no stars", () => {
  // Change: the summary's stars removed; the ratings table's yearly description added.
  const page = changed('<span class="a-icon-alt">4.5 out of 5 stars</span>', "").replace(
    "</body>",
    '<span id="effective-timeperiod-rating-year-description">4.8 out of 5 stars</span></body>',
  );
  assert.equal(parseSellerProfile(page, US).rating, 4.8);
});

Deno.test("parseSellerProfile() takes the ratings count from the twelve-month table when the summary states none", () => {
  // Change: "(1,234 ratings)" removed from the summary; the table's twelve-month count added.
  const page = changed(" (1,234 ratings)", "").replace(
    "</body>",
    '<div id="rating-365d-num"><span class="ratings-reviews-count">567</span></div></body>',
  );
  assert.equal(parseSellerProfile(page, US).ratings_count, 567);
});

Deno.test("parseSellerProfile() passes over a seller link whose id is too short to be a seller's", () => {
  // Change: no storefront link; a help link's "seller=ME" comes before the shop link's id.
  const page = changed(
    /<div id="seller-info-storefront-link">.*?<\/div>/,
    '<a href="/help?seller=ME">help</a><a href="/s?me=A1EXAMPLE7SELLER">shop</a>',
  );
  const profile = parseSellerProfile(page, US);
  assert.equal(profile.seller_id, "A1EXAMPLE7SELLER");
  assert.equal(profile.url, "https://www.amazon.com/sp?seller=A1EXAMPLE7SELLER");
});

Deno.test("parseSellerProfile() ends the business address at the first row that is not indented", () => {
  // Change: a plain row after the address's last indented line.
  const page = changed(
    '<div class="a-row a-spacing-none indent-left"><span>US</span></div>',
    '<div class="a-row a-spacing-none indent-left"><span>US</span></div>' +
      '<div class="a-row">Footnote: not an address line</div>',
  );
  assert.deepEqual(parseSellerProfile(page, US).business_details, {
    "Business Name": "ACME Direct LLC",
    "Business Address": "100 Main Street, Springfield, IL, US",
  });
});

Deno.test("parseSellerProfile() leaves out a business-details label that has no value", () => {
  // Change: a "Business Type:" row with no value and no indented lines after it.
  const page = changed(
    '<div class="a-row a-spacing-none"><span class="a-text-bold">Business Address:</span></div>',
    '<div class="a-row a-spacing-none"><span class="a-text-bold">Business Type:</span></div>' +
      '<div class="a-row a-spacing-none"><span class="a-text-bold">Business Address:</span></div>',
  );
  const details = parseSellerProfile(page, US).business_details;
  assert.ok(!Object.hasOwn(details, "Business Type"), JSON.stringify(details));
  assert.equal(details["Business Address"], "100 Main Street, Springfield, IL, US");
});

Deno.test("parseSellerProfile() does not repeat a label in its value when the label's text sits in a span of its own", () => {
  // Change: the bold label wraps its text in an inner span.
  const page = changed(
    '<span class="a-text-bold">Business Name:</span>',
    '<span class="a-text-bold"><span>Business Name:</span></span>',
  );
  assert.equal(parseSellerProfile(page, US).business_details["Business Name"], "ACME Direct LLC");
});

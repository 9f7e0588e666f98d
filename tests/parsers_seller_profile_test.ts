// NOT YET VERIFIED ON A REAL PAGE: the corpus has no /sp?seller= page; these tests read a
// hand-built page that follows the seller profile markup public scrapers document.
import assert from "node:assert/strict";
import { parseSellerProfile } from "../parsers/seller_profile.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { SellerProfilePage } from "../schemas/pages.ts";
import { fixture } from "./fixture.ts";
import { SELLER_PROFILE_PAGE } from "./handbuilt_pages.ts";
import { assertRobust } from "./robustness.ts";

Deno.test("parseSellerProfile() reads name, logo, about, feedback and business details", () => {
  const url = "https://www.amazon.com/sp?ie=UTF8&seller=A1EXAMPLE7SELLER";
  const profile = SellerProfilePage.parse(
    parseSellerProfile(SELLER_PROFILE_PAGE, { marketplace: "US", url }),
  );
  assert.deepEqual(profile, {
    url,
    logo: "https://m.media-amazon.com/images/S/seller-logo/acme.png",
    name: "ACME Direct",
    about: "ACME Direct sells hardware and tools. We ship within one business day.",
    rating: 4.5,
    seller_id: "A1EXAMPLE7SELLER",
    positive_pct: 93,
    ratings_count: 1234,
    business_details: {
      "Business Name": "ACME Direct LLC",
      "Business Address": "100 Main Street, Springfield, IL, US",
    },
  });
});

Deno.test("parseSellerProfile() reads every share of positive feedback, 100% and one digit too (probe GR)", () => {
  for (const pct of [100, 8]) {
    const page = SELLER_PROFILE_PAGE.replace("<b>93% positive</b>", `<b>${pct}% positive</b>`);
    assert.ok(page.includes(`${pct}% positive`));
    assert.equal(parseSellerProfile(page, { marketplace: "US" }).positive_pct, pct);
  }
});

Deno.test("parseSellerProfile() takes the seller id from the storefront link without a URL", () => {
  const profile = parseSellerProfile(SELLER_PROFILE_PAGE, { marketplace: "US" });
  assert.equal(profile.seller_id, "A1EXAMPLE7SELLER");
  assert.equal(profile.url, "https://www.amazon.com/sp?seller=A1EXAMPLE7SELLER");
});

Deno.test("parseSellerProfile() names the seller its storefront link shows, whatever id reached it (probe EC)", () => {
  const url = "https://www.amazon.com/sp?seller=AOTHERSELLER99";
  const profile = parseSellerProfile(SELLER_PROFILE_PAGE, { marketplace: "US", url });
  assert.equal(profile.seller_id, "A1EXAMPLE7SELLER");
  assert.equal(profile.url, "https://www.amazon.com/sp?seller=A1EXAMPLE7SELLER");
});

Deno.test("parseSellerProfile() answers a profile showing nothing of a seller as not found (probe EC)", () => {
  const empty = '<html><body><h1 id="seller-name"></h1>' +
    '<div id="seller-info-feedback-summary"></div></body></html>';
  assert.throws(
    () => parseSellerProfile(empty, { marketplace: "US" }),
    (e) => e instanceof ParseError && e.reason === "not_found",
  );
});

Deno.test("parseSellerProfile() leaves absent parts empty", () => {
  const bare = '<html><body><h1 id="seller-name">Solo</h1></body></html>';
  assert.deepEqual(parseSellerProfile(bare, { marketplace: "DE" }), {
    url: "",
    logo: "",
    name: "Solo",
    about: "",
    rating: 0,
    seller_id: "",
    positive_pct: 0,
    ratings_count: 0,
    business_details: {},
  });
});

Deno.test("parseSellerProfile() refuses a page without seller markup", async () => {
  const search = await fixture("search/amazon.com__pavel-ipad-pro.html");
  assert.throws(() => parseSellerProfile(search, { marketplace: "US" }), ParseError);
});

Deno.test("parseSellerProfile() gives a valid page or ParseError on truncated and junk input", () => {
  assertRobust(parseSellerProfile, SellerProfilePage, SELLER_PROFILE_PAGE, "US");
});

Deno.test("parseSellerProfile() reads an about text of paragraphs, line breaks and a list apart, not joined (probe GG)", () => {
  const html = SELLER_PROFILE_PAGE.replace(
    "ACME Direct sells hardware and tools. We ship within one business day.",
    "<p>ACME Direct sells hardware and tools.</p><p>We ship within one business day.<br>Returns:" +
      "<ul><li>30 days</li><li>free</li></ul></p>",
  );
  const profile = parseSellerProfile(html, { marketplace: "US" });
  assert.equal(
    profile.about,
    "ACME Direct sells hardware and tools. We ship within one business day. Returns: 30 days free",
  );
});

Deno.test("parseSellerProfile() keeps a business-details label named like a member of every object to its own value (probe IC)", () => {
  // The label is the seller's text: "constructor" read Object's own function and answered its
  // source before the value.
  for (const label of ["constructor", "toString", "hasOwnProperty"]) {
    const html =
      `<html><body><h1 id="seller-name">S</h1><div id="page-section-detail-seller-info">` +
      `<div class="a-row"><span class="a-text-bold">${label}:</span><span>ACME LLC</span></div>` +
      `<div class="a-row indent-left"><span>Springfield</span></div></div></body></html>`;
    const page = parseSellerProfile(html, { marketplace: "US" });
    assert.deepEqual(page.business_details, { [label]: "ACME LLC, Springfield" }, label);
  }
});

Deno.test("parseSellerProfile() reads an about text without its section's heading, with or without the expander (probe IC)", () => {
  // The expander without its more/less parts: the section around it, heading and all, was read.
  const plain = SELLER_PROFILE_PAGE.replace(
    /<div class="spp-expander-less-content">[\s\S]*?<\/div>\s*<div class="spp-expander-more-content">[\s\S]*?<\/div>/,
    "<p>Family business since 1990.</p>",
  );
  assert.ok(plain.includes("<h3>About Seller</h3>") && !plain.includes("spp-expander-less"));
  assert.equal(
    parseSellerProfile(plain, { marketplace: "US" }).about,
    "Family business since 1990.",
  );
  // No expander at all: the section's text beside its heading.
  const section = plain.replace('<div id="spp-expander-about-seller">', "<div>");
  assert.equal(
    parseSellerProfile(section, { marketplace: "US" }).about,
    "Family business since 1990.",
  );
});

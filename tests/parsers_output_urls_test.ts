/**
 * URL and ASIN fields a page cannot poison (probe C, F3): links are https URLs on the
 * marketplace's own host, images are http(s) URLs on Amazon's image hosts, and ASINs are ten
 * capitals and digits; anything else is dropped (null, "" or the item left out) by the parser
 * helpers (dom.ts's linkUrl and imageUrl, page_common.ts's isAsin).
 */
import assert from "node:assert/strict";
import { imageUrl, linkUrl } from "../parsers/dom.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { parseSearch } from "../parsers/search.ts";
import { parseProduct } from "../parsers/product.ts";
import { parseIdentifiers } from "../parsers/identifiers.ts";
import { parseBestsellers } from "../parsers/bestsellers.ts";
import { parseCategories } from "../parsers/categories.ts";
import { parseDeals } from "../parsers/deals.ts";
import { parseDealProducts } from "../parsers/deal_products.ts";
import { parseSellerProfile } from "../parsers/seller_profile.ts";
import { parseReview } from "../parsers/review.ts";
import { parseReviews } from "../parsers/reviews.ts";
import { colorImages, dynamicImage, mobileImages } from "../parsers/product_images.ts";
import { interstitialForm } from "../parsers/soft_interstitial.ts";
import { fixture } from "./fixture.ts";
import { DEAL_PRODUCTS_PAGE, DEALS_PAGE, SELLER_PROFILE_PAGE } from "./handbuilt_pages.ts";

const JS = "javascript:alert(document.domain)//.jpg";
const US = "https://www.amazon.com";

Deno.test("linkUrl(): https on the marketplace's own host only", () => {
  assert.equal(linkUrl("/deal/e5f6a7b8", US), "https://www.amazon.com/deal/e5f6a7b8");
  assert.equal(linkUrl("http://www.amazon.com/x?y=1", US), "https://www.amazon.com/x?y=1");
  assert.equal(linkUrl("//www.amazon.com/x", US), "https://www.amazon.com/x");
  for (
    const bad of [
      "",
      "//evil.example/deal/x",
      "/\\evil.example/deal/x",
      "https://evil.example/deal/x",
      "https://www.amazon.com.evil.example/x",
      "https://www.amazon.de/x",
      "https://aws.amazon.com/x",
      "javascript:alert(1)",
      "data:text/html,x",
      "https://user@www.amazon.com/x",
      "https://www.amazon.com:8443/x",
      "http://[::1",
    ]
  ) assert.equal(linkUrl(bad, US), "", bad);
});

Deno.test("imageUrl(): http(s) on Amazon's image hosts only", () => {
  for (
    const good of [
      "https://m.media-amazon.com/images/I/81c+9BOQNWL._AC_UY218_.jpg",
      "https://images-na.ssl-images-amazon.com/images/I/715ByyULmYL._SL1200_.jpg",
      "https://images-eu.ssl-images-amazon.com/images/I/51Y6rWuf0KL._AC_UL300_SR300,200_.jpg",
      "http://g-ecx.images-amazon.com/images/G/01/x.gif", // 2015-16 pages
    ]
  ) assert.equal(imageUrl(good), good);
  assert.equal(
    imageUrl("//m.media-amazon.com/images/I/x.jpg"),
    "https://m.media-amazon.com/images/I/x.jpg",
  );
  for (
    const bad of [
      JS,
      "data:image/gif;base64,R0lGOD",
      "//evil.example/pixel.gif",
      "https://evil.example/m.media-amazon.com/x.jpg",
      "https://m.media-amazon.com.evil.example/x.jpg",
      "https://notmedia-amazon.com/x.jpg",
      "./Amazon.com _ laptop_files/71F1MSa4gXL._AC_UY218_.jpg",
      "/images/I/x.jpg",
    ]
  ) assert.equal(imageUrl(bad), "", bad);
});

Deno.test("search: a card image that is javascript:, data: or off Amazon is null", async () => {
  const page = await fixture("search/amazon.com__pavel-ipad-pro.html");
  const src = "https://m.media-amazon.com/images/I/81c+9BOQNWL._AC_UY218_.jpg";
  assert.equal(parseSearch(page, { marketplace: "US" }).results[0].image, src);
  for (const bad of [JS, "//evil.example/pixel.gif", "https://evil.example/a.jpg"]) {
    const r = parseSearch(page.replaceAll(src, bad), { marketplace: "US" }).results[0];
    assert.equal(r.image, null, bad);
    assert.equal(r.asin, "B0BJLF2BRM");
    assert.equal(r.url, "https://www.amazon.com/dp/B0BJLF2BRM");
  }
});

Deno.test("details: an input#ASIN that is no ASIN gives way to the canonical link, else the page is refused", async () => {
  const page = await fixture("product/amazon.com__app-B07H57DNVV.html");
  const input = '<input type="hidden" id="ASIN" name="ASIN" value="B07H57DNVV">';
  assert.ok(page.includes(input));
  const hostile = page.replace(
    input,
    '<input type="hidden" id="ASIN" name="ASIN" value="&lt;script&gt;alert(1)&lt;/script&gt;/../../evil">',
  );
  const p = parseProduct(hostile, { marketplace: "US" });
  assert.equal(p.asin, "B07H57DNVV"); // from the canonical link
  assert.equal(p.url, "https://www.amazon.com/dp/B07H57DNVV");
  assert.equal(parseIdentifiers(hostile, { marketplace: "US" }).asin, "B07H57DNVV");
  const noCanonical = hostile.replace(/<link rel="canonical"[^>]*>/, "");
  // No ASIN of its own: not a product page, whatever URL was asked for (an uncharged 502).
  assert.throws(
    () => parseProduct(noCanonical, { marketplace: "US", url: `${US}/dp/B07H57DNVV` }),
    (e) => e instanceof ParseError && e.reason === "unrecognised",
  );
  assert.throws(() => parseIdentifiers(noCanonical, { marketplace: "US" }), ParseError);
});

Deno.test("details: script image data that is javascript: or off Amazon is left out", async () => {
  const page = await fixture("product/amazon.com__app-B07H57DNVV.html");
  const hiRes =
    '"hiRes":"https://images-na.ssl-images-amazon.com/images/I/715ByyULmYL._SL1200_.jpg"';
  assert.ok(page.includes(hiRes));
  const before = parseProduct(page, { marketplace: "US" }).images;
  const after = parseProduct(page.replace(hiRes, `"hiRes":"${JS}"`), { marketplace: "US" }).images;
  assert.equal(after.length, before.length);
  assert.ok(after[0].url.startsWith("https://images-na.ssl-images-amazon.com/"));
  assert.notEqual(after[0].url, before[0].url); // the "large" rendition instead
  assert.deepEqual(
    colorImages(`'colorImages': { 'initial': [{"hiRes":"${JS}","large":"//evil.example/x.jpg"}]}`),
    [],
  );
  assert.deepEqual(
    colorImages(
      `'colorImages': { 'initial': [{"large":"https://m.media-amazon.com/images/I/a.jpg","thumb":"${JS}"}]}`,
    ),
    [{
      url: "https://m.media-amazon.com/images/I/a.jpg",
      width: null,
      height: null,
      thumbnail: "https://m.media-amazon.com/images/I/a.jpg",
    }],
  );
  assert.deepEqual(
    dynamicImage(
      `{"${JS}":[1500,1500],"https://m.media-amazon.com/images/I/b._SX300_.jpg":[300,200]}`,
    ),
    {
      url: "https://m.media-amazon.com/images/I/b._SX300_.jpg",
      width: 300,
      height: 200,
      thumbnail: "https://m.media-amazon.com/images/I/b._SX300_.jpg",
    },
  );
  assert.deepEqual(
    mobileImages(`<img class="altImage" data-a-hires="https://evil.example/images/I/x.jpg">`),
    [],
  );
});

Deno.test("best sellers and categories: a javascript: image is null, a tree link off the host names no category", async () => {
  const page = await fixture("bestsellers/amazon.com__parsy-zgbs-hi.html");
  const first = parseBestsellers(page, { marketplace: "US" }).results[0];
  assert.ok(first.image?.startsWith("https://images-na.ssl-images-amazon.com/"));
  const poisoned = parseBestsellers(page.replaceAll(first.image!, JS), { marketplace: "US" });
  assert.equal(poisoned.results[0].image, null);
  assert.equal(poisoned.results[0].asin, first.asin);

  const tree = (href: string) =>
    `<html><body><div role="tree"><div role="treeitem"><a href="${href}">Tools</a></div></div></body></html>`;
  assert.deepEqual(
    parseCategories(tree("/gp/bestsellers/hi/ref=zg_bs_nav_0"), { marketplace: "US" }).categories
      .map((c) => c.url),
    ["https://www.amazon.com/gp/bestsellers/hi"],
  );
  for (
    const bad of [
      "//evil.example/gp/bestsellers/hi/evil",
      "https://evil.example/gp/bestsellers/hi",
      "javascript:/gp/bestsellers/hi",
    ]
  ) {
    assert.throws(() => parseCategories(tree(bad), { marketplace: "US" }), ParseError, bad);
  }
});

Deno.test("deals: a deal link off the host drops the card, a javascript: image is null", () => {
  const img = "https://m.media-amazon.com/images/I/71xoR4A6q-L._AC_UL320_.jpg";
  const link = 'href="/deal/e5f6a7b8?showVariations=true&amp;ref=gbps_img_s-3_e5f6"';
  assert.ok(DEALS_PAGE.includes(img) && DEALS_PAGE.includes(link));
  const before = parseDeals(DEALS_PAGE, { marketplace: "US" }).results;
  const deal = before.find((r) => r.deal_id === "e5f6a7b8")!;
  assert.equal(deal.url, "https://www.amazon.com/deal/e5f6a7b8");
  const after = parseDeals(
    DEALS_PAGE.replace(img, JS).replace(link, 'href="//evil.example/deal/e5f6a7b8"'),
    { marketplace: "US" },
  ).results;
  assert.equal(after.length, before.length - 1);
  assert.ok(!after.some((r) => r.deal_id === "e5f6a7b8"));
  assert.ok(after.every((r) => r.url.startsWith("https://www.amazon.com/")));
  assert.ok(
    after.every((r) => r.image === null || r.image.startsWith("https://m.media-amazon.com/")),
  );
  assert.equal(
    before.filter((r) => r.image === null).length + 1,
    after.filter((r) => r.image === null).length,
  );

  const dp = parseDealProducts(
    DEAL_PRODUCTS_PAGE.replace(
      "https://m.media-amazon.com/images/I/81wYzPhzSSL._AC_SY200_.jpg",
      JS,
    ),
    { marketplace: "US" },
  );
  assert.equal(dp.results[0].image, null);
  assert.equal(dp.results[1].image, "https://m.media-amazon.com/images/I/71abc._AC_SY200_.jpg");
});

Deno.test("seller profile: a javascript: logo is empty (and listed missing), the URL stays on the host", () => {
  const logo = "https://m.media-amazon.com/images/S/seller-logo/acme.png";
  assert.equal(parseSellerProfile(SELLER_PROFILE_PAGE, { marketplace: "US" }).logo, logo);
  const p = parseSellerProfile(SELLER_PROFILE_PAGE.replace(logo, "javascript:alert(1)"), {
    marketplace: "US",
    url: `${US}/sp?seller=A1EXAMPLE7SELLER`,
  });
  assert.equal(p.logo, "");
  assert.equal(p.url, "https://www.amazon.com/sp?seller=A1EXAMPLE7SELLER");
});

Deno.test("single review: images that are not Amazon image URLs are left out", () => {
  const html = `<html><body><div><a name="RTEST12345"></a><b>Title</b>
    <img class="review-image-thumbnail" src="${JS}">
    <img class="review-image-thumbnail" src="https://evil.example/x.jpg" large-image-url="https://m.media-amazon.com/images/I/big.jpg">
    <div class="reviewText">Body</div></div><div class="reviews-voting-stripe"></div></body></html>`;
  assert.deepEqual(parseReview(html, { marketplace: "US" }).review.images, [
    "https://m.media-amazon.com/images/I/big.jpg",
  ]);
});

Deno.test("reviews: a review image that is javascript: or off Amazon is left out", async () => {
  const page = await fixture("reviews/amazon.com__jachet-B01IPHVFUI.html");
  const img = "https://m.media-amazon.com/images/I/71ErgwXJTKL._SY88.jpg";
  const images = (html: string) =>
    parseReviews(html, { marketplace: "US" }).reviews.find((r) => r.id === "R2T4B2N2I4AQIB")!
      .images;
  assert.deepEqual(images(page), [img]);
  assert.deepEqual(images(page.replaceAll(img, JS)), []);
  assert.deepEqual(images(page.replaceAll(img, "//evil.example/x.jpg")), []);
});

Deno.test("soft interstitial: a form action that a URL parser reads as another host is refused", () => {
  const form = (action: string) =>
    `<form action="${action}"><input name="field-keywords" value="ABCD"></form>`;
  assert.equal(
    interstitialForm(form("/errors/validateCaptcha"))?.action,
    "/errors/validateCaptcha",
  );
  assert.equal(interstitialForm(form("/\\evil.example/errors/validateCaptcha")), null);
  assert.equal(interstitialForm(form("//evil.example/errors/validateCaptcha")), null);
});

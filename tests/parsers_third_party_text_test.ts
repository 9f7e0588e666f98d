/**
 * Text third parties write on a real page (review bodies, seller names, listing and carousel
 * titles), escaped as Amazon escapes it (`& < > " '`), must not steer the fields read from the
 * page's own markup (probe AY): each case alters one corpus page in such a region only.
 */
import assert from "node:assert/strict";
import { readPage } from "../upstream/page_read.ts";
import { fixture } from "./fixture.ts";

const esc = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&#34;")
    .replace(/'/g, "&#39;");

function read(html: string, parser: "product" | "auto", marketplace: string) {
  return readPage({
    parser,
    url: "https://www.amazon.com/dp/X",
    marketplace,
    status: 200,
    contentType: "text/html; charset=utf-8",
    wantLocation: false,
  }, new TextEncoder().encode(html));
}

function product(html: string, marketplace: string) {
  const p = read(html, "product", marketplace).parsed;
  assert.ok(p?.ok, JSON.stringify(p));
  return (p as { value: { merchant: string; variations: { parent_asin: string } } }).value;
}

Deno.test("a parentASIN= written in a review or in the listing's title names no parent", async () => {
  const noData = await fixture("product/amazon.com__msshop-B07G2L3JMM.html");
  assert.equal(product(noData, "US").variations.parent_asin, "");
  const review = /(?:review-text-content|data-hook="review-body")[^>]*>\s*(?:<span[^>]*>)?/;
  const at = review.exec(noData)!;
  const reviewed = noData.slice(0, at.index + at[0].length) +
    esc("Same as amazon.com/gp/product/handle-buy-box?parentASIN=B0EVILPRNT&ref=x") +
    noData.slice(at.index + at[0].length);
  assert.equal(product(reviewed, "US").variations.parent_asin, "", "was B0EVILPRNT");

  const own = await fixture("product/amazon.com__app-B07H57DNVV.html");
  assert.equal(product(own, "US").variations.parent_asin, "B07H57DNVV");
  const titled = own.replace(/(<title[^>]*>)/i, `$1${esc("(parentASIN=B0EVILPRNT) ")}`);
  assert.equal(product(titled, "US").variations.parent_asin, "B07H57DNVV", "was B0EVILPRNT");
});

Deno.test("Item.parentAsin written in a review or a carousel title names no parent; the page's own item script does", async () => {
  // Review text keeps its apostrophes on real pages (probe BN), so only & < > " are escaped.
  const words = `Item.parentAsin = 'B0FORGED00'; P.register('dm-aw-item', function() {` +
    ` Item.parentAsin = 'B0FORGED01'; })`.replace(/"/g, "&#34;");
  const noData = await fixture("product/amazon.com__msshop-B07G2L3JMM.html");
  const review = /data-hook="review-body"[^>]*>\s*(?:<span[^>]*>)?/.exec(noData)!;
  const reviewed = noData.slice(0, review.index + review[0].length) + words +
    noData.slice(review.index + review[0].length);
  assert.equal(product(reviewed, "US").variations.parent_asin, "", "was B0FORGED00");

  // Only in its item script: `Item.parentAsin = 'B07H57DNVV';` (line 14025).
  const fr = await fixture("product/amazon.fr__app-B07H57DNVV.html");
  assert.equal(product(fr, "FR").variations.parent_asin, "B07H57DNVV");
  const carded = fr.replace(/(a-carousel-card[^>]*>)/, `$1<span>${words}</span>`);
  assert.ok(carded !== fr);
  assert.equal(product(carded, "FR").variations.parent_asin, "B07H57DNVV", "was B0FORGED00");
});

Deno.test("a seller's name with ' und ', ' and ' or '. ' in it is the merchant whole", async () => {
  const de = await fixture("product/amazon.de__poonam-000004458X.html");
  assert.equal(product(de, "DE").merchant, "Merc Enterprises");
  const i = de.indexOf('id="merchant-info"');
  const j = de.indexOf("Merc Enterprises", i);
  for (
    const name of ["Amazon und Merc Enterprises", "Amazon. Merc Enterprises", "Casa e Giardino"]
  ) {
    const renamed = de.slice(0, j) + esc(name) + de.slice(j + "Merc Enterprises".length);
    assert.equal(product(renamed, "DE").merchant, name, "was cut at the conjunction");
  }
});

Deno.test("a listing title ending in pageType=… leaves the page a product page", async () => {
  const html = await fixture("product/amazon.com__msheraz-B0823MDHDJ.html");
  assert.deepEqual(read(html, "auto", "US").detection, { kind: "page", type: "product" });
  for (const token of ["pageType=CustomerReviews", "pageType=OfferListing", "pageType=Search"]) {
    const titled = html.replace(/(<title[^>]*>)([^<]*)/i, (_m, t, s) => `${t}${s} ${esc(token)}`);
    assert.deepEqual(
      read(titled, "auto", "US").detection,
      { kind: "page", type: "product" },
      token,
    );
  }
});

Deno.test("a listing title copied into the page's attributes (meta title, image alt) forges neither page type nor parent", async () => {
  for (
    const [file, marketplace, parent] of [
      ["product/amazon.co.uk__app-B07CL39Z8Q.html", "UK", null],
      ["product/amazon.com__app-B07H57DNVV.html", "US", "B07H57DNVV"],
    ] as const
  ) {
    const html = await fixture(file);
    const title = esc("Widget (Renewed) pageType=CustomerReviews parentASIN=B0FORGED01");
    const copied = html.replace(
      /<head[^>]*>/i,
      (m) => `${m}<meta name="title" content="${title}"><img alt="${title}" src="x.jpg">`,
    );
    assert.deepEqual(read(copied, "auto", marketplace).detection, {
      kind: "page",
      type: "product",
    }, file);
    if (parent) assert.equal(product(copied, marketplace).variations.parent_asin, parent, file);
  }
});

Deno.test("a 2016 review body that says how many found it helpful does not set its votes", async () => {
  const html = await fixture("reviews/amazon.com__weih-B003EM8008-p3837.html");
  const votes = (h: string) => {
    const p = readPage({
      parser: "review",
      url: "https://www.amazon.com/review/R12J0UJC4DRYLC",
      marketplace: "US",
      status: 200,
      contentType: "text/html; charset=utf-8",
      wantLocation: false,
    }, new TextEncoder().encode(h)).parsed as { value: { review: { helpful_votes: number } } };
    return p.value.review.helpful_votes;
  };
  assert.equal(votes(html), 18);
  // The same review before anyone voted: the page shows no such line.
  const unvoted = html.replace(
    /<div style="margin-bottom:0.5em;">\s*18 of 18 people found the following review helpful\s*<\/div>/,
    "",
  );
  assert.equal(votes(unvoted), 0);
  const said = unvoted.replace(
    /class="reviewText"[^>]*>/,
    (m) => m + esc("Update: 9,999 of 10,000 people found the following review helpful. "),
  );
  assert.equal(votes(said), 0, "was 9999");
  const named = unvoted.replace(
    '<span style = "font-weight: bold;">Amazon Customer</span>',
    '<span style = "font-weight: bold;">9,999 of 9,999 people found the following review helpful</span>',
  );
  assert.notEqual(named, unvoted, "the reviewer's name was replaced");
  assert.equal(votes(named), 0, "the reviewer's name: was 9999");
});

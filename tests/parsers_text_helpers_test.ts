/**
 * The small readers every parser shares (parsers/page_text.ts, parsers/dom.ts), on the shapes of
 * markup their comments describe: what a visitor sees, which query parameter or ASIN a link
 * names, how far a script's JSON goes, and which of a repeated attribute counts.
 */
import assert from "node:assert/strict";
import {
  all,
  imageUrl,
  linkUrl,
  MAX_NODES,
  one,
  parseHtml,
  parseRegions,
  text,
} from "../parsers/dom.ts";
import {
  asinFromUrl,
  asinInput,
  balancedJson,
  menuChoice,
  queryParam,
  rejectBlockedPage,
  tagAttributes,
  visibleText,
} from "../parsers/page_text.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { fixture } from "./fixture.ts";

// ---- what a visitor sees -----------------------------------------------------------------------

Deno.test("visibleText() leaves out a <template>'s contents, which a browser does not show", () => {
  const doc = parseHtml(
    '<div class="a-section">Ships from Amazon<template><span>Sold by Other</span></template></div>',
  );
  assert.equal(visibleText(doc), "Ships from Amazon");
});

Deno.test("all() and one() do not look inside a <template>, as css-select does not", () => {
  const doc = parseHtml(
    '<div id="offers"><template><div class="offer">hidden</div></template>' +
      '<div class="offer">shown</div></div>',
  );
  assert.deepEqual(all(doc, ".offer").map((e) => text(e)), ["shown"]);
  assert.equal(text(one(doc, ".offer")), "shown");
});

Deno.test("text() sets a block apart from the text before it as well as after it", () => {
  // "Sold by<div>Amazon</div>" ran together as "Sold byAmazon".
  const doc = parseHtml("<span>Sold by<div>Amazon</div>and shipped</span>");
  assert.equal(text(doc), "Sold by Amazon and shipped");
});

// ---- links ---------------------------------------------------------------------------------------

Deno.test("queryParam() reads a parameter by its whole name: ASIN is not read out of parentASIN", () => {
  const href =
    "/gp/customer-reviews/R2X3Y4Z5/ref=cm_cr_arp_d_rvw_ttl?ie=UTF8&parentASIN=B0BN72FYFG" +
    "&ASIN=B0BN6ZLHTQ";
  assert.equal(queryParam(href, "ASIN"), "B0BN6ZLHTQ");
  assert.equal(queryParam(href, "parentASIN"), "B0BN72FYFG");
  assert.equal(
    queryParam("/gp/aag/main?isAmazonFulfilled=1&seller=A1B2C3D4E5", "seller"),
    "A1B2C3D4E5",
  );
  assert.equal(queryParam("/gp/aag/main?marketplaceSeller=0", "Seller"), "");
});

Deno.test("asinFromUrl() takes a whole ten-character id only: a 13-digit ISBN names no ASIN", () => {
  // The first ten digits of an ISBN-13 (9780131103627) are not the book's ASIN (0131103628).
  assert.equal(asinFromUrl("https://www.amazon.com/dp/9780131103627"), "");
  assert.equal(asinFromUrl("https://www.amazon.com/gp/product/9780131103627/ref=x"), "");
  for (
    const url of [
      "https://www.amazon.com/dp/0131103628",
      "https://www.amazon.com/dp/0131103628/ref=sr_1_1",
      "https://www.amazon.com/dp/0131103628?th=1",
      "/gp/aw/d/0131103628#reviews",
    ]
  ) assert.equal(asinFromUrl(url), "0131103628", url);
});

Deno.test("imageUrl() and linkUrl() drop a URL that names a port", () => {
  // An image URL goes into a client's <img src>: on a chosen port of an image host's name it
  // would have the client load from wherever that port leads.
  assert.equal(
    imageUrl("https://m.media-amazon.com/images/I/41OppoDa9PL.jpg"),
    "https://m.media-amazon.com/images/I/41OppoDa9PL.jpg",
  );
  assert.equal(imageUrl("https://m.media-amazon.com:8443/images/I/41OppoDa9PL.jpg"), "");
  assert.equal(imageUrl("//images-na.ssl-images-amazon.com:444/images/I/x.jpg"), "");
  assert.equal(linkUrl("https://www.amazon.com:8443/dp/0131103628", "https://www.amazon.com"), "");
});

// ---- attributes --------------------------------------------------------------------------------

Deno.test("tagAttributes() keeps the first of a repeated attribute, as the DOM parser does", () => {
  const tag = '<input type="hidden" id="ASIN" id="B0BN72FYFG" value="B0BN6ZLHTQ" value="x">';
  const attrs = tagAttributes(tag);
  assert.equal(attrs.get("id"), "ASIN");
  assert.equal(attrs.get("value"), "B0BN6ZLHTQ");
  assert.deepEqual(one(parseHtml(tag), "input")?.attribs, {
    type: "hidden",
    id: "ASIN",
    value: "B0BN6ZLHTQ",
  });
});

Deno.test("parseRegions() keeps the first of a repeated attribute of a kept element, as parseHtml does", () => {
  const html = '<div id="nav">x</div>' +
    '<div class="s-result-item" data-asin="B0BN72FYFG" data-asin="B0BN6ZLHTQ">card</div>';
  const doc = parseRegions(
    html,
    (_, attr) => attr("class") === "s-result-item" ? "keep" : undefined,
  );
  const kept = one(doc, "div");
  assert.equal(kept?.attribs["data-asin"], "B0BN72FYFG");
  assert.deepEqual(kept?.attribs, one(parseHtml(html), ".s-result-item")?.attribs);
});

Deno.test("asinInput() reads the first input#ASIN only: an unreadable value is not replaced by a later one", () => {
  // Product pages repeat the input in each of their forms (four times on wk-B0BN72FYFG); the
  // product parser keeps the first that has a value, and so must the reviews parser's fallback.
  const input = (value: string) => `<input type="hidden" id="ASIN" name="ASIN" value="${value}">`;
  assert.equal(asinInput(input("B0BN72FYFG") + input("B0BN6ZLHTQ")), "B0BN72FYFG");
  assert.equal(asinInput(input("b0bn72fyfg") + input("B0BN72FYFG")), "");
  assert.equal(asinInput(input("B0BN72FYFG-1") + input("B0BN72FYFG")), "");
});

// ---- script data -------------------------------------------------------------------------------

Deno.test('balancedJson() skips an escaped quote inside a string: 27\\" does not end the string', () => {
  // An image's or variant's title with an inch mark, as script data writes it.
  const data = '{"initial":[{"title":"Dell 27\\" Monitor }","hiRes":"https://m.media-amazon.com/' +
    'images/I/a.jpg"}]}';
  const script = `var data = ${data}; more();`;
  const json = balancedJson(script, script.indexOf("{"));
  assert.equal(json, data);
  assert.equal(JSON.parse(json).initial[0].title, 'Dell 27" Monitor }');
});

Deno.test("balancedJson() answers nothing for data nested deeper than maxDepth, and the whole at maxDepth", () => {
  const data = '{"initial":[{"hiRes":"a.jpg"}]}'; // three levels
  assert.equal(balancedJson(data, 0, Infinity, 3), data);
  assert.equal(balancedJson(data, 0, Infinity, 2), "");
  assert.equal(balancedJson(data, 0, Infinity, 1), "");
});

// ---- menus -------------------------------------------------------------------------------------

Deno.test("menuChoice() takes the first option of a menu with none selected only when told to", async () => {
  // Read off the page: the sort menu offers helpful, then recent, and marks neither selected.
  const page = await fixture("reviews/amazon.com__metaagent-dawn-B0BBPNPZTC.html");
  assert.equal(menuChoice(page, "sort-order-dropdown", true), "helpful");
  assert.equal(menuChoice(page, "sort-order-dropdown"), null);
  // One marked selected is the answer either way (heartquake-nl: "Most recent").
  const nl = await fixture("reviews/amazon.nl__heartquake-nl-B08N5WRWNW.html");
  assert.equal(menuChoice(nl, "sort-order-dropdown"), "recent");
  assert.equal(menuChoice(nl, "sort-order-dropdown", true), "recent");
});

// ---- block pages and bounds --------------------------------------------------------------------

Deno.test("rejectBlockedPage() knows a 503 page by its cs_503 links whatever its title says", async () => {
  // amazon.de's 503 with its title in a wording the title test does not list, as another
  // marketplace's 503 page would have it: its links to cs_503 remain.
  const page = await fixture("blocked/amazon.de__epic-503-tut-uns-leid.html");
  const retitled = page.replace(/<title>[^<]*<\/title>/, "<title>Amazon.de</title>");
  assert.notEqual(retitled, page);
  assert.ok(!/dogsofamazon/i.test(retitled));
  assert.ok(retitled.includes("/ref=cs_503_link/"));
  assert.throws(
    () => rejectBlockedPage(retitled),
    (e) => e instanceof ParseError && e.reason === "blocked" && /503/.test(e.message),
  );
  rejectBlockedPage(retitled.replaceAll("cs_503", "cs_home"));
});

Deno.test("parseHtml() counts <!DOCTYPE> declarations towards MAX_NODES like tags and comments", () => {
  const refused = (e: unknown) =>
    e instanceof ParseError && e.reason === "unrecognised" &&
    /more than 100000 tags/.test(e.message);
  assert.equal(parseHtml("<!DOCTYPE html>".repeat(MAX_NODES)).children.length, MAX_NODES);
  assert.throws(() => parseHtml("<!DOCTYPE html>".repeat(MAX_NODES + 1)), refused);
});

Deno.test("parseRegions() starts at the tag holding the first match of `from`, and keeps that tag", () => {
  // The offers parser starts at its first offer's `id="aod-…"`: that offer itself must be read.
  const html = '<div id="nav"><a href="/">Home</a></div>' +
    '<div id="aod-pinned-offer" class="a-section">Sold by Amazon</div>' +
    '<div id="aod-offer" class="a-section">Sold by Other</div>';
  const doc = parseRegions(
    html,
    (_, attr) => attr("id")?.startsWith("aod-") ? "keep" : undefined,
    { from: /id="aod-/ },
  );
  assert.deepEqual(doc.children.map((c) => text(c)), ["Sold by Amazon", "Sold by Other"]);
});

/**
 * What reading one page may cost (parsers/page_budget.ts, upstream/page_read.ts): a reader that
 * took the text of every match re-read nested matches' text once per level, and an 8 MiB page
 * cost 36–75 s and 2–3 GB to parse, froze an inline server for a minute and held a page worker
 * a minute past its timeout; a search page of that kind was a charged 200 (probe AT).
 */
import assert from "node:assert/strict";
import { readPage } from "../upstream/page_read.ts";
import { PageTooCostly, withinBudget } from "../parsers/page_budget.ts";
import { all, type AnyNode, type Element, one, parseHtml, text } from "../parsers/dom.ts";
import { selectAll, selectOne } from "css-select";
import { startRig } from "./upstream_harness.ts";
import { colorImages } from "../parsers/product_images.ts";
import { balancedJson } from "../parsers/page_text.ts";

const LEVELS = 120;
const FILL = "a ".repeat(512 * 1024); // 1 MiB of text without a digit

/** A search page whose result banner holds LEVELS nested spans around FILL, and one result. */
function bannerPage(): string {
  return `<!doctype html><html><head><script>ue_pty='Search';</script></head><body>` +
    `<div data-component-type="s-result-info-bar"><h2>${"<span>".repeat(LEVELS)}${FILL}` +
    `${"</span>".repeat(LEVELS)}</h2></div><div class="s-main-slot">` +
    `<div data-component-type="s-search-result" data-asin="B000000001"><h2>` +
    `<a href="/dp/B000000001"><span>Item</span></a></h2>` +
    `<span class="a-price"><span class="a-offscreen">$1.00</span></span></div></div></body></html>`;
}

/** A product page whose feature bullets are 60 lists nested in each other around FILL. */
function bulletsPage(): string {
  return `<!doctype html><html><head><title>x</title><script>ue_pty='Detail';</script></head>` +
    `<body><input type="hidden" id="ASIN" value="B0HOSTILE1"><span id="productTitle">T</span>` +
    `<div id="feature-bullets">${"<ul><li>".repeat(60)}${FILL}${"</li></ul>".repeat(60)}` +
    `</div></body></html>`;
}

const job = (parser: "search" | "product") => ({
  parser,
  url: "https://www.amazon.com/s?k=x",
  marketplace: "US",
  status: 200,
  contentType: "text/html",
  wantLocation: false,
});
const bytes = (html: string) => new TextEncoder().encode(html);

Deno.test("text read past the page's budget ends the reading with PageTooCostly; outside a budget nothing is counted", () => {
  // In a span: a block's edges read as spaces, which count as text read too.
  const doc = parseHtml(`<span>${"x".repeat(1000)}</span>`);
  assert.equal(text(doc).length, 1000);
  assert.throws(() => withinBudget({ chars: 999, ms: 60_000 }, () => text(doc)), PageTooCostly);
  assert.equal(withinBudget({ chars: 1000, ms: 60_000 }, () => text(doc)).length, 1000);
  assert.throws(
    () => withinBudget({ chars: 1e9, ms: -1 }, () => text(doc)),
    /took longer than -1 ms/,
    "past the deadline",
  );
});

Deno.test("a search banner of nested spans is an unread page, not a paid answer; nested bullets are read once", () => {
  const search = readPage(job("search"), bytes(bannerPage()));
  assert.equal(search.parsed?.ok, false, "was: ok, a one-result answer, after 120 copies");
  assert.match((search.parsed as { message: string }).message, /characters of text/);

  const product = readPage(job("product"), bytes(bulletsPage()));
  assert.ok(product.parsed?.ok, JSON.stringify(product.parsed).slice(0, 300));
  const bullets = (product.parsed as { value: { feature_bullets: string[] } }).value
    .feature_bullets;
  assert.equal(bullets.length, 1, "the outermost bullet only (was: one per level)");
  assert.equal(bullets[0], FILL.trim());
});

Deno.test("over HTTP, inline: a hostile search page is an uncharged 502", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response(bannerPage(), { headers: { "content-type": "text/html" } }),
  );
  try {
    await using rig = await startRig({ upstream: `origin:http://127.0.0.1:${server.addr.port}` });
    const r = await rig.call("/v1/products/search?query=hostile");
    assert.equal(r.status, 502, JSON.stringify(r.body).slice(0, 300));
    assert.equal((r.body.error as { code: string }).code, "upstream_error");
    assert.equal(r.headers.get("x-credits-cost"), "0");
  } finally {
    await server.shutdown();
  }
});

Deno.test("a search from a list of nested elements finds what css-select finds, from its outermost members once", () => {
  const doc = parseHtml(
    `<div id="a"><ul><li>1</li><li><div id="b"><ol><li>2</li></ol></div></li></ul></div>` +
      `<div id="c"><li>3</li></div>`,
  );
  const [a, b, c] = ["a", "b", "c"].map((id) => selectOne<AnyNode, Element>(`#${id}`, doc)!);
  for (const list of [[a, b, c], [b, a], [c, b, b]]) {
    for (const selector of ["li", "ul li", "div li", "ol > li"]) {
      assert.deepEqual(
        all(list, selector).map((e) => text(e)),
        selectAll<AnyNode, Element>(selector, list).map((e) => text(e)),
        `${selector} from ${list.map((e) => e.attribs.id)}`,
      );
      assert.equal(one(list, selector), selectOne(selector, list), selector);
    }
  }
});

Deno.test("a reviews page of 30,000 histogram tables under 120 levels is read (was: 6 s; 99,500 took 64 s)", () => {
  const html =
    `<html><head><title>x</title><script>ue_pty='CustomerReviews'</script></head><body>` +
    `<div id="cm_cr-review_list"></div><div id="histogramTable">${"<div>".repeat(120)}` +
    `${'<b id="histogramTable"></b>'.repeat(30_000)}${"</div>".repeat(120)}</div></body></html>`;
  const read = readPage({ ...job("search"), parser: "reviews" }, bytes(html));
  assert.ok(read.parsed?.ok, JSON.stringify(read.parsed));
  const summary = (read.parsed as { value: { summary: { breakdown: object } } }).value.summary;
  assert.deepEqual(summary.breakdown, {});
});

Deno.test("image JSON nested past 16 levels or over 1 MiB is not parsed (8 MB of brackets held 500 MB)", () => {
  const page = (initial: string) =>
    `<script>var d={'colorImages': { 'initial': ${initial}}}</script>`;
  const item = '{"hiRes":"https://m.media-amazon.com/images/I/41OppoDa9PL._AC_SL1500_.jpg"}';
  assert.equal(colorImages(page(`[${item}]`))?.length, 1);
  assert.equal(colorImages(page(`${"[".repeat(17)}${"]".repeat(17)}`)), null, "was []");
  assert.equal(colorImages(page(`[${Array(20_000).fill(item).join(",")}]`)), null, "over 1 MiB");
  assert.equal(balancedJson("[[1]]", 0, Infinity, 1), "");
  assert.equal(balancedJson("[[1]]", 0, Infinity, 2), "[[1]]");
});

Deno.test("a product page of 120 nested detail sections around 30,000 rows is read, each row once (was: 4 s)", () => {
  const html = `<html><head><title>x</title></head><body><span id="productTitle">T</span>` +
    `<input type="hidden" id="ASIN" value="B0ATTACK01">` +
    `${'<div id="prodDetails"><table id="productDetails_techSpec_section_1">'.repeat(60)}` +
    `<tr><th>Brand</th><td>Acme</td></tr>${"<tr></tr>".repeat(30_000)}` +
    `${"</table></div>".repeat(60)}</body></html>`;
  const read = readPage(job("product"), bytes(html));
  assert.ok(read.parsed?.ok, JSON.stringify(read.parsed).slice(0, 300));
  const value = (read.parsed as { value: { brand: string } }).value;
  assert.equal(value.brand, "Acme");
});

Deno.test("a search card's title read from 60 nested headings of whitespace counts in the page's budget (was: a charged answer)", () => {
  const html = `<html><head><title>x</title></head><body><div class="s-main-slot s-result-list">` +
    `<div data-component-type="s-search-result" data-asin="B000000001" class="s-result-item">` +
    `<span class="a-price"><span class="a-offscreen">$1.00</span></span>` +
    `${"<h2><span>".repeat(60)}${" \n".repeat(512 * 1024)}${"</span></h2>".repeat(60)}` +
    `</div></div></body></html>`;
  const read = readPage(job("search"), bytes(html));
  assert.equal(read.parsed?.ok, false, "was: ok, after 60 copies of the whitespace");
  assert.match((read.parsed as { message: string }).message, /characters of text/);
});

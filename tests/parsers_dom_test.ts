import assert from "node:assert/strict";
import { selectAll } from "css-select";
import {
  all,
  firstOfEach,
  MAX_DEPTH,
  one,
  parseHtml,
  parseRegions,
  ratingFrom,
  splitSelectorList,
  text,
} from "../parsers/dom.ts";
import { fixture } from "./fixture.ts";
import { shape } from "./dom_shape.ts";
import { captureSections } from "../parsers/sections.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { PARSERS } from "../parsers/mod.ts";

const PAGE = `<html><head><script>var x = "<div id=a>";</script></head><body>
<div id="nav"><a href="/n">nav</a></div>
<ul class="list"><li class="card" data-asin="A1">one <b>bold</b></li><li class="card widget">skip <i class="card">inner</i></li>
<li class="card" data-asin="A2">two<script>track()</script></li></ul>
<div id="footer"><li class="card" data-asin="A3">late</li></div></body></html>`;

const cards = (name: string, attr: (n: string) => string | undefined) => {
  if (attr("id") === "footer") return "stop";
  if (attr("class")?.includes("widget")) return "skip";
  if (name === "li") return "keep";
};

Deno.test("parseRegions() keeps chosen subtrees in page order and skips and stops as told", () => {
  const doc = parseRegions(PAGE, cards);
  assert.deepEqual(doc.children.map((c) => text(c)), ["one bold", "two"]);
  assert.deepEqual(all(doc, "li").map((li) => li.attribs["data-asin"]), ["A1", "A2"]);
  assert.equal(one(doc, "i"), null, "nothing inside a skipped element is kept");
});

Deno.test("parseRegions() builds subtrees the whole-page DOM would build", async () => {
  const html = await fixture("search/amazon.com__alaa-laptop.html");
  const isCard = (_: string, attr: (n: string) => string | undefined) =>
    attr("data-component-type") === "s-search-result" ? "keep" as const : undefined;
  const kept = parseRegions(html, isCard).children;
  const full = all(parseHtml(html), '[data-component-type="s-search-result"]');
  assert.equal(kept.length, full.length);
  assert.deepEqual(kept.map((c) => text(c)), full.map((c) => text(c)));
  assert.deepEqual(all(kept, "a[href]").length, all(full, "a[href]").length);
});

Deno.test("parseRegions() drops the elements `prune` names inside kept regions", () => {
  const doc = parseRegions(PAGE, (name) => name === "ul" ? "keep" : undefined, {
    prune: (name, attr) => name === "b" || attr("class") === "card widget",
  });
  assert.equal(text(doc), "one two");
  assert.deepEqual(all(doc, "li").map((li) => li.attribs["data-asin"]), ["A1", "A2"]);
});

Deno.test("parseRegions() starts at the tag holding the first match of `from`", () => {
  const doc = parseRegions(
    PAGE,
    (name) => name === "li" || name === "a" ? "keep" : undefined,
    { from: /class="list"/ },
  );
  assert.equal(one(doc, "a"), null, "markup before the match is not read");
  assert.equal(all(doc, "li").length, 4);
  const whole = parseRegions(PAGE, (name) => name === "a" ? "keep" : undefined, {
    from: /no such marker/,
  });
  assert.equal(all(whole, "a").length, 1, "without a match the whole page is read");
});

Deno.test("parseRegions() drops a start tag cut off by the end of the text, as parseDocument does", () => {
  const cut = '<div class="keep"><span>a</span><img src="x.jpg" alt="cut';
  const doc = parseRegions(cut, (_, attr) => attr("class") === "keep" ? "keep" : undefined);
  assert.equal(one(doc, "img"), null);
  assert.equal(one(parseHtml(cut), "img"), null);
  assert.equal(text(doc), "a");
});

Deno.test("parseRegions() ignores the attributes of a form nested in a form", () => {
  const html =
    '<form id="outer"><div class="x"><form id="inner" action="/y"><p>t</p></form></div></form>';
  const doc = parseRegions(html, (name) => name === "div" ? "keep" : undefined);
  assert.deepEqual(one(doc, "div")?.attribs, one(parseHtml(html), "div")?.attribs);
  assert.deepEqual(one(doc, "div")?.attribs, { class: "x" });
});

Deno.test("text() leaves out script, style and noscript bodies", () => {
  const doc = parseHtml(
    "<p>a<script>x()</script> b<style>.c{}</style><noscript>n</noscript>  c</p>",
  );
  assert.equal(text(doc), "a b c");
});

Deno.test("one() and all() match as css-select does from a nested root", () => {
  const doc = parseHtml(
    '<div class="row"><section><div class="row"><span class="n">1</span></div><span class="n">2</span></section></div>',
  );
  const section = one(doc, "section")!;
  for (const selector of [".row .n", ".n", "div.row > span, .n", "section .n"]) {
    assert.deepEqual(all(section, selector), selectAll(selector, section), selector);
    assert.equal(one(section, selector), selectAll(selector, section)[0] ?? null, selector);
  }
  assert.equal(all(section, ".row .n").length, 1, "an ancestor of the root does not count");
});

Deno.test("splitSelectorList() splits on top-level commas only", () => {
  assert.deepEqual(splitSelectorList("a, b[x='1,2'], :not(c, d)"), [
    "a",
    "b[x='1,2']",
    ":not(c, d)",
  ]);
});

Deno.test("parseRegions() excise drops matched elements untokenized, as prune drops them", () => {
  const html = '<div id="keep"><p>a</p><div id="menu-1" class="m"><div><b>x</b></div><div>y</div>' +
    '</div><span>b</span><div id="menu-2" class="m">z</div><i>c</i></div>';
  const keep = (_: string, attr: (n: string) => string | undefined) =>
    attr("id") === "keep" ? "keep" as const : undefined;
  const pruned = parseRegions(html, keep, { prune: (_, attr) => /menu-/.test(attr("id") ?? "") });
  const excised = parseRegions(html, keep, { excise: /menu-\d/ });
  assert.deepEqual(shape(excised.children), shape(pruned.children));
  assert.deepEqual(shape(excised.children), [[
    "div",
    { id: "keep" },
    [["p", {}, ["a"]], ["span", {}, ["b"]], ["i", {}, ["c"]]],
  ]]);
});

Deno.test("parseRegions() excise gives what prune gives, whatever the markup around the match", () => {
  const keepAll = () => "keep" as const;
  const prune = (_: string, attr: (n: string) => string | undefined) =>
    /menu-\d/.test(attr("id") ?? "");
  for (
    const html of [
      // the match is in a script's text, not in a tag: nothing to cut
      "<div><script>var t = '<div id=\"menu-1\">x</div>';</script><p>a</p></div>",
      // in a comment, in an attribute value, in text
      '<div><!-- <div id="menu-1">x</div> --><p>a</p></div>',
      "<div title='<div id=\"menu-1\">'><p>a</p></div>",
      "<p>menu-1</p><div>b</div>",
      // the element holds a comment or a script whose text holds its end tag: read past them
      '<div id="menu-1"><!-- </div> --><p>a</p></div><p>b</p>',
      '<div id="menu-1"><script>"</div>"</script></div><p>b</p>',
      '<div id="menu-1"><style>i::after { content: "</div>" }</style></div><p>b</p>',
      '<div id="menu-1"><textarea></div></textarea></div><p>b</p>',
      '<div id="menu-1"><DIV>x</div><p>y</p></DIV><p>b</p>',
      // the element never ends (a cut-off page), or a plaintext in it never does
      '<section><div id="menu-1"><div>a</div>',
      '<div id="menu-1"><plaintext></plaintext></div><p>b</p>',
      // an open p that the element's start tag closes: cutting would leave it open
      '<div><p>a<div id="menu-1">x</div>b</p></div>',
      // a second form's end tag, or a stray one, closes the open form; a stray body end tag closes
      // everything up to the body
      '<form><div id="menu-1"><form></form></div><input></form>',
      '<form><div id="menu-1"><b></form>x</b></div><input></form>',
      '<body><div id="menu-1"></body></div><b>x</b></body>',
      // a stray end tag of another element open outside closes it; one in a comment does not,
      // and neither do balanced ones
      '<span><div id="menu-1"></span>x</div><b>y</b></span><i>z</i>',
      '<span><div id="menu-1"><!-- </span> --></div><b>y</b></span><i>z</i>',
      '<span><div id="menu-1"><span>a</span></div><b>y</b></span><i>z</i>',
      '<span><i><div id="menu-1"><b></I>x</b></div></i><b>y</b></span>',
      // the match follows a ">" in its tag, or lies in the tag's name, or in the text after it
      '<div data-x="a>b" id="menu-1">x</div><b>y</b>',
      '<menu-1 id="menu-2"><b>x</b></menu-1><i>y</i>',
      '<menu-1 class="m"><b>x</b></menu-1><i>y</i>',
      '<div class="t">a > menu-1 <b>x</b></div><i>y</i>',
      '<div id="menu-1" class="menu-2"><p>a<div id="menu-3">x</div>b</p></div>',
      // inside svg, a style's text is markup: here a comment that runs to the end
      '<svg><g id="menu-1"><style>"<!--"</style></g><b>x</b><!-- --></svg>',
      '<div id="menu-1"><svg><style>"<!--"</style></svg></div><b>x</b><!-- -->',
      '<div id="menu-1"><svg><title>icon</title></svg></div><b>x</b>',
      '<svg id="menu-1"><style>"<!--"</style></svg><b>x</b><!-- -->',
      // a CDATA section or a declaration hides what looks like a start tag
      '<div id="menu-1"><![CDATA[<div>]]></div><b>x</b></div><i>y</i>',
      '<div id="menu-1"><!x <div></div><b>x</b></div><i>y</i>',
      '<div id="menu-1"><?x <div></div><b>x</b></div><i>y</i>',
      // an attribute value, quoted or not, holds what looks like a tag: it is no tag
      '<div id="menu-1"><span title="</div>">x</span></div><b>y</b>',
      "<div id=\"menu-1\"><span title='<div>'>x</span></div><b>y</b></div><i>z</i>",
      '<div id="menu-1" data-x="</div>">x</div><b>y</b>',
      '<div id="menu-1"><span title=</div>x</span></div><b>y</b>',
      '<div id="menu-1"><span title = "<!--">x</span></div><b>y</b><!-- --></div><i>z</i>',
      '<div id="menu-1"><span title="<script>">x</span></div><b>y</b></script></div><i>z</i>',
      '<div id="menu-1"><span a=x</div>y</span></div><b>z</b>',
      '<div id="menu-1"><span a="1" b=\'<div>\' c=<div>x</span></div><b>y</b></div><i>z</i>',
      '<div id="menu-1"><script data-x="</script>">"</div>"</script></div><b>y</b>',
      '<div id="menu-1"><b></b a="<div>"></div><i>y</i></div><i>z</i>',
      '<div id="menu-1"><span =a="x>y <div>">z</span></div><b>y</b></div><i>w</i>',
      // ... and a "=" in a value, or in text, starts no value
      '<div><div id="menu-1"><input value="YQ=="><div class="a">x</div></div><b>y</b></div><i>z</i>',
      '<div id="menu-1">a="<b>x</b>"</div><i>y</i>',
      '<div><div id="menu-1">a="<div>"x</div></div><b>y</b></div><i>z</i>',
      '<div id="menu-1"><i>a="</i><div>x</div></div><b>y</b>',
    ]
  ) {
    // Whatever excise leaves in place, prune drops after tokenizing.
    const doc = `<main>${html}</main>`;
    const excised = parseRegions(doc, keepAll, { excise: /menu-\d/, prune });
    const pruned = parseRegions(doc, keepAll, { prune });
    assert.deepEqual(shape(excised.children), shape(pruned.children), html);
  }
});

Deno.test("firstOfEach() finds what one() finds for each selector, in one walk", () => {
  const doc = parseHtml(
    '<div class="row"><section><div class="row"><span class="n">1</span></div>' +
      '<span class="n" id="two">2</span><a href="/x">l</a></section></div>',
  );
  const section = one(doc, "section")!;
  const selectors = [".row .n", "#two", "a[href]", "i.none", "div.row > span, .n", "section .n"];
  assert.deepEqual(firstOfEach(section, selectors), selectors.map((s) => one(section, s)));
  assert.deepEqual(firstOfEach(doc, selectors), selectors.map((s) => one(doc, s)));
});

Deno.test("a page nested deeper than any real one is refused as it is read, by every DOM builder and parser", () => {
  // htmlparser2 shifts an array of open elements at every tag: unrefused, this page costs
  // seconds, and 8 MiB of it minutes.
  const deep = "<html><body>" + "<div>".repeat(100_000) + "x";
  const refused = (f: () => unknown) =>
    assert.throws(f, (e) => e instanceof ParseError && /more than 128 deep/.test(e.message));
  refused(() => parseHtml(deep));
  refused(() => parseRegions(deep, () => "keep"));
  refused(() => parseRegions(deep, () => undefined));
  refused(() => captureSections(deep, { ids: new Set() }));
  for (const type of ["search", "product", "offers", "reviews", "review", "deals"] as const) {
    refused(() => PARSERS[type](deep, { marketplace: "US" }));
  }
  // As deep as allowed is read.
  const doc = parseHtml("<div>".repeat(MAX_DEPTH - 2) + "x");
  assert.equal(text(doc), "x");
});

Deno.test("ratingFrom() reads a star rating in each marketplace's wording", () => {
  const cases: [string, number][] = [
    ["4.5 out of 5 stars", 4.5],
    ["4,5 von 5 Sternen", 4.5],
    ["5つ星のうち4.2", 4.2],
    ["4,6 av 5 stjärnor", 4.6], // sv (probe BD: read as no rating before)
    ["4,6 na 5 gwiazdek", 4.6], // pl
    ["4.6 من 5 نجوم", 4.6], // ar
  ];
  for (const [label, rating] of cases) assert.equal(ratingFrom(label), rating, label);
  assert.equal(ratingFrom("na 5 gwiazdek"), null);
});

Deno.test("a page nested exactly 128 elements deep is read, 129 deep refused (README: more than 128)", () => {
  assert.equal(MAX_DEPTH, 128);
  const nested = (n: number) => "<div>".repeat(n) + "x";
  const refused = (f: () => unknown) =>
    assert.throws(f, (e) => e instanceof ParseError && /more than 128 deep/.test(e.message));
  assert.equal(text(parseHtml(nested(128))), "x");
  assert.equal(text(parseRegions(nested(128), () => "keep")), "x");
  refused(() => parseHtml(nested(129)));
  refused(() => parseRegions(nested(129), () => "keep"));
});

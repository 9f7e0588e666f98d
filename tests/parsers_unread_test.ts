import assert from "node:assert/strict";
import { captureSections } from "../parsers/sections.ts";
import { PRODUCT_UNREAD, readSections } from "../parsers/product.ts";
import { fixture, fixtureNames } from "./fixture.ts";
import { captured } from "./dom_shape.ts";

/**
 * The src of every img a pass reads, leaving out elements whose start tag matches `starts` where it
 * may (`null`: none left out).
 */
function imagesRead(html: string, starts: RegExp | null = /_feature_div/): string[] {
  const seen: string[] = [];
  captureSections(html, {
    ids: new Set(),
    tags: new Set(["img"]),
    onTag: (_, a) => seen.push(a.src),
    unread: starts ? { starts } : undefined,
  });
  return seen;
}

Deno.test("product pages: leaving the unread widgets out changes nothing the reader reads", async () => {
  let cutSomewhere = 0;
  for (const name of fixtureNames("product")) {
    const html = await fixture(name);
    const cut = readSections(html);
    const whole = readSections(html, null);
    assert.deepEqual(captured(cut.page), captured(whole.page), name);
    assert.deepEqual(cut.tags, whole.tags, name);
    // Tags inside an element left unread never reach onTag: fewer images means a cut was made.
    const imagesLeft = imagesRead(html, PRODUCT_UNREAD.starts).length;
    if (imagesLeft < imagesRead(html, null).length) cutSomewhere++;
  }
  assert.ok(cutSomewhere >= 30, `cuts were made on only ${cutSomewhere} pages`);
});

/** A pass keeping `ids`, leaving out feature divs unless they hold an id starting "kept". */
function featureDivPass(html: string, ids: string[]) {
  const seenImages: string[] = [];
  const c = captureSections(html, {
    ids: new Set(ids),
    tags: new Set(["img"]),
    onTag: (_, a) => seenImages.push(a.src),
    unread: { starts: /_feature_div/, needed: /id="kept/ },
  });
  return { seenImages, c };
}

Deno.test("captureSections() leaves out only elements outside kept sections that hold nothing needed", () => {
  const html = '<div id="a_feature_div"><span id="kept">one</span><img src="1"></div>' +
    '<div id="b_feature_div"><i>two</i><img src="2"></div>' +
    '<div id="kept2"><div id="c_feature_div"><b>three</b><img src="3"></div></div>' +
    "<script>'<div id=\"d_feature_div\"><img src=4></div>'</script>";
  const { seenImages, c } = featureDivPass(html, ["kept", "kept2"]);
  // a holds a kept section: read. b holds nothing needed: left out. c is inside a kept section:
  // read, and kept whole. The "element" in the script's text is not markup.
  assert.deepEqual(seenImages, ["1", "3"]);
  const third = ["div", { id: "c_feature_div" }, [["b", {}, ["three"]], ["img", { src: "3" }, []]]];
  assert.deepEqual(captured(c), {
    byId: [ // in the order elements end
      ["kept", [["span", { id: "kept" }, ["one"]]]],
      ["c_feature_div", [third]],
      ["kept2", [["div", { id: "kept2" }, [third]]]],
    ],
    seen: [],
  });
});

Deno.test("captureSections() finds what is needed in the rest of a tag it reads past", () => {
  // The bound reads past a tag whose value holds a "<" (no tag there), and past a script's start
  // tag: a needed id later in the same tag must still keep its element from being cut.
  const html = '<div id="a_feature_div"><span title="<b>" id="kept">one</span><img src="1"></div>' +
    '<div id="b_feature_div"><span title="<b>">two</span><img src="2"></div>' +
    '<div id="c_feature_div"><script data-x="<" id="kept3"></script><img src="3"></div>' +
    '<div id="d_feature_div"><script data-x="<"></script><img src="4"></div>';
  const { seenImages, c } = featureDivPass(html, ["kept"]);
  assert.deepEqual(seenImages, ["1", "3"]);
  assert.deepEqual(captured(c), {
    byId: [["kept", [["span", { id: "kept" }, ["one"]]]]],
    seen: [],
  });
});

Deno.test("captureSections() ends an abrupt comment (<!--> or <!--->) where htmlparser2 does", () => {
  for (const comment of ["<!-->", "<!--->", "<!---->", "<!-- -- -->"]) {
    // Read on to the later "-->", the bound would take the kept span into the widget and cut it.
    const html = `<div id="a_feature_div">${comment}</div><span id="kept">T</span>--></div>` +
      '<div id="b_feature_div"><img src="2"></div>';
    const cut = captureSections(html, {
      ids: new Set(["kept"]),
      unread: { starts: /_feature_div/ },
    });
    const whole = captureSections(html, { ids: new Set(["kept"]) });
    assert.deepEqual(captured(cut), captured(whole), comment);
    assert.deepEqual(captured(cut), {
      byId: [["kept", [["span", { id: "kept" }, ["T"]]]]],
      seen: [],
    });
    assert.deepEqual(imagesRead(html), [], comment); // the widgets are still left out
  }
});

Deno.test("product pages: a widget holding an abrupt comment before the title section leaves the title read (probe HO)", async () => {
  const html = await fixture("product/amazon.ca__app-B01GAWQSFW.html");
  const at = html.lastIndexOf("<", html.indexOf('id="titleSection"'));
  assert.ok(at > 0);
  for (const comment of ["<!-->", "<!--->"]) {
    const page = html.slice(0, at) + `<div id="zz_feature_div">${comment}</div>` + html.slice(at);
    const cut = readSections(page);
    const whole = readSections(page, null);
    assert.ok(cut.page.byId.has("productTitle"), comment);
    assert.deepEqual(captured(cut.page), captured(whole.page), comment);
    assert.deepEqual(cut.tags, whole.tags, comment);
  }
});

Deno.test("captureSections() reads a kept section whose start tag comes just before a cut", () => {
  // The kept span's start tag is still pending when the pass reaches the cut: it must count.
  const html = '<span id="kept"><div id="x_feature_div"><i>in</i></div></span>';
  const c = captureSections(html, {
    ids: new Set(["kept"]),
    unread: { starts: /_feature_div/ },
  });
  const inner = ["div", { id: "x_feature_div" }, [["i", {}, ["in"]]]];
  assert.deepEqual(captured(c), {
    byId: [["x_feature_div", [inner]], ["kept", [["span", { id: "kept" }, [inner]]]]],
    seen: [],
  });
});

Deno.test("captureSections() stops looking for elements to leave out once bounding them has read the page three times over", () => {
  // Each unclosed element is read to the end of the page and left in place: without a bound on
  // that reading, a page of many would cost time quadratic in its size.
  const unclosed = '<div id="a_feature_div"><i>x</i>'.repeat(50);
  const html = '<div id="b_feature_div"><img src="early"></div>' + unclosed +
    '<div id="c_feature_div"><img src="late"></div>';
  assert.deepEqual(imagesRead(html), ["late"]);
});

Deno.test("captureSections() charges the search back from each marker to its tag, so markers in a long text cost linear time", () => {
  // Each marker in a text without tags is searched back from to the page's last "<": without a
  // charge for that reading, a page of many would cost time quadratic in its size.
  const html = "<p>" + "x_feature_div ".repeat(50) +
    '</p><div id="c_feature_div"><img src="late"></div>';
  assert.deepEqual(imagesRead(html), ["late"]);
});

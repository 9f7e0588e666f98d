/**
 * Elements the unread pass may leave out, bounded where the tokenizer would end them: in svg and
 * math, around forms, plaintext and stray end tags. Each page is read twice, cut and whole; the
 * reading must be the same (probe HO's U5-U22 cases).
 */
import assert from "node:assert/strict";
import { captureSections } from "../parsers/sections.ts";
import { captured } from "./dom_shape.ts";

/** The "kept" section read with the feature divs left out where they may be, and read whole. */
function cutAndWhole(html: string): { cut: unknown; whole: unknown } {
  const ids = new Set(["kept"]);
  return {
    cut: captured(captureSections(html, { ids, unread: { starts: /_feature_div/ } })),
    whole: captured(captureSections(html, { ids })),
  };
}

/** The text of the "kept" element(s) a reading holds. */
function keptText(reading: unknown): string {
  const byId = (reading as { byId: [string, unknown][] }).byId;
  return JSON.stringify(byId.filter(([id]) => id === "kept").map(([, els]) => els));
}

Deno.test("captureSections() reads a math element's title as markup, so a kept section inside it is read", () => {
  const html = '<math id="a_feature_div"><title><span id="kept">T</span></title></math>';
  const { cut, whole } = cutAndWhole(html);
  assert.deepEqual(cut, whole);
  assert.match(keptText(cut), /"T"/);
});

Deno.test("captureSections() reads an svg title's body as markup, so a kept section inside it keeps its widget", () => {
  const html = '<div id="a_feature_div"><svg><title><span id="kept">T</span></title></svg></div>';
  const { cut, whole } = cutAndWhole(html);
  assert.deepEqual(cut, whole);
  assert.match(keptText(cut), /"T"/);
});

Deno.test("captureSections() does not leave out a widget that starts inside svg", () => {
  const html = '<svg><g id="a_feature_div"><title><span id="kept">T</span></title></g></svg>';
  const { cut, whole } = cutAndWhole(html);
  assert.deepEqual(cut, whole);
  assert.match(keptText(cut), /"T"/);
});

Deno.test("captureSections() keeps a widget that ends a form open outside it, so a later </form> is read as a stray", () => {
  // The widget's </form> closes the outer form; left out, the form would stay open and the
  // kept span's </form> would end it (and the span) there: "A" instead of "AB".
  const html = '<form><div id="a_feature_div"></form></div><span id="kept">A</form>B</span>';
  const { cut, whole } = cutAndWhole(html);
  assert.deepEqual(cut, whole);
  assert.match(keptText(whole), /"AB"|"A","B"/);
});

Deno.test("captureSections() keeps a widget holding a stray </div> that closes a div open outside it", () => {
  const html = '<div><span id="a_feature_div"></div></span><span id="kept">A</div>B</span>';
  const { cut, whole } = cutAndWhole(html);
  assert.deepEqual(cut, whole);
  assert.match(keptText(whole), /"AB"|"A","B"/);
});

Deno.test("captureSections() reads a widget holding <plaintext> as the tokenizer does: the rest of the page is its text", () => {
  // plaintext never ends: neither </plaintext> nor </div> closes it, so the kept span after the
  // widget is text, not markup, whether the widget is cut or read.
  for (
    const inner of ["<plaintext></plaintext></div>", "<plaintext></div></div>"]
  ) {
    const html = `<div id="a_feature_div">${inner}<span id="kept">T</span>`;
    const { cut, whole } = cutAndWhole(html);
    assert.deepEqual(cut, whole, inner);
    assert.deepEqual(keptText(whole), "[]", inner);
  }
});

/**
 * Whether the widget holding the marker `m` was left out: `m` is deliberately not in `needed`, so
 * it is seen only when the widget is read.
 */
function widgetLeftOut(html: string): boolean {
  const c = captureSections(html, {
    ids: new Set(["kept"]),
    markers: new Set(["m"]),
    unread: { starts: /_feature_div/ },
  });
  return !c.seen.has("m");
}

Deno.test("captureSections() leaves out a div widget inside an open list item or link: a div's start tag closes only an open p", () => {
  // htmlparser2 closes an open p at a div, and nothing else: inside an li or an a the cut
  // changes nothing but the widget's absence, so the widget is left out there.
  for (const open of ["<ul><li>", "<a href=/x>", "<table><tr><td>", "<h2>"]) {
    const html = `${open}<div id="a_feature_div"><i id="m"></i></div><span id="kept">K</span>`;
    assert.equal(widgetLeftOut(html), true, open);
    const { cut, whole } = cutAndWhole(html);
    assert.deepEqual(cut, whole, open);
  }
  // Inside an open p the div would close it, so the widget is read.
  assert.equal(widgetLeftOut('<p><div id="a_feature_div"><i id="m"></i></div>'), false);
  // A widget whose own start tag closes the open element (an li in an li) is read too.
  assert.equal(widgetLeftOut('<ul><li><li id="a_feature_div"><i id="m"></i></li></ul>'), false);
});

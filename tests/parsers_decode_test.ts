/**
 * Bytes to text (parsers/decode.ts) for pages whose charset is named late or wrongly, and the
 * page reading's refusal of a page read in the wrong charset (probe CF).
 */
import assert from "node:assert/strict";
import { decodeHtml } from "../parsers/decode.ts";
import { readPage } from "../upstream/page_read.ts";
import { shiftJis, windows1252 } from "./legacy_charsets.ts";
import { fixtureBytes } from "./fixture.ts";

const TITLE = "防虫香 バラの香り 日本製";

function page(meta: string, padding = 0): string {
  return `<!doctype html><html><head><!-- ${"x".repeat(padding)} -->${meta}` +
    `<title>${TITLE}</title></head><body><span id="productTitle">${TITLE}</span></body></html>`;
}

/** A product page job under a UTF-8 header, as the browser transport hands one over. */
function productJob(url: string, marketplace: string) {
  return {
    parser: "product" as const,
    url,
    marketplace,
    status: 200,
    contentType: "text/html; charset=UTF-8",
    wantLocation: false,
  };
}

/** A corpus page's text, read without the decoder under test (fixture() uses it). */
async function corpusText(name: string): Promise<string> {
  return new TextDecoder().decode(await fixtureBytes(name));
}

Deno.test("decodeHtml() reads a Shift_JIS page whose meta charset comes after the first 4 KiB", () => {
  const bytes = shiftJis(page('<meta charset="shift_jis">', 5_000));
  assert.ok(decodeHtml(bytes).includes(TITLE));
  assert.ok(decodeHtml(bytes, "text/html").includes(TITLE));
  // Named early, as before.
  assert.ok(decodeHtml(shiftJis(page('<meta charset="shift_jis">'))).includes(TITLE));
  // Valid UTF-8 keeps its own reading, whatever a later tag says.
  const utf8 = new TextEncoder().encode(page('<meta charset="shift_jis">', 5_000));
  assert.ok(decodeHtml(utf8, "text/html; charset=utf-8").includes(TITLE));
});

Deno.test("a page whose bytes are not in the charset it names is unread, not an answer of U+FFFD", async () => {
  const corpus = inEights(
    await corpusText("product/amazon.co.jp__jack-mobile-shoeido-bouchuko.html"),
  );
  const job = productJob("https://www.amazon.co.jp/dp/B002XA6AU4", "JP");
  const right = readPage(job, new TextEncoder().encode(corpus)).parsed;
  assert.ok(right?.ok, JSON.stringify(right));
  // The same page in Shift_JIS under a UTF-8 header, with no tag naming Shift_JIS.
  const wrong = readPage(job, shiftJis(corpus.replace(/charset=["']?utf-8/gi, "charset=utf-8")))
    .parsed;
  assert.ok(wrong && !wrong.ok, JSON.stringify(wrong).slice(0, 300));
  assert.equal(wrong.reason, "unrecognised");
  assert.match(wrong.message, /not in the character set/);
});

Deno.test("a page that shows U+FFFD itself (a seller's or reviewer's text) is read, however many", async () => {
  const corpus = inEights(
    await corpusText("product/amazon.co.jp__jack-mobile-shoeido-bouchuko.html"),
  );
  const title = "香源 松栄堂の防虫香 上品 防虫香 10袋入 #520138";
  assert.ok(corpus.includes(title));
  const shown = "\uFFFD".repeat(500);
  const read = readPage(
    productJob("https://www.amazon.co.jp/dp/B002XA6AU4", "JP"),
    new TextEncoder().encode(corpus.replaceAll(title, shown)),
  ).parsed;
  assert.ok(read?.ok, JSON.stringify(read));
  assert.equal((read.value as { title: string }).title, shown);
});

Deno.test("a windows-1252 page under a UTF-8 header is unread, however few its accented letters", async () => {
  const corpus = await corpusText("product/amazon.de__epic-B0BG6843GX.html");
  const job = productJob("https://www.amazon.de/dp/B0BG6843GX", "DE");
  assert.ok(readPage(job, new TextEncoder().encode(corpus)).parsed?.ok);
  const wrong = readPage(job, windows1252(corpus)).parsed;
  assert.ok(wrong && !wrong.ok, JSON.stringify(wrong).slice(0, 300));
  assert.match(wrong.message, /not in the character set/);
});

Deno.test("a UTF-8 page labelled windows-1252 with a stray byte is still read as UTF-8 (probe GO)", async () => {
  const corpus = await corpusText("product/amazon.de__epic-B0BG6843GX.html");
  const job = productJob("https://www.amazon.de/dp/B0BG6843GX", "DE");
  const title =
    (readPage(job, new TextEncoder().encode(corpus)).parsed as { value: { title: string } })
      .value.title;
  const utf8 = new TextEncoder().encode(corpus);
  const end = corpus.lastIndexOf("</html>");
  const cut = new TextEncoder().encode(corpus.slice(0, end)).length;
  // One byte that is no UTF-8 anywhere, here in the page's last text, and one mid-page.
  const stray = new Uint8Array([...utf8.subarray(0, cut), 0xff, ...utf8.subarray(cut)]);
  const mid = stray.length >> 1;
  const twice = new Uint8Array([...stray.subarray(0, mid), 0xfe, ...stray.subarray(mid)]);
  for (const bytes of [stray, twice]) {
    const read = readPage({ ...job, contentType: "text/html; charset=windows-1252" }, bytes).parsed;
    assert.ok(read?.ok, JSON.stringify(read).slice(0, 300));
    assert.equal((read.value as { title: string }).title, title);
  }
  // A page really in windows-1252 that holds a pair valid as UTF-8 ("Ã©") keeps its charset.
  const legacy = windows1252(corpus.replace("<title>", "<title>Ã©"));
  const read = readPage({ ...job, contentType: "text/html; charset=windows-1252" }, legacy).parsed;
  assert.ok(read?.ok);
  assert.equal((read.value as { title: string }).title, title);
});

Deno.test("a head of 52,000 unclosed '<meta' is read as UTF-8 (was: 4 s for the late charset's search)", () => {
  const head = "<meta".repeat(52_000);
  const bytes = new Uint8Array([...new TextEncoder().encode(head), 0xff]);
  assert.equal(decodeHtml(bytes, "text/html; charset=utf-8"), head + "\uFFFD");
  assert.equal(decodeHtml(bytes), head + "\uFFFD");
});

Deno.test("a UTF-8 page labelled windows-1252 or latin1 is read as UTF-8, not answered as mojibake", async () => {
  const corpus = await corpusText("product/amazon.de__epic-B0BG6843GX.html");
  const job = productJob("https://www.amazon.de/dp/B0BG6843GX", "DE");
  const right = readPage(job, new TextEncoder().encode(corpus)).parsed;
  assert.ok(right?.ok);
  const title = (right.value as { title: string }).title;
  assert.match(title, /[\u0080-\uffff]/, "the page's title has letters beyond ASCII to garble");
  const utf8 = new TextEncoder().encode(
    corpus.replace(/charset=["']?utf-8/gi, "charset=windows-1252"),
  );
  for (
    const contentType of [
      "text/html; charset=ISO-8859-1",
      "text/html; charset=windows-1252",
      "text/html",
    ]
  ) {
    const read = readPage({ ...job, contentType }, utf8).parsed;
    assert.ok(read?.ok, contentType);
    assert.equal((read.value as { title: string }).title, title, contentType);
  }
  // A page really in windows-1252, labelled so, keeps its own charset.
  const legacy = readPage(
    { ...job, contentType: "text/html; charset=windows-1252" },
    windows1252(corpus),
  ).parsed;
  assert.ok(legacy?.ok);
  assert.equal((legacy.value as { title: string }).title, title);
  // Seven-bit text keeps the charset it names (ISO-2022-JP is ASCII bytes throughout).
  const jis = new Uint8Array([0x1b, 0x24, 0x42, 0x46, 0x7c, 0x4b, 0x5c, 0x1b, 0x28, 0x42]);
  assert.equal(decodeHtml(jis, "text/html; charset=iso-2022-jp"), "日本");
});

/** The characters beyond ASCII in `text` that read well (U+FFFD not counted), as decode.ts counts. */
function beyondAscii(text: string): number {
  let good = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80 && c !== 0xfffd) good++;
  }
  return good;
}

/**
 * `corpus` with "é" added in a comment until its characters beyond ASCII are a multiple of eight,
 * so that one stray for eight of them is an exact count: `<=` and `<` are then told apart.
 */
function inEights(corpus: string): string {
  const end = corpus.lastIndexOf("</html>");
  const pad = (8 - beyondAscii(corpus) % 8) % 8;
  const padded = corpus.slice(0, end) + `<!-- ${"é".repeat(pad)} -->` + corpus.slice(end);
  assert.equal(beyondAscii(padded) % 8, 0);
  return padded;
}

/** `corpus` as UTF-8 with `n` stray bytes that are no UTF-8 (0xff) in a comment before </html>. */
function withStrayBytes(corpus: string, n: number): Uint8Array {
  const end = corpus.lastIndexOf("</html>");
  const enc = new TextEncoder();
  const stray = new Uint8Array(n * 2).map((_, i) => i % 2 ? 0x20 : 0xff);
  return new Uint8Array([
    ...enc.encode(corpus.slice(0, end) + "<!-- "),
    ...stray,
    ...enc.encode("-->" + corpus.slice(end)),
  ]);
}

Deno.test("a page read as UTF-8 is refused as garbled just past one U+FFFD for eight good characters, read just under (probe CG)", async () => {
  const corpus = inEights(
    await corpusText("product/amazon.co.jp__jack-mobile-shoeido-bouchuko.html"),
  );
  assert.ok(!corpus.includes("\uFFFD"));
  const good = beyondAscii(corpus);
  assert.ok(good > 200, `${good} characters beyond ASCII`);
  const job = productJob("https://www.amazon.co.jp/dp/B002XA6AU4", "JP");
  const under = readPage(job, withStrayBytes(corpus, good / 8)).parsed;
  assert.ok(under?.ok, JSON.stringify(under).slice(0, 300));
  const past = readPage(job, withStrayBytes(corpus, good / 8 + 1)).parsed;
  assert.ok(past && !past.ok, JSON.stringify(past).slice(0, 300));
  assert.match(past.message, /not in the character set/);
});

Deno.test("a UTF-8 page labelled windows-1252 is read as UTF-8 up to one stray byte for eight good characters, not past it (probe GO)", async () => {
  const corpus = inEights(
    await corpusText("product/amazon.co.jp__jack-mobile-shoeido-bouchuko.html"),
  );
  const good = beyondAscii(corpus);
  const job = {
    ...productJob("https://www.amazon.co.jp/dp/B002XA6AU4", "JP"),
    contentType: "text/html; charset=windows-1252",
  };
  const title = "香源 松栄堂の防虫香 上品 防虫香 10袋入 #520138";
  const under = readPage(job, withStrayBytes(corpus, good / 8)).parsed;
  assert.ok(under?.ok, JSON.stringify(under).slice(0, 300));
  assert.equal((under.value as { title: string }).title, title);
  // One more: the bytes are no longer taken for UTF-8 and are read in the charset named.
  const bytes = withStrayBytes(corpus, good / 8 + 1);
  const text = decodeHtml(bytes, job.contentType);
  assert.ok(!text.includes(title));
  assert.ok(!text.includes("\uFFFD"), "windows-1252 reads every byte");
  const past = readPage(job, bytes).parsed;
  assert.ok(!past?.ok || (past.value as { title: string }).title !== title);
});

Deno.test("a <meta charset=utf-16> on a page without a byte-order mark is a lie: the page is read as ASCII/UTF-8", () => {
  const html = '<!doctype html><html><head><meta charset="utf-16">' +
    '<title>Plain title</title></head><body><span id="productTitle">Plain title</span></body></html>';
  const bytes = new TextEncoder().encode(html);
  assert.equal(decodeHtml(bytes), html);
  assert.equal(decodeHtml(bytes, "text/html"), html);
  const named = html.replace(
    '<meta charset="utf-16">',
    '<meta http-equiv="Content-Type" content="text/html; charset=UTF-16LE">',
  );
  assert.equal(decodeHtml(new TextEncoder().encode(named)), named);
});

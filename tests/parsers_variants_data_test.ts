/**
 * How the variation matrix reads the twister's script data (parsers/variants.ts), on real corpus
 * product pages, some with their twister data edited in memory (each edit named where it is
 * made): where the dimension names come from, which variations are kept, the bounds on names,
 * and how entities in the values are read.
 */
import assert from "node:assert/strict";
import { parseProduct } from "../parsers/product.ts";
import type { Variant } from "../parsers/variants.ts";
import { fixture, fixtureMarketplace } from "./fixture.ts";
import { changedPage } from "./page_edit.ts";

async function page(file: string): Promise<string> {
  return await fixture(`product/${file}`);
}

function variants(file: string, html: string): Variant[] {
  return parseProduct(html, { marketplace: fixtureMarketplace(`product/${file}`) }).variants ?? [];
}

const edited = changedPage;

// ---- where the dimension names come from -------------------------------------------------------

Deno.test("variants: an empty dimensionsDisplay falls back to the dimension keys and their labels", async () => {
  // Unedited US page: its only "dimensionsDisplay" is [], while "dimensions" ["pattern_name"] is
  // labelled {"pattern_name":"Pattern Name"}; the twister lists the page itself, "Module".
  const file = "amazon.com__metascraper-B0057OC5O8.html";
  assert.deepEqual(variants(file, await page(file)), [
    { asin: "B0057OC5O8", dimensions: { "Pattern Name": "Module" }, is_current: true },
  ]);
});

Deno.test("variants: a dimension key without a label is no twister, not a dimension named 'undefined'", async () => {
  // US page of "dimensions" ["color_name","size_name"] and no dimensionsDisplay.
  const file = "amazon.com__msheraz-B0823MDHDJ.html";
  const html = await page(file);
  assert.ok(variants(file, html).length > 0);
  assert.ok(variants(file, html).every((v) => Object.keys(v.dimensions).join() === "Color,Size"));
  // Edit: the labels lose "size_name".
  const unlabelled = edited(
    html,
    '"variationDisplayLabels" : {"size_name":"Size","color_name":"Color"}',
    '"variationDisplayLabels" : {"color_name":"Color"}',
  );
  assert.deepEqual(variants(file, unlabelled), []);
});

// ---- bounds on the names -----------------------------------------------------------------------

/**
 * The page with `extra` more dimensions after its own two, "Color" and "Style": names "Extra 1"…,
 * and every variation given the values "x1"… for them.
 */
function withExtraDimensions(html: string, extra: number): string {
  const more = Array.from({ length: extra }, (_, i) => i + 1);
  const names = JSON.stringify(["Color", "Style", ...more.map((i) => `Extra ${i}`)]);
  const page = edited(
    html,
    '"dimensionsDisplay" : ["Color","Style"]',
    `"dimensionsDisplay" : ${names}`,
  );
  const block = /"dimensionValuesDisplayData" : \{[^}]*\}/.exec(page)![0];
  const values = more.map((i) => `"x${i}"`).join(",");
  return edited(page, block, block.replaceAll('"]', `",${values}]`));
}

Deno.test("variants: a twister of eight dimensions is read, one of nine is none", async () => {
  // US page of four variations of ["Color","Style"], the page's own White, Caller ID.
  const file = "amazon.com__webapis-B004OA758C.html";
  const html = await page(file);
  const eight = variants(file, withExtraDimensions(html, 6));
  assert.equal(eight.length, 4);
  assert.deepEqual(eight.find((v) => v.is_current), {
    asin: "B004OA758C",
    dimensions: {
      Color: "White",
      Style: "Caller ID",
      "Extra 1": "x1",
      "Extra 2": "x2",
      "Extra 3": "x3",
      "Extra 4": "x4",
      "Extra 5": "x5",
      "Extra 6": "x6",
    },
    is_current: true,
  });
  // Every variant repeats every name: the count of names is bounded, past it no twister.
  assert.deepEqual(variants(file, withExtraDimensions(html, 7)), []);
});

Deno.test("variants: a dimension name of 100 characters is read, one of 101 is no twister", async () => {
  // DE page of 16 colours under "Farbe". Edit: "Farbe" renamed to a name of 100, then 101 "N"s.
  const file = "amazon.de__app-B01LW7X0JJ.html";
  const html = await page(file);
  const named = (length: number) =>
    edited(
      html,
      '"dimensionsDisplay" : ["Farbe"]',
      `"dimensionsDisplay" : ["${"N".repeat(length)}"]`,
    );
  const hundred = variants(file, named(100));
  assert.equal(hundred.length, 16);
  assert.deepEqual(hundred[0], {
    asin: "B01N1IW0PA",
    dimensions: { ["N".repeat(100)]: "#1" },
    is_current: false,
  });
  assert.deepEqual(variants(file, named(101)), []);
});

// ---- which variations are kept -----------------------------------------------------------------

Deno.test("variants: a variation with more or fewer values than the twister has names is skipped, the others kept", async () => {
  // US page of ten variations of ["Color","Size"]. Edit: B07JYJR4RY given a third value,
  // B01M4OW0TT left with one.
  const file = "amazon.com__msshop-B00N150YS4.html";
  const html = await page(file);
  const longer = edited(
    html,
    '"B07JYJR4RY":["White","6 Pack"]',
    '"B07JYJR4RY":["White","6 Pack","Extra"]',
  );
  const both = edited(longer, '"B01M4OW0TT":["Black","6 Pack"]', '"B01M4OW0TT":["Black"]');
  const all = variants(file, html);
  assert.equal(all.length, 10);
  assert.deepEqual(
    variants(file, both),
    all.filter((v) => v.asin !== "B07JYJR4RY" && v.asin !== "B01M4OW0TT"),
  );
});

Deno.test("variants: a twister key longer than an ASIN names no variation", async () => {
  // DE page of three editions. Edit: the key "B00W93P7TU" gains an eleventh character.
  const file = "amazon.de__sapila-B07VHLV8PQ.html";
  const html = edited(await page(file), '"B00W93P7TU":["1 Pcs"]', '"B00W93P7TU1":["1 Pcs"]');
  assert.deepEqual(variants(file, html).map((v) => v.asin), ["B07SPWLK8R", "B07SPYQVP7"]);
});

// ---- entities in the values --------------------------------------------------------------------

Deno.test("variants: an HTML-escaped value reads as shown, 'AT&amp;T' as 'AT&T'", async () => {
  // US page whose twister writes "AT&T" raw. Edit: one variation's "AT&T" escaped; the answer is
  // the unedited page's.
  const file = "amazon.com__wk-B0BN72FYFG-renewed.html";
  const html = await page(file);
  const escaped = edited(
    html,
    '"B0BN7F2TY5":["AT&T","Starlight","256GB"]',
    '"B0BN7F2TY5":["AT&amp;T","Starlight","256GB"]',
  );
  const expected = variants(file, html);
  assert.deepEqual(expected.find((v) => v.asin === "B0BN7F2TY5")?.dimensions, {
    "Service Provider": "AT&T",
    Color: "Starlight",
    Size: "256GB",
  });
  assert.deepEqual(variants(file, escaped), expected);
});

Deno.test("variants: a value's &#0; never becomes a NUL character", async () => {
  // DE page. Edit: "Red + Black" written "Red &#0;+ Black". Only the absence of NUL is pinned:
  // what the entity reads as instead is no promise.
  const file = "amazon.de__app-B01LW7X0JJ.html";
  const html = edited(
    await page(file),
    '"B01LW5AVBD":["Red + Black"]',
    '"B01LW5AVBD":["Red &#0;+ Black"]',
  );
  const color = variants(file, html).find((v) => v.asin === "B01LW5AVBD")?.dimensions.Farbe ?? "";
  assert.ok(color.startsWith("Red ") && color.endsWith("+ Black"), JSON.stringify(color));
  assert.ok(!color.includes("\0"), JSON.stringify(color));
});

Deno.test("variants: a character beyond Latin-1 beside UTF-8 byte entities is kept, not cut to a byte", async () => {
  // DE page, whose own colour is "Wei&#xc3;&#x9f; + Schwarz" (the UTF-8 bytes of "ß"). Edit: a
  // "&#x2122;" (™) after it. Read as bytes, ™ would be cut to 0x22, a quote.
  const file = "amazon.de__app-B01LW7X0JJ.html";
  const html = edited(
    await page(file),
    '"B01LW7X0JJ":["Wei&#xc3;&#x9f; + Schwarz"]',
    '"B01LW7X0JJ":["Wei&#xc3;&#x9f; + Schwarz&#x2122;"]',
  );
  const color = variants(file, html).find((v) => v.asin === "B01LW7X0JJ")?.dimensions.Farbe ?? "";
  assert.ok(color.endsWith(" + Schwarz\u2122"), JSON.stringify(color));
  assert.ok(!color.includes('"'), JSON.stringify(color));
});

Deno.test("variants: UTF-8 byte entities beside a character beyond Latin-1 are read as UTF-8", async () => {
  // The DE page's own colour "Wei&#xc3;&#x9f; + Schwarz" with a "&#x2122;" (™) after it: the
  // bytes still name "ß", whatever else the value holds.
  const file = "amazon.de__app-B01LW7X0JJ.html";
  const html = edited(
    await page(file),
    '"B01LW7X0JJ":["Wei&#xc3;&#x9f; + Schwarz"]',
    '"B01LW7X0JJ":["Wei&#xc3;&#x9f; + Schwarz&#x2122;"]',
  );
  const color = variants(file, html).find((v) => v.asin === "B01LW7X0JJ")?.dimensions.Farbe;
  assert.equal(color, "Wei\u00df + Schwarz\u2122");
});

Deno.test("variants: Latin-1 text beside a character beyond it is kept as written", async () => {
  // Edit: "Größe" written one entity a character (not UTF-8 bytes), and a ™ after it.
  const file = "amazon.de__app-B01LW7X0JJ.html";
  const html = edited(
    await page(file),
    '"B01LW7X0JJ":["Wei&#xc3;&#x9f; + Schwarz"]',
    '"B01LW7X0JJ":["Gr&#xf6;&#xdf;e&#x2122;"]',
  );
  const color = variants(file, html).find((v) => v.asin === "B01LW7X0JJ")?.dimensions.Farbe;
  assert.equal(color, "Gr\u00f6\u00dfe\u2122");
});

import assert from "node:assert/strict";
import { identifiersOf, otherCodesOf, parseIdentifiers } from "../parsers/identifiers.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { IdentifiersPage } from "../schemas/pages.ts";
import { fixture, fixtureMarketplace, fixtureNames } from "./fixture.ts";

const names = fixtureNames("product");

// Read off the pages' detail tables/bullets; every other product page lists no identifier.
const EXPECTED: Record<string, Record<string, string>> = {
  // The technical details table's row "EAN ‎0730143315609, 7301433156092": the first code.
  "product/amazon.com.br__mzmvyp-B0D6NN6TM7.html": { EAN: "0730143315609" },
  "product/amazon.com__msheraz-B0G6KD54ZK.html": { UPC: "753747482348" },
  // conftest.py of rejoiceinhope/amazon-page-parser: ISBN-10 0131103628, ISBN-13 978-0131103627.
  "product/amazon.com__app-book-0131103628.html": {
    ISBN_10: "0131103628",
    ISBN_13: "9780131103627",
  },
  "product/amazon.de__app-book-0131103628.html": {
    ISBN_10: "0131103628",
    ISBN_13: "9780131103627",
  },
  "product/amazon.co.uk__app-book-0062796984.html": {
    ISBN_10: "0062796984",
    ISBN_13: "9780062796981",
  },
  // The page's ISBN-10 row shows the 13-digit number; the parser reports what the page shows.
  "product/amazon.co.uk__metascraper-book-1849757097.html": {
    ISBN_10: "9781849757096",
    ISBN_13: "9781849757096",
  },
  "product/amazon.fr__wishi-book-0241401127.html": {
    ISBN_10: "0241401127",
    ISBN_13: "9780241401125",
  },
};

Deno.test("parseIdentifiers() reads UPC and ISBN rows of the corpus pages, {} where none", async () => {
  for (const name of names) {
    const page = IdentifiersPage.parse(
      parseIdentifiers(await fixture(name), { marketplace: fixtureMarketplace(name) }),
    );
    assert.deepEqual(page.identifiers, EXPECTED[name] ?? {}, name);
    assert.match(page.asin, /^[A-Z0-9]{10}$/, name);
  }
});

Deno.test("parseIdentifiers() keeps a row's further codes in `also`", async () => {
  const page = parseIdentifiers(
    await fixture("product/amazon.com.br__mzmvyp-B0D6NN6TM7.html"),
    { marketplace: "BR" },
  );
  assert.deepEqual(page.also, ["7301433156092"]);
  const one = parseIdentifiers(await fixture("product/amazon.com__msheraz-B0G6KD54ZK.html"), {
    marketplace: "US",
  });
  assert.equal(one.also, undefined);
});

Deno.test("otherCodesOf() keeps every code identifiersOf does not give, at most 16 a row", () => {
  const upcs = Array.from({ length: 100 }, (_, i) => String(100_000_000_000 + i)).join(", ");
  const facts = {
    "EAN": "N/A, 4006381333931, 4006381333948",
    "EAN-13": "5012345678900",
    "UPC": upcs,
    "Brand": "012345678905",
  };
  const ids = identifiersOf(facts);
  assert.deepEqual(ids, { EAN: "5012345678900", UPC: "100000000000" });
  assert.deepEqual(otherCodesOf(facts, ids), [
    "4006381333931",
    "4006381333948",
    ...Array.from({ length: 15 }, (_, i) => String(100_000_000_001 + i)),
  ]);
});

Deno.test("parseIdentifiers() names the page's ASIN", async () => {
  const page = parseIdentifiers(await fixture("product/amazon.com__msheraz-B0G6KD54ZK.html"), {
    marketplace: "US",
  });
  assert.equal(page.asin, "B0G6KD54ZK");
});

Deno.test("identifiersOf() maps labels to keys and keeps the first digit code", () => {
  assert.deepEqual(
    identifiersOf({
      "UPC": "012345678905 012345678912",
      "EAN": "4006381333931",
      "Global Trade Identification Number": "00012345678905",
      "ISBN-10": "000004458X",
      "Brand": "Acme",
    }),
    {
      UPC: "012345678905",
      EAN: "4006381333931",
      GLOBAL_TRADE_IDENTIFICATION_NUMBER: "00012345678905",
    },
  );
});

Deno.test("parseIdentifiers() throws ParseError on empty, non-HTML and truncated input", async () => {
  assert.throws(() => parseIdentifiers("", { marketplace: "US" }), ParseError);
  assert.throws(() => parseIdentifiers("not html", { marketplace: "US" }), ParseError);
  for (const name of names) {
    const html = await fixture(name);
    for (let i = 1; i <= 20; i++) {
      const cut = html.slice(0, Math.floor((html.length * i) / 21));
      try {
        IdentifiersPage.parse(parseIdentifiers(cut, { marketplace: fixtureMarketplace(name) }));
      } catch (e) {
        assert.ok(e instanceof ParseError, `${name} cut ${i}: ${e}`);
      }
    }
  }
});

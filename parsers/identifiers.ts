/**
 * Product page → the product's identifiers, read from the same detail tables as product_facts.
 *
 * Row label → key (labels are the same words in every marketplace language seen):
 *   UPC → UPC; EAN, EAN-13 → EAN; ISBN-13 → ISBN_13; ISBN-10 → ISBN_10; JAN → JAN;
 *   Global Trade Identification Number, GTIN → GLOBAL_TRADE_IDENTIFICATION_NUMBER.
 * Values keep their digits only ("978-0131103627" → "9780131103627"); a row listing several codes
 * gives the first, and the others in `also`, so that a GTIN lookup confirms any code the page
 * lists (probe DP: "0730143315609, 7301433156092", the second never confirmed). A value that is not all digits once hyphens go (an ISBN-10 ending in X) is left
 * out, as the schema wants digit strings. A page listing none gives {}.
 */
import { byIds, captureSections } from "./sections.ts";
import { DETAIL_SECTION_IDS, readDetailFacts } from "./detail_tables.ts";
import { ParseError } from "./parse_error.ts";
import { asinFromUrl } from "./page_text.ts";
import { isAsin } from "./page_common.ts";
import { marketplace } from "../schemas/marketplaces.ts";
import type { IdentifiersPage } from "../schemas/pages.ts";
import type { Identifiers } from "../schemas/resources.ts";

const KEYS: [RegExp, string][] = [
  [/^UPC$/i, "UPC"],
  [/^EAN(?:-?13)?$/i, "EAN"],
  [/^ISBN-?13$/i, "ISBN_13"],
  [/^ISBN-?10$/i, "ISBN_10"],
  [/^JAN$/i, "JAN"],
  [/^(?:Global Trade Identification Number|GTIN)$/i, "GLOBAL_TRADE_IDENTIFICATION_NUMBER"],
];
const SECTION_IDS = new Set<string>(DETAIL_SECTION_IDS);
const TAGS = new Set(["input", "link"]);

export function parseIdentifiers(
  html: string,
  opts: { marketplace: string; url?: string },
): IdentifiersPage {
  marketplace(opts.marketplace);
  if (typeof html !== "string" || !html.includes("<")) {
    throw new ParseError("empty", "The product page is empty or not HTML");
  }
  try {
    return readIdentifiers(html);
  } catch (e) {
    if (e instanceof ParseError) throw e;
    throw new ParseError(
      "unrecognised",
      `The product page could not be read: ${(e as Error)?.message}`,
    );
  }
}

function readIdentifiers(html: string): IdentifiersPage {
  let asin = "";
  let canonical = "";
  const page = captureSections(html, {
    ids: SECTION_IDS,
    tags: TAGS,
    onTag: (name, a) => {
      if (!asin && name === "input" && a.id === "ASIN") asin = (a.value ?? "").trim();
      // The mobile page has no ASIN input; its canonical link names the product.
      if (!canonical && name === "link" && a.rel === "canonical") canonical = a.href ?? "";
    },
  });
  // Ten capitals and digits only, as product.ts reads it: the input's value is the page's word.
  if (!isAsin(asin)) asin = asinFromUrl(canonical);
  if (!asin) {
    throw new ParseError("unrecognised", "The page names no ASIN, so it is not a product page");
  }
  const facts = readDetailFacts(byIds(page, DETAIL_SECTION_IDS));
  const identifiers = identifiersOf(facts);
  const also = otherCodesOf(facts, identifiers);
  return { asin, identifiers, ...(also.length ? { also } : {}) };
}

/** Codes an identifier row lists, at most this many a row: a row of 4 million made a 16 MB reading. */
const CODES_PER_ROW = 16;

/**
 * Every code of the identifier rows that `ids` does not give: a row's further codes, those after
 * a first token that is no code ("N/A, 4006381333931"), a second row of one key (EAN-13 after EAN).
 */
export function otherCodesOf(facts: Record<string, string>, ids: Identifiers): string[] {
  const given = new Set(Object.values(ids));
  const codes = Object.entries(facts)
    .filter(([label]) => KEYS.some(([re]) => re.test(label)))
    .flatMap(([, value]) => codesIn(value).slice(0, CODES_PER_ROW));
  return [...new Set(codes)].filter((c) => !given.has(c));
}

/** A row's codes, digits only ("978-0131103627" → "9780131103627"), each all digits. */
function codesIn(value: string): string[] {
  return value.split(/[\s,;]+/, 4 * CODES_PER_ROW).map((c) => c.replace(/-/g, ""))
    .filter((c) => /^\d+$/.test(c));
}

/** The identifier rows of a label → value table, keyed by identifier type. */
export function identifiersOf(facts: Record<string, string>): Identifiers {
  const ids: Identifiers = {};
  for (const [label, value] of Object.entries(facts)) {
    const key = KEYS.find(([re]) => re.test(label))?.[1];
    if (!key || key in ids) continue;
    // The first token alone: splitting all of a row of millions of codes cost a copy of it.
    const code = (value.split(/[\s,;]+/, 1)[0] ?? "").replace(/-/g, "");
    if (/^\d+$/.test(code)) ids[key] = code;
  }
  return ids;
}

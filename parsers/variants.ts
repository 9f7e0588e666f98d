/**
 * The variation matrix of a product page (issue 17.1): every variation the twister lists, with
 * its dimension values as shown ("Color": "Graphite"), and which one the page is. Read from the
 * twister's script data: `dimensionValuesDisplayData` ({asin: [value, …]}) and the dimension
 * names, either `dimensionsDisplay` (["Color", "Size"]) or `dimensions` (["color_name", …]) with
 * `variationDisplayLabels` ({"color_name": "Color"}). Pages without a twister give [].
 *
 * Bounded against a hostile page: each key's first MAX_TRIES occurrences are tried, each value
 * read over at most MAX_JSON characters (unclosed brackets after every one of thousands of keys
 * made the scan quadratic: 800 KB took 22 s); and at most MAX_VARIANTS variants of at most
 * MAX_DIMENSIONS names are answered, names and values of bounded length, since every variant
 * repeats every name (100 names of 10,000 characters made a 1 MB page a 500 MB answer). The
 * corpus's largest twister has 128 variants of 3 dimensions, names of 17 characters, values of 46.
 */
import { balancedJson } from "./page_text.ts";
const MAX_TRIES = 8;
const MAX_JSON = 1 << 20;
const MAX_VARIANTS = 2_000;
const MAX_DIMENSIONS = 8;
const MAX_NAME = 100;
const MAX_VALUE = 300;

export interface Variant {
  asin: string;
  dimensions: Record<string, string>;
  is_current: boolean;
}

/**
 * A twister key's ASIN: the key itself, or what follows a prefix such as `MC_Assembly_1#`, which
 * Merch on Demand pages put before every one (all 467 variations of such a page were skipped, the
 * field listed as missing; probe DM).
 */
const TWISTER_KEY = /^(?:[A-Za-z0-9_]{1,40}#)?([A-Z0-9]{10})$/;

export function variantsOf(html: string, pageAsin: string): Variant[] {
  const values = jsonAfter(html, '"dimensionValuesDisplayData"', "{");
  if (!isRecord(values)) return [];
  const names = dimensionNames(html);
  if (names.length === 0 || names.length > MAX_DIMENSIONS) return [];
  if (names.some((n) => n.length > MAX_NAME)) return [];
  // The variation the page shows: the twister's own `currentAsin`, which is the page's ASIN on
  // every page but a parent's (a Merch page shows one of its children), else the page's ASIN.
  const stated = stringAfter(html, '"currentAsin"');
  const currentAsin = (stated && TWISTER_KEY.exec(stated)?.[1]) || pageAsin;
  const variants: Variant[] = [];
  for (const [key, shown] of Object.entries(values)) {
    if (variants.length === MAX_VARIANTS) break;
    const asin = TWISTER_KEY.exec(key)?.[1];
    if (!asin || !Array.isArray(shown) || shown.length !== names.length) continue;
    const texts = shown.map((v) => shownText(String(v)));
    if (texts.some((t) => t.length > MAX_VALUE)) continue;
    const dimensions: Record<string, string> = {};
    names.forEach((name, i) => (dimensions[name] = texts[i]));
    variants.push({ asin, dimensions, is_current: asin === currentAsin });
  }
  return variants;
}

function dimensionNames(html: string): string[] {
  const display = jsonAfter(html, '"dimensionsDisplay"', "[");
  if (Array.isArray(display) && display.length > 0) return display.map((v) => shownText(String(v)));
  const keys = jsonAfter(html, '"dimensions"', "[");
  const labels = jsonAfter(html, '"variationDisplayLabels"', "{");
  if (!Array.isArray(keys) || !isRecord(labels)) return [];
  const names = keys.map((k) => labels[String(k)]);
  return names.every((n) => typeof n === "string") ? names as string[] : [];
}

const ENTITY = /&(?:#(\d{1,7})|#[xX]([\da-fA-F]{1,6})|(amp|lt|gt|quot|apos));/g;
const NAMED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
const utf8 = new TextDecoder("utf-8", { fatal: true });
const BYTE_RUN = /[\u0080-\u00ff]/;
const BYTE_RUNS = /[\u0080-\u00ff]+/g;

/**
 * A value as the page shows it: the script data holds some values HTML-escaped, and some as the
 * UTF-8 bytes of a character written one entity a byte ("Wei&#xc3;&#x9f;" for "Weiß"); such bytes
 * are read back as UTF-8 where they make valid UTF-8, else left as the characters they name.
 */
function shownText(value: string): string {
  if (!value.includes("&")) return value;
  const decoded = value.replace(ENTITY, (whole, dec, hex, name) => {
    if (name) return NAMED[name];
    const code = dec ? parseInt(dec, 10) : parseInt(hex, 16);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
  if (!BYTE_RUN.test(decoded)) return decoded;
  // Run by run: a character beyond Latin-1 written as its own entity ("&#x2122;") can sit beside
  // the bytes, and a UTF-8 sequence never spans an ASCII character.
  try {
    return decoded.replace(
      BYTE_RUNS,
      (run) => utf8.decode(Uint8Array.from(run, (c) => c.charCodeAt(0))),
    );
  } catch {
    return decoded; // Latin-1 text that is not UTF-8 bytes ("Größe"): as it is
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === "object" && !Array.isArray(v);
}

/** The short string (up to 64 characters) that follows the first `key` and a colon, if any. */
function stringAfter(html: string, key: string): string | undefined {
  const at = html.indexOf(key);
  if (at < 0) return undefined;
  return /^\s*:\s*"([^"\\]{1,64})"/.exec(html.slice(at + key.length, at + key.length + 80))?.[1];
}

/**
 * The JSON value that follows `key` and a colon, when it opens with `open`; undefined when the
 * page has no such key or its value is not JSON. indexOf first: a regex would walk the page.
 */
function jsonAfter(html: string, key: string, open: "{" | "["): unknown {
  let tries = 0;
  for (let at = html.indexOf(key); at >= 0 && tries < MAX_TRIES; at = html.indexOf(key, at + 1)) {
    let i = at + key.length;
    while (i < html.length && /\s/.test(html[i])) i++;
    if (html[i] !== ":") continue;
    i++;
    while (i < html.length && /\s/.test(html[i])) i++;
    if (html[i] !== open) continue;
    tries++;
    const text = balancedJson(html, i, MAX_JSON);
    if (!text) continue;
    try {
      return JSON.parse(text);
    } catch { /* a JavaScript literal, not JSON: try the next occurrence */ }
  }
  return undefined;
}

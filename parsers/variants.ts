/**
 * The variation matrix of a product page (issue 17.1): every variation the twister lists, with
 * its dimension values as shown ("Color": "Graphite"), and which one the page is. Read from the
 * twister's script data: `dimensionValuesDisplayData` ({asin: [value, …]}) and the dimension
 * names, either `dimensionsDisplay` (["Color", "Size"]) or `dimensions` (["color_name", …]) with
 * `variationDisplayLabels` ({"color_name": "Color"}). Pages without a twister give [].
 */
import { balancedJson } from "./page_text.ts";
export interface Variant {
  asin: string;
  dimensions: Record<string, string>;
  is_current: boolean;
}

export function variantsOf(html: string, currentAsin: string): Variant[] {
  const values = jsonAfter(html, '"dimensionValuesDisplayData"', "{");
  if (!isRecord(values)) return [];
  const names = dimensionNames(html);
  if (names.length === 0) return [];
  const variants: Variant[] = [];
  for (const [asin, shown] of Object.entries(values)) {
    if (!/^[A-Z0-9]{10}$/.test(asin) || !Array.isArray(shown) || shown.length !== names.length) {
      continue;
    }
    const dimensions: Record<string, string> = {};
    names.forEach((name, i) => (dimensions[name] = String(shown[i])));
    variants.push({ asin, dimensions, is_current: asin === currentAsin });
  }
  return variants;
}

function dimensionNames(html: string): string[] {
  const display = jsonAfter(html, '"dimensionsDisplay"', "[");
  if (Array.isArray(display) && display.length > 0) return display.map(String);
  const keys = jsonAfter(html, '"dimensions"', "[");
  const labels = jsonAfter(html, '"variationDisplayLabels"', "{");
  if (!Array.isArray(keys) || !isRecord(labels)) return [];
  const names = keys.map((k) => labels[String(k)]);
  return names.every((n) => typeof n === "string") ? names as string[] : [];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === "object" && !Array.isArray(v);
}

/**
 * The JSON value that follows `key` and a colon, when it opens with `open`; undefined when the
 * page has no such key or its value is not JSON. indexOf first: a regex would walk the page.
 */
function jsonAfter(html: string, key: string, open: "{" | "["): unknown {
  for (let at = html.indexOf(key); at >= 0; at = html.indexOf(key, at + 1)) {
    let i = at + key.length;
    while (i < html.length && /\s/.test(html[i])) i++;
    if (html[i] !== ":") continue;
    i++;
    while (i < html.length && /\s/.test(html[i])) i++;
    if (html[i] !== open) continue;
    const text = balancedJson(html, i);
    if (!text) continue;
    try {
      return JSON.parse(text);
    } catch { /* a JavaScript literal, not JSON: try the next occurrence */ }
  }
  return undefined;
}

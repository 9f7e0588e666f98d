/**
 * The DOM every parser works on: htmlparser2's document and css-select's selectors, chosen by
 * measurement (see README). Helpers here return plain strings so that no node outlives a parse.
 */
import { parseDocument } from "htmlparser2";
import type { AnyNode, Document, Element } from "domhandler";
import { selectAll, selectOne } from "css-select";
import { textContent } from "domutils";

export type { AnyNode, Document, Element };

export function parseHtml(html: string): Document {
  return parseDocument(html, { decodeEntities: true });
}

/** All elements under `root` matching `selector`, in document order. */
export function all(root: AnyNode | AnyNode[], selector: string): Element[] {
  return selectAll(selector, root) as Element[];
}

/** The first element under `root` matching `selector`, or null. */
export function one(root: AnyNode | AnyNode[], selector: string): Element | null {
  return selectOne(selector, root) as Element | null;
}

/** Whitespace-collapsed text of a node ("" for null). */
export function text(node: AnyNode | null | undefined): string {
  if (!node) return "";
  return textContent(node).replace(/\s+/g, " ").trim();
}

/** Text of the first match of `selector` under `root` ("" when nothing matches). */
export function textOf(root: AnyNode | AnyNode[], selector: string): string {
  return text(one(root, selector));
}

/** An attribute's value, trimmed ("" when absent). */
export function attr(node: Element | null | undefined, name: string): string {
  return node?.attribs?.[name]?.trim() ?? "";
}

/** Parses leading integer text such as "1,234 ratings" or "1.234 Sternebewertungen"; null when none. */
export function intFrom(s: string): number | null {
  const m = /\d[\d,.\s\u00a0\u202f']*/.exec(s);
  if (!m) return null;
  const n = parseInt(m[0].replace(/[^\d]/g, ""), 10);
  return Number.isFinite(n) ? n : null;
}

/** Parses a rating such as "4.5 out of 5 stars", "4,5 von 5 Sternen", "5つ星のうち4.2"; null when none. */
export function ratingFrom(s: string): number | null {
  const m = /(\d(?:[.,]\d)?)\s*(?:out of|von|sur|su|de|van|из|z|\/|of)\s*5/i.exec(s) ??
    /5\s*つ星のうち\s*(\d(?:[.,]\d)?)/.exec(s) ?? /^\s*(\d(?:[.,]\d)?)\s*$/.exec(s);
  if (!m) return null;
  const n = parseFloat(m[1].replace(",", "."));
  return n >= 0 && n <= 5 ? n : null;
}

/** Makes a marketplace-relative link absolute ("" stays ""). */
export function absoluteUrl(href: string, origin: string): string {
  if (!href) return "";
  try {
    return new URL(href, origin).href;
  } catch {
    return "";
  }
}

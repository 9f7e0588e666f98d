/** Tree helpers that parsers/dom.ts does not offer (kept apart: dom.ts is shared and frozen). */
import { compile, selectAll, selectOne } from "css-select";
import type { AnyNode, Element } from "./dom.ts";

/**
 * The matches that are not inside another match, in document order: a card selector list can
 * hit both a card and its wrapper, and each card must be read once.
 */
export function outermost(nodes: Element[]): Element[] {
  const set = new Set<AnyNode>(nodes);
  return nodes.filter((n) => {
    for (let p = n.parent; p; p = p.parent) if (set.has(p)) return false;
    return true;
  });
}

/**
 * A selector compiled once. dom.ts's `one`/`all` compile their selector string on every call,
 * which costs more than the match itself when run per card; parsers that select inside each card
 * keep their selectors as Query constants instead.
 */
export interface Query {
  one(root: AnyNode | AnyNode[]): Element | null;
  all(root: AnyNode | AnyNode[]): Element[];
}

export function query(selector: string): Query {
  const compiled = compile<AnyNode, Element>(selector);
  return {
    one: (root) => selectOne(compiled, root) as Element | null,
    all: (root) => selectAll(compiled, root) as Element[],
  };
}

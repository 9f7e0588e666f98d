/** Tree helpers that parsers/dom.ts does not offer (kept apart: dom.ts is shared and frozen). */
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

/** Tree helpers over parsers/dom.ts: outermost matches, and selectors bound as constants. */
import { all, type AnyNode, type Element, one } from "./dom.ts";

export { outermost } from "./dom.ts";

/**
 * A selector bound once, for parsers that keep their selectors as constants. Matching goes through
 * parsers/dom.ts's `one`/`all`, which compile each selector text once and match as css-select
 * does from the given root.
 */
export interface Query {
  one(root: AnyNode | AnyNode[]): Element | null;
  all(root: AnyNode | AnyNode[]): Element[];
}

export function query(selector: string): Query {
  return {
    one: (root) => one(root, selector),
    all: (root) => all(root, selector),
  };
}

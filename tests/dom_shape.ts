import type { AnyNode } from "../parsers/dom.ts";
import type { Captured } from "../parsers/sections.ts";

/** Nodes as plain data (text, [name, attributes, children], or the node type), to compare parses. */
export function shape(nodes: AnyNode[]): unknown[] {
  return nodes.map((n) =>
    n.type === "text"
      ? n.data
      : "children" in n && "name" in n
      ? [n.name, n.attribs, shape(n.children)]
      : n.type
  );
}

/** A captured pass as plain data: every kept element with an id, its subtree, and the markers seen. */
export function captured(c: Captured): unknown {
  return {
    byId: [...c.byId].map(([id, els]) => [id, shape(els)]),
    seen: [...c.seen].sort(),
  };
}

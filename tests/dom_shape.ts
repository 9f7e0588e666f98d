import type { AnyNode } from "../parsers/dom.ts";

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

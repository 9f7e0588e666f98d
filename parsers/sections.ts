/**
 * One streaming pass over a page that keeps only the parts a parser asks for. Building the whole
 * DOM of a 2 MB product page costs about twice a bare tokenizer pass; keeping the few sections a
 * parser reads (title, buy box, detail tables …) costs little more than the tokenizer itself.
 *
 * A section is an element whose id the caller names; its subtree becomes a small domhandler tree
 * that the selectors of parsers/dom.ts work on. Script and style bodies inside a section are
 * dropped: parsers never read them as text, and tables interleave them with their values.
 */
import { Parser } from "htmlparser2";
import { DomHandler } from "domhandler";
import type { Element } from "./dom.ts";

export interface Captured {
  /** Elements with an id inside kept sections (the sections themselves included), in page order. */
  byId: Map<string, Element[]>;
}

export interface CaptureOptions {
  /** Ids of the elements whose subtrees to keep. */
  ids: ReadonlySet<string>;
  /** Called for every start tag in the document, kept or not, to read single elements cheaply. */
  onTag?: (name: string, attribs: Record<string, string>) => void;
}

const DROPPED_BODIES = new Set(["script", "style"]);

/** Parses `html` once, keeping the subtrees of the elements named in `opts.ids`. */
export function captureSections(html: string, opts: CaptureOptions): Captured {
  const byId = new Map<string, Element[]>();
  const dom = new DomHandler(undefined, undefined, (el) => {
    const id = el.attribs.id;
    if (!id) return;
    const list = byId.get(id);
    if (list) list.push(el);
    else byId.set(id, [el]);
  });
  // Depth inside the kept section (0 = outside); dropDepth likewise for a script inside one.
  let depth = 0;
  let dropDepth = 0;
  const parser = new Parser({
    onopentag(name, attribs) {
      opts.onTag?.(name, attribs);
      if (dropDepth > 0) {
        dropDepth++;
        return;
      }
      if (depth === 0) {
        if (!attribs.id || !opts.ids.has(attribs.id)) return;
      } else if (DROPPED_BODIES.has(name)) {
        dropDepth = 1;
        return;
      }
      depth++;
      dom.onopentag(name, attribs);
    },
    onclosetag() {
      if (dropDepth > 0) {
        dropDepth--;
        return;
      }
      if (depth === 0) return;
      depth--;
      dom.onclosetag();
    },
    ontext(data) {
      if (depth > 0 && dropDepth === 0) dom.ontext(data);
    },
  }, { decodeEntities: true });
  parser.write(html);
  parser.end();
  return { byId };
}

/** The first kept element with `id`, or null. */
export function byId(c: Captured, id: string): Element | null {
  return c.byId.get(id)?.[0] ?? null;
}

/** Every kept element with one of `ids`, in the order of `ids`. */
export function byIds(c: Captured, ids: readonly string[]): Element[] {
  return ids.flatMap((id) => c.byId.get(id) ?? []);
}

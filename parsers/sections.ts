/**
 * One streaming pass over a page that keeps only the parts a parser asks for. Building the whole
 * DOM of a 2 MB product page costs about twice a bare tokenizer pass; keeping the few sections a
 * parser reads (title, buy box, detail tables …) costs little more than the tokenizer itself.
 *
 * A section is an element whose id the caller names; its subtree becomes a small domhandler tree
 * that the selectors of parsers/dom.ts work on. Script and style bodies inside a section are
 * dropped: parsers never read them as text, and tables interleave them with their values.
 *
 * Speed: htmlparser2 builds an attribute object for every tag when given `onopentag`, which alone
 * costs a sixth of a tokenizer pass. This pass listens to attributes one by one instead and builds
 * objects only inside kept sections and for the tag names the caller wants to see.
 */
import { DomHandler } from "domhandler";
import { DepthLimitedParser, type Element } from "./dom.ts";
import { type UnreadSpec, writeLeavingOut } from "./unread_regions.ts";

export interface Captured {
  /** Elements with an id inside kept sections (the sections themselves included), in page order. */
  byId: Map<string, Element[]>;
  /** Which of the `markers` ids occur anywhere in the page. */
  seen: Set<string>;
}

export interface CaptureOptions {
  /** Ids of the elements whose subtrees to keep. */
  ids: ReadonlySet<string>;
  /** Ids whose mere presence the caller wants to know (buttons and the like). */
  markers?: ReadonlySet<string>;
  /** Tag names whose start tags, with all attributes, go to `onTag` wherever they occur. */
  tags?: ReadonlySet<string>;
  onTag?: (name: string, attribs: Record<string, string>) => void;
  /**
   * Bulky elements the pass may leave untokenized (see unread_regions.ts), met outside every kept
   * section. Its `needed` must match the raw text of every id in `ids` and `markers` and of every
   * tag `onTag` acts on, so that no element holding one is left unread.
   */
  unread?: UnreadSpec;
}

const DROPPED_BODIES = new Set(["script", "style"]);
const NO_SET: ReadonlySet<string> = new Set();

/** Parses `html` once, keeping the subtrees of the elements named in `opts.ids`. */
export function captureSections(html: string, opts: CaptureOptions): Captured {
  const byId = new Map<string, Element[]>();
  const seen = new Set<string>();
  const markers = opts.markers ?? NO_SET;
  const tags = opts.tags ?? NO_SET;
  const dom = new DomHandler(undefined, undefined, (el) => {
    const id = el.attribs.id;
    if (!id) return;
    const list = byId.get(id);
    if (list) list.push(el);
    else byId.set(id, [el]);
  });
  // depth: inside a kept section (0 = outside); dropDepth: inside a script of one.
  let depth = 0;
  let dropDepth = 0;
  // The start tag being read: attributes arrive one by one, and the tag is complete at the next
  // event (text, another tag, a close, the end).
  let pendingName = "";
  let pendingId = "";
  let pendingAttrs: Record<string, string> | null = null;
  let wantAllAttrs = false;

  function flush(): void {
    if (!pendingName) return;
    const name = pendingName;
    const attrs = pendingAttrs ?? {};
    pendingName = "";
    if (pendingId && markers.has(pendingId)) seen.add(pendingId);
    if (tags.has(name)) opts.onTag?.(name, attrs);
    if (dropDepth > 0) {
      dropDepth++;
      return;
    }
    if (depth === 0) {
      if (!pendingId || !opts.ids.has(pendingId)) return;
    } else if (DROPPED_BODIES.has(name)) {
      dropDepth = 1;
      return;
    }
    depth++;
    dom.onopentag(name, attrs);
  }

  const parser = new DepthLimitedParser({
    onopentagname(name) {
      flush();
      pendingName = name;
      pendingId = "";
      pendingAttrs = null;
      wantAllAttrs = (depth > 0 && dropDepth === 0) || tags.has(name);
    },
    onattribute(name, value) {
      if (!pendingName) return;
      if (name === "id") pendingId = value;
      if (wantAllAttrs || name === "id") (pendingAttrs ??= {})[name] ??= value;
    },
    onclosetag() {
      flush();
      if (dropDepth > 0) {
        dropDepth--;
        return;
      }
      if (depth === 0) return;
      depth--;
      dom.onclosetag();
    },
    ontext(data) {
      flush();
      if (depth > 0 && dropDepth === 0) dom.ontext(data);
    },
    onend() {
      flush();
    },
  }, { decodeEntities: true });
  writeLeavingOut(parser, html, opts.unread, 0, () => {
    flush(); // the start tag before the cut is complete, and may open a kept section
    return depth === 0;
  });
  parser.end();
  return { byId, seen };
}

/** The first kept element with `id`, or null. */
export function byId(c: Captured, id: string): Element | null {
  return c.byId.get(id)?.[0] ?? null;
}

/** Every kept element with one of `ids`, in the order of `ids`. */
export function byIds(c: Captured, ids: readonly string[]): Element[] {
  return ids.flatMap((id) => c.byId.get(id) ?? []);
}

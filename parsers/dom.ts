/**
 * The DOM every parser works on: htmlparser2's document and css-select's selectors, chosen by
 * measurement (see README). Helpers here return plain strings so that no node outlives a parse.
 */
import { Parser } from "htmlparser2";
import { DomHandler } from "domhandler";
import type { AnyNode, Document, Element } from "domhandler";
import { compile } from "css-select";
import { writeLeavingOut } from "./unread_regions.ts";
import { ParseError } from "./parse_error.ts";
import { checkTime, spendText } from "./page_budget.ts";

export type { AnyNode, Document, Element };

/**
 * The deepest a page may nest elements. The corpus's pages nest at most 45 deep; htmlparser2
 * keeps the open elements in an array it shifts at every start and end tag, so a page of
 * thousands of nested elements costs time quadratic in its depth (1.2 MB of nested divs: 14 s).
 * And every reader that takes each match of a selector, nested ones too, repeats an innermost
 * text once per enclosing match: at 512 levels a 1 MB page made a 500 MB answer. 128 leaves real
 * pages nearly three times their depth.
 */
export const MAX_DEPTH = 128;

/**
 * The most start tags, comments and declarations one parse may read. The corpus's largest page
 * holds 10,063 of them in 2.3 MB (a real page filling the 8 MiB body cap at that density: about
 * 37,000). Every node a DOM keeps costs about 700 bytes: 8 MiB of `<i>a</i>` (a million elements)
 * cost 600 MiB to parse, while 100,000 elements cost about 80 MiB. 100,000 is ten times the
 * largest real page and bounds what one parse can be made to hold.
 */
export const MAX_NODES = 100_000;

/**
 * htmlparser2's parser, refusing a page nested deeper than MAX_DEPTH, or holding more than
 * MAX_NODES tags and comments, as it reads it: every DOM builder and streaming pass here parses
 * with it (text left unread by unread_regions.ts is not counted: it is never tokenized).
 */
export class DepthLimitedParser extends Parser {
  #nodes = 0;

  override onopentagname(start: number, endIndex: number): void {
    super.onopentagname(start, endIndex);
    if ((this as unknown as { stack: string[] }).stack.length > MAX_DEPTH) tooDeep();
    if (++this.#nodes > MAX_NODES) tooMany();
  }

  override oncomment(start: number, endIndex: number, offset: number): void {
    if (++this.#nodes > MAX_NODES) tooMany();
    super.oncomment(start, endIndex, offset);
  }

  override oncdata(start: number, endIndex: number, offset: number): void {
    if (++this.#nodes > MAX_NODES) tooMany();
    super.oncdata(start, endIndex, offset);
  }

  override ondeclaration(start: number, endIndex: number): void {
    if (++this.#nodes > MAX_NODES) tooMany();
    super.ondeclaration(start, endIndex);
  }

  override onprocessinginstruction(start: number, endIndex: number): void {
    if (++this.#nodes > MAX_NODES) tooMany();
    super.onprocessinginstruction(start, endIndex);
  }

  override reset(): void {
    this.#nodes = 0;
    super.reset();
  }
}

// Apart from the overrides, which run at every start tag and stay small.
function tooDeep(): never {
  throw new ParseError(
    "unrecognised",
    `The page nests elements more than ${MAX_DEPTH} deep, which no Amazon page does`,
  );
}

function tooMany(): never {
  throw new ParseError(
    "unrecognised",
    `The page holds more than ${MAX_NODES} tags and comments, which no Amazon page does`,
  );
}

export function parseHtml(html: string): Document {
  const handler = new DomHandler();
  new DepthLimitedParser(handler, { decodeEntities: true }).end(html);
  return handler.root;
}

/** What `parseRegions` does with an element met outside the regions it keeps. */
export type RegionChoice = "keep" | "skip" | "stop" | undefined;

/** Where `parseRegions` starts reading, and what it drops inside the regions it keeps. */
export interface RegionOptions {
  from?: RegExp;
  prune?: (name: string, attr: AttributeReader) => boolean;
  excise?: RegExp;
}

/** Reads one attribute of the start tag being chosen on (undefined when the tag lacks it). */
export type AttributeReader = (name: string) => string | undefined;

/**
 * Parses `html` in one tokenizer pass and builds the DOM of the chosen regions only: `choose` sees
 * every start tag outside the kept and skipped regions and answers "keep" (the element and its
 * subtree become a child of the returned document, in page order), "skip" (nothing inside it is
 * shown to `choose`), "stop" (the rest of the page is not read) or nothing (its children are
 * shown to `choose` in turn).
 *
 * `opts.prune`, when given, sees every start tag inside the kept regions and drops the element and
 * its subtree when it answers true: for bulky markup no reader looks into (a quantity menu).
 *
 * `opts.excise`, when given, is searched for in the raw text like `from`: each element whose start
 * tag holds a match is left untokenized, up to its matching end tag (see unread_regions.ts, which
 * says when an element is left in place, for `prune` to drop after tokenizing). A scan costs a
 * fraction of tokenizing, which is what makes it worth having for bulky repeated markup no reader
 * looks into.
 *
 * `opts.from`, when given, is searched for in the raw text (a regular expression scan costs a fifth of
 * tokenizing the same text): parsing starts at the tag holding its first match, so the head and
 * navigation before the content are never tokenized. Without a match the whole page is read.
 *
 * Selectors over the returned document see exactly the elements they would see in the whole
 * page's DOM, provided `choose` keeps every element they can match (and what they read above it).
 * Outside kept regions no attribute object is built: `choose` reads attributes one by one.
 *
 * @example
 * ```ts
 * const doc = parseRegions(html, (name, attr) => attr("id") === "reviews" ? "keep" : undefined);
 * ```
 */
export function parseRegions(
  html: string,
  choose: (name: string, attr: AttributeReader) => RegionChoice | void,
  opts: RegionOptions = {},
): Document {
  const { from, prune, excise } = opts;
  const dom = new DomHandler();
  let keptDepth = 0;
  let skippedDepth = 0;
  // The start tag being read: its attributes arrive one by one, and it is complete at the next
  // event. Inside a kept region they go straight into the element's attribute object; outside,
  // into reused arrays, so that a tag outside the kept regions costs no object. The arrays are
  // overwritten up to `count` rather than emptied: emptying them on every tag cost a tenth of the
  // whole pass.
  let pending = "";
  let pendingAttribs: Record<string, string> | null = null;
  const names: string[] = [];
  const values: string[] = [];
  let count = 0;
  const attr: AttributeReader = (name) => {
    for (let i = 0; i < count; i++) if (names[i] === name) return values[i];
    return undefined;
  };
  const keptAttr: AttributeReader = (name) => pendingAttribs![name];
  let ending = false;
  let stopped = false;
  const flush = () => {
    if (!pending || stopped) return;
    const name = pending;
    pending = "";
    // A start tag cut off by the end of the text never completes, so the full DOM has no element.
    if (ending && openTagName() === name) return;
    if (skippedDepth > 0) {
      skippedDepth++;
      return;
    }
    let attribs = pendingAttribs;
    if (attribs && prune?.(name, keptAttr)) {
      skippedDepth = 1;
      return;
    }
    if (!attribs) {
      const choice = choose(name, attr);
      if (choice === "skip") skippedDepth = 1;
      else if (choice === "stop") {
        stopped = true;
        parser.pause();
      }
      if (choice !== "keep") return;
      attribs = {};
      for (let i = 0; i < count; i++) {
        if (!Object.hasOwn(attribs, names[i])) attribs[names[i]] = values[i];
      }
    }
    keptDepth++;
    dom.onopentag(name, attribs);
  };
  const parser: Parser = new DepthLimitedParser({
    onopentagname(name) {
      if (pending) flush();
      pending = name;
      if (keptDepth > 0 && skippedDepth === 0) pendingAttribs = {};
      else {
        pendingAttribs = null;
        count = 0;
      }
    },
    onattribute(name, value) {
      // A second <form> inside a form is dropped by the parser, attributes included.
      if (!pending || skippedDepth > 0 || openTagName() !== pending) return;
      if (pendingAttribs) {
        if (!Object.hasOwn(pendingAttribs, name)) pendingAttribs[name] = value;
      } else {
        names[count] = name;
        values[count] = value;
        count++;
      }
    },
    onclosetag() {
      if (pending) flush();
      if (skippedDepth > 0) skippedDepth--;
      else if (keptDepth > 0) {
        keptDepth--;
        dom.onclosetag();
      }
    },
    ontext(data) {
      if (pending) flush();
      if (keptDepth > 0 && skippedDepth === 0) dom.ontext(data);
    },
    oncomment(data) {
      flush();
      if (keptDepth > 0 && skippedDepth === 0) dom.oncomment(data);
    },
    oncommentend() {
      if (keptDepth > 0 && skippedDepth === 0) dom.oncommentend();
    },
    onprocessinginstruction: flush,
    onend: flush,
  }, { decodeEntities: true });
  // The tag whose start tag the parser is reading ("" between tags).
  const openTagName = () => (parser as unknown as { tagname: string }).tagname;
  const start = from ? regionStart(html, from) : 0;
  const spec = excise ? { starts: excise } : undefined;
  writeLeavingOut(parser, html, spec, start, () => true, () => stopped);
  if (stopped) return dom.root;
  ending = true;
  parser.end();
  return dom.root;
}

/** Where the tag holding the first match of `marker` starts; 0 when nothing matches. */
function regionStart(html: string, marker: RegExp): number {
  const m = marker.exec(html);
  if (!m) return 0;
  return Math.max(html.lastIndexOf("<", m.index), 0);
}

// Compiled selectors, by selector text. css-select compiles a selector string on every call, which
// costs more than the match itself when run per card; `all` and `one` compile each text once.
// A query from an element that has a parent element is scoped the way css-select scopes it
// (`:scope S`: the whole match lies inside the root), through the `shelf-scope` pseudo-class.
type Compiled = ReturnType<typeof compile<AnyNode, Element>>;
const plain = new Map<string, Compiled>();
const scoped = new Map<string, Compiled>();
let scopeRoot: AnyNode | null = null;
const SCOPE_OPTIONS = { pseudos: { "shelf-scope": (el: Element) => el === scopeRoot } };

function compiled(root: AnyNode | AnyNode[], selector: string): Compiled {
  // A list is searched from its outermost members with the selector matched as written,
  // ancestors outside them included, as css-select matched it (`:scope`, which css-select binds
  // to the list and no caller uses on one, aside). Not by css-select: it drops nested members
  // with domutils' removeSubsets, quadratic in their number, and 99,500 elements sharing an id
  // under 120 levels took 64 s (probe AX).
  if (Array.isArray(root) || !hasParentElement(root)) return plainQuery(selector);
  let query = scoped.get(selector);
  if (!query) {
    const list = splitSelectorList(selector).map((s) => `:shelf-scope ${s}`).join(", ");
    query = compile<AnyNode, Element>(list, SCOPE_OPTIONS);
    scoped.set(selector, query);
  }
  scopeRoot = root;
  return query;
}

function plainQuery(selector: string): Compiled {
  let query = plain.get(selector);
  if (!query) plain.set(selector, query = compile<AnyNode, Element>(selector));
  return query;
}

/** "a, b[x='1,2']" → ["a", "b[x='1,2']"]: the list's selectors, split on top-level commas. */
export function splitSelectorList(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote = "";
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = "";
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "(" || c === "[") depth++;
    else if (c === ")" || c === "]") depth--;
    else if (c === "," && depth === 0) {
      parts.push(selector.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(selector.slice(start).trim());
  return parts;
}

function hasParentElement(node: AnyNode): boolean {
  return node.type === "tag" || node.type === "script" || node.type === "style"
    ? node.parent?.type === "tag" || node.parent?.type === "script" || node.parent?.type === "style"
    : false;
}

/** All elements under `root` matching `selector`, in document order. */
export function all(root: AnyNode | AnyNode[], selector: string): Element[] {
  const query = compiled(root, selector);
  const found: Element[] = [];
  try {
    findIn(searched(root), query, found, false);
  } finally {
    scopeRoot = null; // no node may outlive the parse that made it
  }
  return found;
}

/** The first element under `root` matching `selector`, or null. */
export function one(root: AnyNode | AnyNode[], selector: string): Element | null {
  const query = compiled(root, selector);
  const found: Element[] = [];
  try {
    findIn(searched(root), query, found, true);
  } finally {
    scopeRoot = null;
  }
  return found[0] ?? null;
}

/**
 * The first element under `root` matching each of `selectors` (null where none matches), in one
 * walk: what `one` finds for each, for a reader that looks for many parts of one block, most of
 * which a single `one` would search the whole block for in vain.
 */
export function firstOfEach(root: AnyNode, selectors: readonly string[]): (Element | null)[] {
  const found: (Element | null)[] = selectors.map(() => null);
  const queries = selectors.map((s) => compiled(root, s)!);
  let left = selectors.length;
  const walk = (nodes: AnyNode[]): boolean => {
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i];
      if (node.type !== "tag" && node.type !== "script" && node.type !== "style") continue;
      for (let q = 0; q < queries.length; q++) {
        if (found[q] === null && queries[q](node)) {
          found[q] = node;
          if (--left === 0) return true;
        }
      }
      if (node.name !== "template" && node.children.length > 0 && walk(node.children)) return true;
    }
    return false;
  };
  try {
    walk(searched(root));
  } finally {
    scopeRoot = null;
  }
  return found;
}

/** The nodes a query tests, as css-select picks them: a node's children, or an array's roots. */
function searched(root: AnyNode | AnyNode[]): AnyNode[] {
  // Not domutils' removeSubsets, which looks each node's ancestors up in the whole array.
  if (Array.isArray(root)) return outermost([...new Set(root)]);
  return "children" in root ? root.children : [];
}

/**
 * The nodes that are not inside another of `nodes`, in their order: a card selector list can hit
 * both a card and its wrapper, and each card must be read once. Linear in nodes × depth.
 */
export function outermost<T extends AnyNode>(nodes: T[]): T[] {
  const set = new Set<AnyNode>(nodes);
  return nodes.filter((n) => {
    for (let p = n.parent; p; p = p.parent) if (set.has(p)) return false;
    return true;
  });
}

/** Tags that searches visited, for a deadline check (page_budget.ts) every 4,096 of them. */
let tagsSearched = 0;

/**
 * css-select's depth-first search (elements in document order, <template> contents not entered),
 * as a plain recursion: its own loop shifts and unshifts arrays at every step and costs several
 * times the match itself.
 */
function findIn(nodes: AnyNode[], query: Compiled, found: Element[], first: boolean): boolean {
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i];
    if (node.type !== "tag" && node.type !== "script" && node.type !== "style") continue;
    if ((++tagsSearched & 4095) === 0) checkTime();
    if (query(node)) {
      found.push(node);
      if (first) return true;
    }
    if (node.name !== "template" && node.children.length > 0) {
      if (findIn(node.children, query, found, first) && first) return true;
    }
  }
  return false;
}

/**
 * Every element under `nodes` (the nodes themselves included) for which `test` holds, in document
 * order: the walk `all` makes, for a test that reads a tag's name and attributes as `parseRegions`
 * hands them to its `choose`, so that one predicate serves both.
 */
export function allWhere(
  nodes: AnyNode[],
  test: (name: string, attr: AttributeReader) => boolean,
): Element[] {
  const found: Element[] = [];
  let current: Element;
  const attr: AttributeReader = (name) => current.attribs[name];
  let visited = 0;
  const walk = (list: AnyNode[]) => {
    for (const node of list) {
      if (node.type !== "tag" && node.type !== "script" && node.type !== "style") continue;
      if ((++visited & 4095) === 0) checkTime();
      current = node;
      if (test(node.name, attr)) found.push(node);
      if (node.name !== "template") walk(node.children);
    }
  };
  walk(nodes);
  return found;
}

const HIDDEN = new Set(["script", "style", "noscript"]);

// Zero-width spaces and direction marks: pages put runs of them inside titles ("2.&nbsp;Generation)
// \u200b\u200b\u200b mit"), where they only break a client's matching. Joiners (U+200C, U+200D)
// shape Indic and Persian words and emoji, and stay.
const INVISIBLE = /[\u200b\u200e\u200f\u2060\ufeff]/g;

/** Whitespace-collapsed text of a node ("" for null), without script, style and noscript bodies. */
export function text(node: AnyNode | null | undefined): string {
  if (!node) return "";
  const parts: string[] = [];
  collectText(node, parts);
  spendText(parts);
  return parts.join("").replace(INVISIBLE, "").replace(/\s+/g, " ").trim();
}

function collectText(node: AnyNode, parts: string[]): void {
  if (node.type === "text") parts.push(node.data);
  else if (node.type === "tag") {
    if (HIDDEN.has(node.name)) return;
    // A line break or a block's edge is a space, as a browser shows it: joined, the terms of a
    // promotion's list and a review's paragraphs ran together ("dinheiroA oferta", probe GG).
    const apart = BLOCKS.has(node.name);
    if (apart) parts.push(" ");
    for (const child of node.children) collectText(child, parts);
    if (apart) parts.push(" ");
  } else if (node.type === "root" || node.type === "cdata") {
    for (const child of node.children) collectText(child, parts);
  }
}

/** Elements whose text a browser shows apart from what is around it. */
export const BLOCKS = new Set(
  "br p div li ul ol dl dt dd tr td th table h1 h2 h3 h4 h5 h6 blockquote section article header footer hr pre"
    .split(" "),
);

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

/**
 * Parses a rating such as "4.5 out of 5 stars", "4,5 von 5 Sternen", "5つ星のうち4.2"; null when
 * none. "av" (sv), "na" (pl) and "من" (ar) follow those languages' wording; no corpus page is
 * from amazon.se, amazon.pl or an Arabic-language page.
 */
export function ratingFrom(s: string): number | null {
  const m = /(\d(?:[.,]\d)?)\s*(?:out of|von|sur|su|de|van|из|z|av|na|من|\/|of)\s*5/i.exec(s) ??
    /5\s*つ星のうち\s*(\d(?:[.,]\d)?)/.exec(s) ?? /^\s*(\d(?:[.,]\d)?)\s*$/.exec(s);
  if (!m) return null;
  const n = parseFloat(m[1].replace(",", "."));
  return n >= 0 && n <= 5 ? n : null;
}

/**
 * A link of the page as an absolute https URL on the marketplace's own host (`origin`, such as
 * `https://www.amazon.de`), or "" when it leads anywhere else: another host (`//evil.example/x`
 * as much as `https://evil.example/x`), another scheme (`javascript:`, `data:`), a port or
 * credentials. Relative links are resolved against `origin`; `http:` on the host becomes `https:`.
 * Every link a parser answers with goes through here, so a page cannot send a client elsewhere.
 */
export function linkUrl(href: string, origin: string): string {
  const url = parsedUrl(href, origin);
  if (!url || url.host !== new URL(origin).host) return "";
  url.protocol = "https:";
  return url.href;
}

/**
 * The image hosts of Amazon: every image URL of the corpus's pages (2015-2026, 18 marketplaces)
 * is on one of them or a subdomain (m.media-amazon.com, images-na/-eu/-fe.ssl-images-amazon.com,
 * the older g-ecx/ecx.images-amazon.com). An image URL of any other host is dropped: clients put
 * these URLs in `<img src>`, so a page could otherwise have them load a pixel from any server.
 */
const IMAGE_HOSTS = ["media-amazon.com", "ssl-images-amazon.com", "images-amazon.com"];

/**
 * An image URL of the page when it is an http(s) URL on one of Amazon's image hosts (a
 * protocol-relative `//m.media-amazon.com/…` as https), else "": `javascript:` and `data:` URLs,
 * relative paths (a browser's "Save page" rewrites them to local files) and other hosts.
 */
export function imageUrl(src: string): string {
  const url = parsedUrl(src, "https://images.invalid");
  if (!url) return "";
  const host = url.hostname;
  return IMAGE_HOSTS.some((h) => host === h || host.endsWith(`.${h}`)) ? url.href : "";
}

/** `href` parsed against `base` when it is http(s) without credentials or port; else null. */
function parsedUrl(href: string, base: string): URL | null {
  if (!href) return null;
  let url: URL;
  try {
    url = new URL(href, base);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  if (url.username || url.password || url.port) return null;
  return url;
}

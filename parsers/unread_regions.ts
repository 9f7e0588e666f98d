/**
 * Bulky elements a streaming pass can leave untokenized. Regular-expression scans of the raw text
 * cost a fraction of tokenizing it, so a pass that finds such an element by scanning, and writes
 * the text around it to the tokenizer, saves most of the element's cost.
 *
 * The scan proposes; the pass decides. A proposed element is bounded by counting same-named tags,
 * reading past comments, CDATA sections, declarations and the bodies of scripts, styles, titles
 * and textareas the way htmlparser2 does (in svg and math too, or not at all). The pass cuts it
 * only where `safeToCut` says the tokenizer stands between tags, no open element would be closed
 * implicitly by the element's start tag, and the element holds no end tag that could close an
 * element open outside it: there, leaving it out changes nothing but its own absence.
 */
import type { Parser } from "htmlparser2";

/** What a pass may leave unread. */
export interface UnreadSpec {
  /** Matches inside the start tag of an element that may be left unread. */
  starts: RegExp;
  /**
   * Matches raw text the pass must read: an element holding a match is tokenized. A match may
   * reach past the end of an element only in lookaheads.
   */
  needed?: RegExp;
}

/** An element a pass may leave unread: the [start, end) range of its text. */
interface UnreadRegion {
  start: number;
  end: number;
  /** Its tag name, lower-cased. */
  name: string;
  /** Whether a form starts or ends inside it. */
  holdsForm: boolean;
}

/** The next element, at or after `from`, a pass may leave unread. */
type UnreadFinder = (from: number) => UnreadRegion | null;

const NEVER = /(?!)/;

// How much text, in multiples of the page, bounding elements may read in all: elements that are
// then not cut are read again from inside, and a hostile page of nested unclosed elements would
// otherwise cost time quadratic in its size. Corpus product pages read 0.14–0.86×.
const SCAN_BUDGET = 3;

/** Scans `html` for the elements `spec` lets a pass leave unread, lazily and in page order. */
function unreadRegions(html: string, spec: UnreadSpec): UnreadFinder {
  // A start tag from its "<" up to a match of `starts`, neither "<" nor ">" in between: each part
  // of the text is tried once, however the page is made.
  const starts = new RegExp(
    `<([a-zA-Z][a-zA-Z0-9-]*)(?=[\\s/])[^<>]*?(?:${spec.starts.source})`,
    spec.starts.flags.includes("i") ? "gi" : "g",
  );
  const needed = spec.needed ?? NEVER;
  let budget = SCAN_BUDGET * html.length;
  return (from) => {
    starts.lastIndex = from;
    for (let m = starts.exec(html); m && budget > 0; m = starts.exec(html)) {
      const start = m.index;
      const lower = m[1].toLowerCase();
      const region = { start, end: -1, name: lower, holdsForm: lower === "form" };
      budget -= bound(html, region, needed) - start;
      if (region.end > 0) return region;
      // Not bounded, or holding what must be read: elements nested in it may still qualify.
      starts.lastIndex = start + 1;
    }
    return null;
  };
}

// Tag counters by `needed` pattern and element name: compiled once, not per element.
const counters = new WeakMap<RegExp, Map<string, RegExp>>();

function counter(name: string, needed: RegExp): RegExp {
  let byName = counters.get(needed);
  if (!byName) counters.set(needed, byName = new Map());
  let re = byName.get(name);
  if (!re) {
    // Alternatives, in order (capture groups in brackets): a same-named start or end tag (1: "/"
    // on an end tag); a raw-text body's start tag (2: its name); a comment's start; a form's start
    // or end tag (3); an svg or math start or end tag (4: "/", 5: its name); a CDATA section's
    // start; any other "<!" or "<?" (a declaration or bogus comment, read up to ">"); an html,
    // head or body tag, which no widget holds and whose end tag would close what is outside; what
    // must be read. Tag names match in any case, `needed` as its own flags say.
    const raw = "script|style|title|textarea|xmp|iframe|noembed|noframes|plaintext";
    const flags = needed.flags.includes("i") ? "i" : "";
    re = new RegExp(
      `<(\\/?)(?i:${name})(?=[\\s/>])|<(?i:(${raw}))(?=[\\s/>])|<!--|(<\\/?(?i:form))(?=[\\s/>])|` +
        `<(\\/?)((?i:svg|math))(?=[\\s/>])|<!\\[CDATA\\[|<[!?]|<\\/?(?i:html|head|body)(?=[\\s/>])|` +
        `(?${flags}:${needed.source})`,
      "g",
    );
    byName.set(name, re);
  }
  return re;
}

/**
 * Sets `region.end` just past the end tag matching its start tag, counting nested same-named
 * tags, and notes a form inside; leaves it -1 when the element never ends or holds a match of
 * `needed`. Answers where the reading stopped.
 */
function bound(html: string, region: UnreadRegion, needed: RegExp): number {
  // Inside svg or math, htmlparser2 reads a script, style or title body as markup: bounding the
  // element itself would need the foreign rules throughout, so it is left to be read.
  if (region.name === "svg" || region.name === "math") return region.start;
  const tags = counter(region.name, needed);
  tags.lastIndex = region.start;
  let depth = 0;
  let foreign = 0;
  for (let t = tags.exec(html); t; t = tags.exec(html)) {
    const text = t[0];
    if (t[2] !== undefined) {
      // A raw-text body ends at its own end tag only (plaintext never does); nothing inside it is
      // markup, except in svg or math, where it is: there only a body without "<" reads the same.
      const close = rawTextEnd(html, tags.lastIndex, t[2]);
      if (close < 0) return html.length;
      if (foreign > 0 && html.indexOf("<", tags.lastIndex) < close) return close;
      tags.lastIndex = close;
    } else if (t[5] !== undefined) {
      foreign = Math.max(0, foreign + (t[4] ? -1 : 1));
    } else if (text === "<!--" || text === "<![CDATA[" || text === "<!" || text === "<?") {
      // A comment ends at "-->", a CDATA section at "]]>", a declaration or bogus comment at ">".
      const end = text === "<!--" ? "-->" : text === "<![CDATA[" ? "]]>" : ">";
      const close = html.indexOf(end, t.index + text.length);
      if (close < 0) return html.length;
      tags.lastIndex = close + end.length;
    } else if (t[3] !== undefined) {
      region.holdsForm = true;
    } else if (t[1] === undefined) {
      return t.index; // what must be read, or an html, head or body tag
    } else {
      depth += t[1] ? -1 : 1;
      if (depth === 0) {
        const close = html.indexOf(">", t.index);
        if (close < 0) return html.length;
        return region.end = close + 1;
      }
    }
  }
  return html.length;
}

const rawTextEnds = new Map<string, RegExp>();

/** Where the end tag of a raw-text element whose body starts at `from` starts; -1 if none. */
function rawTextEnd(html: string, from: number, name: string): number {
  const key = name.toLowerCase();
  if (key === "plaintext") return -1;
  let re = rawTextEnds.get(key);
  if (!re) rawTextEnds.set(key, re = new RegExp(`</${key}(?=[\\s/>])`, "gi"));
  re.lastIndex = from;
  return re.exec(html)?.index ?? -1;
}

// htmlparser2's `openImpliesClose`, as far as a cut needs it: the start tags that close an open p
// (and only that), and the open elements some other start tag closes. With such an element
// innermost, leaving the cut element's start tag out could leave it open where the page closes it.
const CLOSES_ONLY_P = new Set([
  "address",
  "article",
  "aside",
  "blockquote",
  "details",
  "div",
  "dl",
  "fieldset",
  "figcaption",
  "figure",
  "footer",
  "form",
  "header",
  "hr",
  "main",
  "nav",
  "ol",
  "p",
  "pre",
  "section",
  "table",
  "ul",
]);
const IMPLICITLY_CLOSED = new Set([
  "a",
  "button",
  "datalist",
  "dd",
  "dt",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "head",
  "input",
  "li",
  "link",
  "optgroup",
  "option",
  "output",
  "p",
  "rp",
  "rt",
  "script",
  "select",
  "tbody",
  "td",
  "textarea",
  "th",
  "thead",
  "tr",
]);

/** htmlparser2's state that decides how the text after a cut is read. */
interface ParserState {
  tokenizer: { state: number };
  stack: string[];
  foreignContext: number[];
}

const TEXT_STATE = 1; // htmlparser2's Tokenizer State.Text: between tags, in plain text
const NO_FOREIGN_CONTEXT = 0; // ForeignContext.None: not inside svg or math

/**
 * Whether `parser`, having read the text up to `region`, stands where cutting the well-formed
 * element out changes nothing but its absence: between tags in plain HTML content, with no open
 * element the region's start tag would close implicitly, no form open when the region holds a
 * form tag, and no end tag in the region of another element open outside it (which would close
 * that element: a stray `</span>`).
 */
function safeToCut(parser: Parser, region: UnreadRegion, html: string): boolean {
  const p = parser as unknown as ParserState;
  const open = p.stack[0];
  return p.tokenizer.state === TEXT_STATE &&
    (p.foreignContext[0] ?? NO_FOREIGN_CONTEXT) === NO_FOREIGN_CONTEXT &&
    !(CLOSES_ONLY_P.has(region.name) ? open === "p" : IMPLICITLY_CLOSED.has(open)) &&
    !(region.holdsForm && p.stack.includes("form")) &&
    !endTagOfAny(html, region, p.stack);
}

// Open elements whose end tags the bound already accounts for: its own name is counted, form
// tags are noted, and html, head and body tags refuse the region.
const ACCOUNTED = new Set(["form", "html", "head", "body"]);

/**
 * Whether the region holds an end tag of an element in `open` other than those the bound accounts
 * for. At cut points outside other elements than divs, forms, body and html, which is nearly
 * always, there is nothing to look for.
 */
function endTagOfAny(html: string, region: UnreadRegion, open: readonly string[]): boolean {
  const names = new Set(open.filter((n) => n !== region.name && !ACCOUNTED.has(n)));
  if (names.size === 0) return false;
  const alternatives = [...names].map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
  // Searched for in the region's text only: a search that ran on past it could read the rest of
  // the page for each region.
  return new RegExp(`</(?:${alternatives})(?=[\\s/>])`, "i").test(
    html.slice(region.start, region.end),
  );
}

/**
 * Writes `html` from `from` on to `parser`, leaving out each element `spec` finds where, with the
 * text before it written, cutting is safe (`safeToCut`) and `mayCut` (asked only then) agrees.
 * Writing stops early once `stopped` says so; the caller ends the parser.
 */
export function writeLeavingOut(
  parser: Parser,
  html: string,
  spec: UnreadSpec | undefined,
  from: number,
  mayCut: () => boolean,
  stopped: () => boolean = () => false,
): void {
  let at = from;
  if (spec) {
    const next = unreadRegions(html, spec);
    for (let region = next(at); region; region = next(from)) {
      if (region.start > at) parser.write(html.slice(at, region.start));
      at = region.start;
      if (stopped()) return;
      // Where it is not cut, elements nested in it may still be.
      from = safeToCut(parser, region, html) && mayCut() ? at = region.end : region.start + 1;
    }
  }
  parser.write(at === 0 ? html : html.slice(at));
}

/**
 * Bulky elements a streaming pass can leave untokenized. Regular-expression scans of the raw text
 * cost a fraction of tokenizing it, so a pass that finds such an element by scanning, and writes
 * the text around it to the tokenizer, saves most of the element's cost.
 *
 * The scan proposes; the pass decides. A proposed element is considered only where the tokenizer,
 * having read the text before it, stands between tags and no open element would be closed
 * implicitly by the element's start tag. Only then is it bounded, by counting same-named tags,
 * reading past comments, CDATA sections, declarations and the bodies of scripts, styles, titles
 * and textareas the way htmlparser2 does (in svg and math too, or not at all), and it is cut only
 * if it holds no end tag that could close an element open outside it: there, leaving it out
 * changes nothing but its own absence.
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

/** The start tag, at or after `from`, of the next element a pass may leave unread. */
type CandidateFinder = (from: number) => { start: number; name: string } | null;

/** How much more text the pass may read to find and bound elements (see SCAN_BUDGET). */
interface Budget {
  left: number;
}

const NEVER = /(?!)/;

// How much text, in multiples of the page, finding and bounding elements may read in all:
// elements that are then not cut are read again from inside, and a hostile page of nested
// unclosed elements would otherwise cost time quadratic in its size. Corpus product pages read
// 0.14–0.86×.
const SCAN_BUDGET = 3;

/** Finds the start tags that hold a match of `spec.starts`, lazily and in page order. */
function candidates(html: string, spec: UnreadSpec, budget: Budget): CandidateFinder {
  // Each match is taken to the nearest "<" before it, which must open a start tag whose name ends
  // before the match, with no ">" in between. Searching for the marker, rather than trying a
  // pattern at every "<", lets the engine skip ahead on a literal one; each marker is tried once.
  const marker = new RegExp(spec.starts.source, spec.starts.flags.includes("i") ? "gi" : "g");
  const tagName = /<([a-zA-Z][a-zA-Z0-9-]*)(?=[\s/])/y;
  return (from) => {
    marker.lastIndex = from;
    for (let m = marker.exec(html); m && budget.left > 0; m = marker.exec(html)) {
      if (m[0] === "") marker.lastIndex++;
      const start = html.lastIndexOf("<", m.index - 1);
      const gt = html.lastIndexOf(">", m.index - 1);
      // Both searches read back from the marker: charged, so that markers in a long stretch of
      // text without tags cost linear time too.
      budget.left -= m.index - Math.max(0, Math.min(start, gt));
      // A marker whose tag starts before `from` is in a tag already proposed, or in none.
      if (start < from || gt > start) continue;
      tagName.lastIndex = start;
      const tag = tagName.exec(html);
      if (tag && start + tag[0].length <= m.index) return { start, name: tag[1].toLowerCase() };
    }
    return null;
  };
}

// Tag counters by `needed` pattern, element name and outer open elements: compiled once, not
// per element. Names come from pages, so the compiled set is bounded.
const counters = new WeakMap<RegExp, Map<string, RegExp>>();
const MAX_COUNTERS = 64;

function counter(name: string, needed: RegExp, outer: readonly string[]): RegExp {
  let byKey = counters.get(needed);
  if (!byKey) counters.set(needed, byKey = new Map());
  const key = outer.length ? `${name} ${outer.join(" ")}` : name;
  let re = byKey.get(key);
  if (!re) {
    // Alternatives, in order (capture groups in brackets): a same-named start or end tag (1: "/"
    // on an end tag); a raw-text body's start tag (2: its name); a comment's start; a form's start
    // or end tag (3); an svg or math start or end tag (4: "/", 5: its name); a CDATA section's
    // start; any other "<!" or "<?" (a declaration or bogus comment, read up to ">"); an html,
    // head or body tag, which no widget holds and whose end tag would close what is outside; an
    // "=" that may start an attribute value holding a "<" (6), where what looks like a tag is
    // none; an end tag of an element open outside, which would close it (a stray `</span>`); what
    // must be read. Tag names match in any case, `needed` as its own flags say (its own groups
    // come last, so the numbers above hold). Neither a quoted nor an unquoted stretch after a "="
    // reaches past the next "=" or quote, so the stretches tried do not overlap and a page of "="
    // costs linear time.
    const raw = "script|style|title|textarea|xmp|iframe|noembed|noframes|plaintext";
    const flags = needed.flags.includes("i") ? "i" : "";
    const strays = outer.length
      ? `<\\/(?i:${
        outer.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")
      })(?=[\\s/>])|`
      : "";
    re = new RegExp(
      `<(\\/?)(?i:${name})(?=[\\s/>])|<(?i:(${raw}))(?=[\\s/>])|<!--|(<\\/?(?i:form))(?=[\\s/>])|` +
        `<(\\/?)((?i:svg|math))(?=[\\s/>])|<!\\[CDATA\\[|<[!?]|<\\/?(?i:html|head|body)(?=[\\s/>])|` +
        `(=)[\\t\\n\\f\\r ]*(?:"[^"<]*|'[^'<]*|[^\\t\\n\\f\\r >"'=][^\\t\\n\\f\\r >=]*)?<|` +
        `${strays}(?${flags}:${needed.source})`,
      "g",
    );
    if (byKey.size >= MAX_COUNTERS) byKey.clear();
    byKey.set(key, re);
  }
  return re;
}

/**
 * Sets `region.end` just past the end tag matching its start tag, counting nested same-named
 * tags, and notes a form inside; leaves it -1 when the element never ends, holds a match of
 * `needed` or an end tag of an element in `outer`. Answers where the reading stopped.
 */
function bound(
  html: string,
  region: UnreadRegion,
  needed: RegExp,
  outer: readonly string[],
): number {
  // Inside svg or math, htmlparser2 reads a script, style or title body as markup: bounding the
  // element itself would need the foreign rules throughout, so it is left to be read.
  if (region.name === "svg" || region.name === "math") return region.start;
  const tags = counter(region.name, needed, outer);
  tags.lastIndex = region.start;
  let depth = 0;
  let foreign = 0;
  for (let t = tags.exec(html); t; t = tags.exec(html)) {
    const text = t[0];
    if (t[6] !== undefined) {
      // A "<" in a tag is no tag: read past the tag the "=" is in, or on from the "=" in text;
      // what must be read in the rest of the tag is looked for there, since it is read past.
      const end = tagAround(html, t.index);
      if (end < 0) return html.length;
      if (end <= t.index) tags.lastIndex = t.index + 1;
      else if (holds(html, needed, t.index, end)) return t.index;
      else tags.lastIndex = end;
    } else if (t[2] !== undefined) {
      // A raw-text body ends at its own end tag only (plaintext never does); nothing inside it is
      // markup, except in svg or math, where it is: there only a body without "<" reads the same.
      // It starts past its start tag, whose values may hold what looks like its end tag, and
      // what must be read.
      const body = startTagEnd(html, t.index);
      if (body < 0) return html.length;
      if (holds(html, needed, t.index, body)) return t.index;
      const close = rawTextEnd(html, body, t[2]);
      if (close < 0) return html.length;
      if (foreign > 0 && html.indexOf("<", body) < close) return close;
      tags.lastIndex = close;
    } else if (t[5] !== undefined) {
      foreign = Math.max(0, foreign + (t[4] ? -1 : 1));
    } else if (text === "<!--" || text === "<![CDATA[" || text === "<!" || text === "<?") {
      // A comment ends at "-->", a CDATA section at "]]>", a declaration or bogus comment at ">".
      // A comment's "-->" may begin inside its "<!--": htmlparser2 ends "<!-->" and "<!--->" at
      // once, and read on to a later "-->", a cut took a title that followed (probe HO).
      const end = text === "<!--" ? "-->" : text === "<![CDATA[" ? "]]>" : ">";
      const close = html.indexOf(end, t.index + (text === "<!--" ? 2 : text.length));
      if (close < 0) return html.length;
      tags.lastIndex = close + end.length;
    } else if (t[3] !== undefined) {
      region.holdsForm = true;
    } else if (t[1] === undefined) {
      return t.index; // what must be read, an html, head or body tag, or a stray end tag
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

const globalCopies = new WeakMap<RegExp, RegExp>();

/**
 * Whether `needed` matches in html[from, to). The text after `to` is hidden from it, so a match
 * that a lookahead past `to` would refuse counts: it only keeps an element from being cut.
 */
function holds(html: string, needed: RegExp, from: number, to: number): boolean {
  let re = globalCopies.get(needed);
  if (!re) {
    globalCopies.set(
      needed,
      re = new RegExp(needed.source, needed.flags.replace(/[gy]/g, "") + "g"),
    );
  }
  re.lastIndex = from;
  return re.test(html.slice(0, to));
}

/**
 * Where the tag holding the "=" at `eq` ends (just past its ">"), as htmlparser2 reads it; at or
 * before `eq` when the "=" is in text; -1 when the tag never ends. The tag is taken to start at
 * the nearest "<" before the "=": a "<" inside an earlier value of the same tag would have been
 * met first (at that value's own "=", where its tag was read past), so the search back stops at
 * a "<" of this tag, or of an unquoted value in it, which reads the same from there on.
 */
function tagAround(html: string, eq: number): number {
  const lt = html.lastIndexOf("<", eq);
  const c = html.charCodeAt(lt + 1);
  // An end tag ignores everything up to its ">", quotes included.
  if (c === SLASH && isAsciiAlpha(html.charCodeAt(lt + 2))) return html.indexOf(">", lt) + 1 || -1;
  return isAsciiAlpha(c) ? startTagEnd(html, lt) : eq;
}

/**
 * Just past the ">" ending the start tag at `lt`, read as htmlparser2's tokenizer reads it (its
 * states named below); -1 when the page ends first.
 */
function startTagEnd(html: string, lt: number): number {
  const n = html.length;
  let i = lt + 1;
  while (i < n && !endsTagSection(html.charCodeAt(i))) i++; // InTagName
  while (i < n) {
    let c = html.charCodeAt(i);
    if (c === GT) return i + 1;
    if (c === SLASH || isSpace(c)) { // BeforeAttributeName, InSelfClosingTag
      i++;
      continue;
    }
    // InAttributeName: its first character may be anything, "=" included.
    for (i++; i < n && !endsTagSection(c = html.charCodeAt(i)) && c !== EQ;) i++;
    while (i < n && isSpace(c = html.charCodeAt(i))) i++; // AfterAttributeName
    if (c !== EQ) continue;
    for (i++; i < n && isSpace(c = html.charCodeAt(i));) i++; // BeforeAttributeValue
    if (c === DQUOTE || c === SQUOTE) {
      const close = html.indexOf(c === DQUOTE ? '"' : "'", i + 1);
      if (close < 0) return -1;
      i = close + 1;
    } else {
      while (i < n && !isSpace(c = html.charCodeAt(i)) && c !== GT) i++; // InAttributeValueNq
    }
  }
  return -1;
}

const [GT, SLASH, EQ, DQUOTE, SQUOTE] = [62, 47, 61, 34, 39];

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 9 || c === 12 || c === 13;
}

function endsTagSection(c: number): boolean {
  return c === SLASH || c === GT || isSpace(c);
}

function isAsciiAlpha(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
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
 * Whether `parser`, having read the text up to an element named `name`, stands where leaving out
 * a well-formed element could change nothing but its absence: between tags in plain HTML content,
 * with no open element the element's start tag would close implicitly.
 */
function standsBetweenTags(p: ParserState, name: string): boolean {
  const open = p.stack[0];
  return p.tokenizer.state === TEXT_STATE &&
    (p.foreignContext[0] ?? NO_FOREIGN_CONTEXT) === NO_FOREIGN_CONTEXT &&
    !(CLOSES_ONLY_P.has(name) ? open === "p" : IMPLICITLY_CLOSED.has(open));
}

// Open elements whose end tags the bound already accounts for: its own name is counted, form
// tags are noted, and html, head and body tags refuse the region.
const ACCOUNTED = new Set(["form", "html", "head", "body"]);

/** The open elements, other than those the bound accounts for, whose end tags refuse a cut. */
function outerOpen(p: ParserState, name: string): string[] {
  const names = new Set(p.stack);
  names.delete(name);
  for (const n of ACCOUNTED) names.delete(n);
  return [...names];
}

/**
 * Writes `html` from `from` on to `parser`, leaving out each element `spec` finds where, with the
 * text before it written, the parser stands between tags (`standsBetweenTags`), `mayCut` agrees
 * (asked then, before the element is bounded: a yes does not promise a cut), and the element is
 * bounded without meeting an end tag of another element open outside it (a stray `</span>` would
 * close that element) nor, with a form open, a form tag. Writing stops early once `stopped` says
 * so; the caller ends the parser.
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
    const p = parser as unknown as ParserState;
    const budget = { left: SCAN_BUDGET * html.length };
    const needed = spec.needed ?? NEVER;
    const next = candidates(html, spec, budget);
    for (let c = next(at); c; c = next(from)) {
      if (c.start > at) parser.write(html.slice(at, c.start));
      at = c.start;
      if (stopped()) return;
      // Where it is not cut, elements nested in it may still be.
      from = c.start + 1;
      if (!standsBetweenTags(p, c.name) || !mayCut()) continue;
      const region = { start: c.start, end: -1, name: c.name, holdsForm: c.name === "form" };
      budget.left -= bound(html, region, needed, outerOpen(p, c.name)) - c.start;
      if (region.end > 0 && !(region.holdsForm && p.stack.includes("form"))) {
        from = at = region.end;
      }
    }
  }
  parser.write(at === 0 ? html : html.slice(at));
}

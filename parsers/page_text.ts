/**
 * Small readers shared by the offers and review parsers. dom.ts's `text()` includes the bodies
 * of inline <script> and <style> elements, which Amazon scatters inside offers and reviews;
 * these helpers read only what a visitor sees.
 */
import { type AnyNode, BLOCKS, type Element } from "./dom.ts";
import { checkTime, spendText } from "./page_budget.ts";
import { ParseError } from "./parse_error.ts";
import { isAsin } from "./page_common.ts";

const INVISIBLE = new Set(["script", "style", "noscript", "template"]);

/** Whitespace-collapsed text of `node` without script, style, noscript or template bodies. */
export function visibleText(
  node: AnyNode | null | undefined,
  skip?: (e: Element) => boolean,
): string {
  if (!node) return "";
  const parts: string[] = [];
  collect(node, parts, skip);
  spendText(parts);
  return parts.join("").replace(/\s+/g, " ").trim();
}

function collect(node: AnyNode, parts: string[], skip?: (e: Element) => boolean): void {
  if (node.type === "text") {
    parts.push((node as unknown as { data: string }).data);
    return;
  }
  if (node.type !== "tag" && node.type !== "root") return;
  const el = node as Element;
  if (node.type === "tag" && (INVISIBLE.has(el.name) || skip?.(el))) return;
  const apart = BLOCKS.has(el.name);
  if (apart) parts.push(" ");
  for (const child of el.children) collect(child, parts, skip);
  if (apart) parts.push(" ");
}

/** A query parameter of a (possibly relative, possibly entity-decoded) link; "" when absent. */
export function queryParam(href: string, name: string): string {
  const m = new RegExp(`[?&]${name}=([^&#]*)`).exec(href);
  if (!m) return "";
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return m[1];
  }
}

/**
 * An ASIN named by a product link or URL (/dp/X, /product-reviews/X, the mobile /gp/aw/d/X, the
 * old /exec/obidos/ASIN/X, asin=X), or "".
 */
export function asinFromUrl(url: string | undefined): string {
  if (!url) return "";
  const m =
    /\/(?:dp|gp\/product|gp\/aw\/d|exec\/obidos\/ASIN|product-reviews|offer-listing|gp\/offer-listing)\/([A-Z0-9]{10})(?:[/?#]|$)/i
      .exec(url) ??
      /[?&]asin=([A-Z0-9]{10})(?:[&#]|$)/i.exec(url);
  return m ? m[1].toUpperCase() : "";
}

/**
 * The ASIN a product page names in its `input#ASIN` (what details reads), or "": a product page
 * at another address (a reviews URL, probe CS) is that product's, whatever the address says.
 */
export function asinInput(html: string): string {
  // Read as product.ts reads it: the tag's own `id` and `value` (tagAttributes), not a `data-id`.
  for (const { start, end } of startTags(html, "input", true)) {
    const attrs = tagAttributes(html.slice(start, end));
    if (attrs.get("id") !== "ASIN") continue;
    const value = (attrs.get("value") ?? "").trim();
    return isAsin(value) ? value : "";
  }
  return "";
}

/** Throws ParseError "blocked" when the body is a captcha, sign-in wall or throttling page. */
export function rejectBlockedPage(html: string): void {
  const head = html.slice(0, 200_000);
  // Each <form tag read once (startTags): /<form[^>]+name=…/ over the head retried `[^>]+` from
  // every "<form" of a head holding many and no ">" (200,000 characters: seconds).
  if (
    head.includes("/errors/validateCaptcha") || startTagWhere(head, "form", /name=["']?signIn/i)
  ) {
    throw new ParseError(
      "blocked",
      "Amazon answered with a captcha or sign-in page instead of the requested page",
    );
  }
  if (
    /dogsofamazon|<title>\s*(?:Sorry! Something went wrong!|Tut uns Leid!?)\s*<\/title>/i.test(
      head,
    ) || head.includes("cs_503")
  ) {
    throw new ParseError(
      "blocked",
      "Amazon answered with its 503 throttling page instead of the requested page",
    );
  }
}

/**
 * Runs a parser so that whatever goes wrong inside surfaces as a ParseError: callers map only
 * that type to an HTTP answer, so a stray TypeError on unforeseen markup must not escape.
 */
export function guarded<T>(what: string, run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (e instanceof ParseError) throw e;
    throw new ParseError(
      "unrecognised",
      `Cannot read the ${what} page: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
}

/** Rejects a body that holds no markup at all. */
export function rejectEmpty(html: string, what: string): void {
  if (typeof html !== "string" || !/<[a-zA-Z!]/.test(html.slice(0, 65_536))) {
    throw new ParseError("empty", `Cannot read the ${what} page: the body is empty or not HTML`);
  }
}

// The ellipsis alone: a leading `\s*` would retry from every space of a run (quadratic in its
// length); callers trim what is left before it.
const CUT = /(?:…|\.\.\.)$/;

/**
 * A title the tile shows cut short ("Ring Video Doorbell - 1080p HD…") made whole from a fuller
 * copy the same tile carries: an image's alt, a link's title, an aria-label, a hidden full-text
 * span (issue 16.1). A copy counts when it holds the shown text, after at most a short prefix
 * ("Sponsored Ad - "), goes on past it, and is not itself cut. Without one the title stays as
 * shown: the page does not say more.
 */
export function untruncated(shown: string, copies: (string | undefined)[]): string {
  if (!CUT.test(shown)) return shown;
  const head = shown.replace(CUT, "").trim();
  if (head.length < 8) return shown;
  let best = shown;
  for (const raw of copies) {
    const copy = (raw ?? "").replace(/\s+/g, " ").trim();
    const at = copy.indexOf(head);
    if (at < 0 || at > 40 || CUT.test(copy)) continue;
    const whole = copy.slice(at);
    if (whole.length > head.length && (best === shown || whole.length > best.length)) best = whole;
  }
  return best;
}

/**
 * The JSON text of script data starting at `start` (a "[" or "{"), up to its matching close,
 * strings skipped; "" when it is not closed within `maxLength` or nests deeper than `maxDepth`.
 * indexOf-style scanning: no regex walks the page.
 */
export function balancedJson(
  s: string,
  start: number,
  maxLength = Infinity,
  maxDepth = Infinity,
): string {
  let depth = 0;
  let inString = false;
  const end = Math.min(s.length, start + maxLength);
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > maxDepth) return "";
    } else if ((c === 93 /* ] */ || c === 125 /* } */) && --depth === 0) {
      return s.slice(start, i + 1);
    }
  }
  return "";
}

/** Where a start tag lies in the raw text: `html.slice(start, end)` is its text. */
export interface TagSpan {
  start: number;
  /** Just past its ">", or the text's length for a last tag that has none. */
  end: number;
  closed: boolean;
}

/**
 * The start tags `<name…>` of the raw text, each from "<" up to the first ">" after it, in page
 * order: what a regex such as `/<link[^>]+rel=canonical[^>]*>/` looks for, read in one pass.
 * That regex retries `[^>]*` from every `<link`, which is quadratic on a page of many of them and
 * no ">" (16,000 characters: 50 ms; 8 MiB: hours). `ignoreCase` matches the name in any case, as
 * such a regex's `i` flag does.
 */
export function* startTags(html: string, name: string, ignoreCase = false): Generator<TagSpan> {
  const open = new RegExp(`<${name}`, ignoreCase ? "gi" : "g");
  for (let m = open.exec(html); m; m = open.exec(html)) {
    const gt = html.indexOf(">", m.index);
    if (gt < 0) {
      yield { start: m.index, end: html.length, closed: false };
      return;
    }
    yield { start: m.index, end: gt + 1, closed: true };
    open.lastIndex = gt + 1;
  }
}

/**
 * The attributes of one start tag's text, names lower-cased, the first of a name kept: one pass,
 * each match consuming what it read. A pattern such as `name="me"[^>]+value=…` tried instead at
 * every `name="me"` of a tag the whole page long took quadratic time (200 KB: 1.3 s).
 */
export function tagAttributes(tag: string): Map<string, string> {
  const attrs = new Map<string, string>();
  const re = /([^\s=>"'/<]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']*)))?/g;
  const body = tag.replace(/^<[a-zA-Z0-9-]*/, "");
  for (let m = re.exec(body); m; m = re.exec(body)) {
    const name = m[1].toLowerCase();
    if (!attrs.has(name)) attrs.set(name, m[2] ?? m[3] ?? m[4] ?? "");
  }
  return attrs;
}

/** Whether attribute `first` comes before attribute `then` in a tag's attributes (tagAttributes). */
export function before(attrs: Map<string, string>, first: string, then: string): boolean {
  for (const name of attrs.keys()) {
    if (name === first) return attrs.has(then);
    if (name === then) return false;
  }
  return false;
}

/** Whether some `<name` start tag's attributes pass `test` (tagAttributes; each tag read once). */
export function someTag(
  html: string,
  name: string,
  test: (attrs: Map<string, string>) => boolean,
): boolean {
  for (const { start, end } of startTags(html, name, true)) {
    if (test(tagAttributes(html.slice(start, end)))) return true;
  }
  return false;
}

/** The text of the first start tag `<name…>` (see startTags) `test` matches; "" when none does. */
export function startTagWhere(html: string, name: string, test: RegExp): string {
  for (const { start, end } of startTags(html, name, test.flags.includes("i"))) {
    const tag = html.slice(start, end);
    if (test.test(tag)) return tag;
  }
  return "";
}

/**
 * The value of the option a `<select id="…">` menu shows: the one marked `selected`, else, as a
 * browser shows it, the first (with `firstIfNone`); null without the menu or a well-formed value.
 */
export function menuChoice(html: string, id: string, firstIfNone = false): string | null {
  const at = html.indexOf(`id="${id}"`);
  if (at < 0) return null;
  const end = html.indexOf("</select>", at);
  const menu = html.slice(at, end < 0 ? at + 20_000 : Math.min(end, at + 20_000));
  let first: string | null | undefined;
  for (const m of menu.matchAll(/<option\b[^>]*>/g)) {
    const value = /\svalue="([a-z0-9_-]{1,40})"/i.exec(m[0])?.[1] ?? null;
    if (/\sselected\b/.test(m[0])) return value;
    first ??= value;
  }
  return firstIfNone ? first ?? null : null;
}

/**
 * The first match of `re` (a global regex) in one of the page's own links: the value of an
 * `href`, `data-dest` or `data-a-modal` attribute (where the corpus has every `pageType=`,
 * `storeContext=` and `parentASIN=`), never the page's text nor another attribute. Reviews, Q&A,
 * seller names and listing titles are third parties' text, escaped only for `& < > " '`, and a
 * listing title is copied into attributes too (`<meta name=title content=…>`, image `alt`): a
 * token written there read as the page's own (probes AY, BB). Text holds no raw `<`, so a match
 * after the last `>` is text and the rest of that text is skipped: each is scanned once.
 */
export function firstInLink(
  html: string,
  re: RegExp,
  /** Matches taken wherever they are (a form text cannot forge). */
  anywhere: (m: RegExpExecArray) => boolean = () => false,
): RegExpExecArray | null {
  re.lastIndex = 0;
  const inLink = new RegExp(re.source, re.flags.replace("g", ""));
  // Each tag a match falls in is read once, its links searched themselves: each match used to
  // read its whole tag again, and one meta tag of "pageType=Search" repeated took 14 s at 512 KB
  // and hours at 8 MiB, past the page's time budget (probe EW).
  let tagEnd = -1;
  for (let m = re.exec(html); m; m = re.exec(html)) {
    if (anywhere(m)) return m;
    if (m.index < tagEnd) continue; // in a tag already read
    const open = html.lastIndexOf("<", m.index);
    if (open <= html.lastIndexOf(">", m.index)) {
      const next = html.indexOf("<", m.index);
      if (next < 0) return null;
      re.lastIndex = Math.max(next, m.index + 1);
      continue;
    }
    checkTime();
    const end = html.indexOf(">", m.index);
    tagEnd = end < 0 ? html.length : end + 1;
    const attrs = tagAttributes(html.slice(open, tagEnd));
    for (const name of LINK_ATTRIBUTES) {
      const found = inLink.exec(attrs.get(name) ?? "");
      if (found) return found;
    }
  }
  return null;
}

const LINK_ATTRIBUTES = ["href", "data-dest", "data-a-modal"];

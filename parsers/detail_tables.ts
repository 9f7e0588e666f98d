/**
 * The "Product details" / "Technical details" / "Product information" tables and bullet lists of a
 * product page, read into label → value strings. Shared by the product and identifiers parsers.
 *
 * Layouts seen in the corpus, all read by the same two row shapes:
 * - tables (`#prodDetails`, `#tech`, `#productOverview_feature_div`): a `tr` whose first cell is
 *   the label and last cell the value (`th`+`td` or `td.label`+`td.value`);
 * - bullet lists (`#detailBullets_feature_div`, old `#detail_bullets_id`, `#detail-bullets`): an
 *   `li` whose bold span (or `<b>`) is the label and whose remaining text is the value;
 * - the apparel grid (`#productFactsDesktopExpander`): `.product-facts-detail` left/right columns.
 */
import { type Element, text } from "./dom.ts";
import { outermost, query } from "./dom_tree.ts";

// Selectors compiled once (dom.ts's one/all compile on every call).
const ROW = query("tr");
const BULLET = query("li");
const GRID_ROW = query(".product-facts-detail");
const GRID_LEFT = query(".a-col-left");
const GRID_RIGHT = query(".a-col-right");
const BOLD_LABEL = query("span.a-text-bold, b");

/** Section ids holding detail tables, most specific first: earlier sections win a shared label. */
export const DETAIL_SECTION_IDS = [
  "prodDetails",
  "tech",
  "detailBullets_feature_div",
  "detail_bullets_id",
  "detail-bullets",
  "productFactsDesktopExpander",
  "productOverview_feature_div",
  "productOverview_hoc_view_div", // mobile: the overview rows
  "productDetails_techSpec_sections", // mobile: the specification table
  "productDetails_detailBullets_sections", // mobile: the "登録情報" list
] as const;

// Direction marks and colons that Amazon puts around labels ("ASIN ‏ : ‎").
const LABEL_NOISE = /[\u200e\u200f\u202a-\u202e:\uff1a]/g;
// Review rows repeat the rating widget; rating and reviews_count carry that data.
const REVIEW_LABEL =
  /review|bewertung|rezension|commentaires|avis client|valoraci|recension|évaluation|おすすめ度|カスタマーレビュー/i;

/** Label → value of every row in `sections`; the first row of a label wins. */
export function readDetailFacts(sections: Element[]): Record<string, string> {
  const facts: Record<string, string> = {};
  // Outermost: a section nested in a section is read with it. Each was read again per enclosing
  // section: 120 nested copies of the ids around 45,000 empty rows (410 KB) took 6 s (probe AZ).
  for (const section of outermost(sections)) {
    for (const [label, value] of rowsOf(section)) {
      // `in` would find Object's own members: a row labelled "constructor" was never read.
      if (!Object.hasOwn(facts, label)) facts[label] = value;
    }
  }
  return facts;
}

function rowsOf(section: Element): [string, string][] {
  const rows: [string, string][] = [];
  // Rows or grid rows nested in rows (a table in a cell) would take the enclosing row's text again
  // at every level, as nested bullets would.
  for (const tr of outermost(ROW.all(section))) addRow(rows, tableRow(tr));
  for (const li of outermost(BULLET.all(section))) addRow(rows, bulletRow(li));
  for (const grid of outermost(GRID_ROW.all(section))) addRow(rows, gridRow(grid));
  return rows;
}

function gridRow(grid: Element): [string, string] | null {
  const label = GRID_LEFT.one(grid);
  const value = GRID_RIGHT.one(grid);
  return label && value ? [text(label), text(value)] : null;
}

function addRow(rows: [string, string][], row: [string, string] | null): void {
  if (!row) return;
  const label = cleanLabel(row[0]);
  const value = cleanValue(row[1]);
  if (label && value && !REVIEW_LABEL.test(label)) rows.push([label, value]);
}

function tableRow(tr: Element): [string, string] | null {
  const cells = tr.children.filter((c): c is Element =>
    c.type === "tag" && ((c as Element).name === "th" || (c as Element).name === "td")
  );
  if (cells.length < 2) return null;
  return [text(cells[0]), text(cells[cells.length - 1])];
}

function bulletRow(li: Element): [string, string] | null {
  const bold = BOLD_LABEL.one(li);
  if (!bold) return null;
  const label = text(bold);
  const whole = text(li);
  if (!label || !whole.startsWith(label)) return null;
  return [label, whole.slice(label.length)];
}

function cleanLabel(s: string): string {
  return s.replace(LABEL_NOISE, " ").replace(/\s+/g, " ").trim();
}

function cleanValue(s: string): string {
  return s.replace(/[\u200e\u200f\u202a-\u202e]/g, "").replace(/\s+/g, " ").replace(/^[\s:]+/, "")
    .trim();
}

/**
 * The category list of /v1/utility/categories, read from a best sellers page's department tree
 * (`role="tree"` sidebar): on the landing page it lists every department, on a department page
 * that department's sub-categories. Verified on the four corpus best sellers pages.
 */
import { all, attr, parseHtml, text } from "./dom.ts";
import { ParseError } from "./parse_error.ts";
import type { CategoriesPage } from "../schemas/pages.ts";
import type { Category } from "../schemas/resources.ts";
import { guardParse, originOf, type ParseOptions, regionOf } from "./page_common.ts";

// `/gp/bestsellers/electronics/ref=…` and `/Best-Sellers-…/zgbs/hi/552684/ref=…` both name the
// list by the path after the prefix; "Any Department" (`/zgbs/ref=…`) names none.
const SLUG = /\/(?:gp\/bestsellers|zgbs)\/((?:(?!ref=)[^/?#]+\/?)+)/;

export function parseCategories(html: string, opts: ParseOptions): CategoriesPage {
  return guardParse("category tree", html, opts, () => {
    if (!html.includes('role="tree"')) {
      throw new ParseError(
        "unrecognised",
        "Cannot parse category tree: the page has no department tree",
      );
    }
    const doc = parseHtml(regionOf(html, ['role="tree"'], ["<!-- EndZeitgeist -->"]));
    const origin = originOf(opts.marketplace);
    const seen = new Set<string>();
    const categories: Category[] = [];
    for (const link of all(doc, '[role="tree"] [role="treeitem"] a[href]')) {
      const category = toCategory(attr(link, "href"), text(link), origin);
      if (!category || seen.has(category.id)) continue;
      seen.add(category.id);
      categories.push(category);
    }
    return { categories };
  });
}

function toCategory(href: string, name: string, origin: string): Category | null {
  const path = href.replace(/^https?:\/\/[^/]+/, "");
  const slug = SLUG.exec(path)?.[1]?.replace(/\/+$/, "");
  if (!slug || !name) return null;
  const url = new URL(path.replace(/\/ref=[^?#]*/, "").replace(/[?#].*$/, ""), origin).href;
  return { id: slug, url, name, type: "bestsellers_slug" };
}

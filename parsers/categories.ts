/**
 * The category list of /v1/utility/categories, from two places of a page:
 * - a best sellers page's department tree (`role="tree"` sidebar): on the landing page every
 *   department, on a department page its sub-categories (type `bestsellers_slug`); verified on
 *   the four corpus best sellers pages;
 * - the search bar's department dropdown (`#searchDropdownBox`), which every desktop page has:
 *   each department's search alias (`search-alias=…`) and browse node where the option names one
 *   (type `search_alias`); verified on the corpus's amazon.ca home page.
 */
import { all, attr, linkUrl, parseHtml, text } from "./dom.ts";
import { outermost } from "./dom_tree.ts";
import { ParseError } from "./parse_error.ts";
import type { CategoriesPage } from "../schemas/pages.ts";
import type { Category } from "../schemas/resources.ts";
import {
  guardParse,
  isCategoryAlias,
  originOf,
  type ParseOptions,
  regionOf,
} from "./page_common.ts";

// `/gp/bestsellers/electronics/ref=…` and `/Best-Sellers-…/zgbs/hi/552684/ref=…` both name the
// list by the path after the prefix; "Any Department" (`/zgbs/ref=…`) names none.
const TREE_SLUG = /^(?=.{1,80}$)[a-z0-9-]+(?:\/\d{1,20})?$/;
const SLUG = /\/(?:gp\/bestsellers|zgbs)\/((?:(?!ref=)[^/?#]+\/?)+)/;

export function parseCategories(html: string, opts: ParseOptions): CategoriesPage {
  return guardParse("category tree", html, opts, () => {
    const origin = originOf(opts.marketplace);
    const categories = [...treeCategories(html, origin), ...dropdownCategories(html, origin)];
    if (categories.length === 0) {
      throw new ParseError(
        "unrecognised",
        "Cannot parse categories: the page has neither a department tree nor a department dropdown",
      );
    }
    return { categories };
  });
}

function treeCategories(html: string, origin: string): Category[] {
  if (!html.includes('role="tree"')) return [];
  const doc = parseHtml(regionOf(html, ['role="tree"'], ["<!-- EndZeitgeist -->"]));
  const seen = new Set<string>();
  const categories: Category[] = [];
  // Searched from each tree rather than as '[role="tree"] [role="treeitem"] a[href]' over the
  // page: for a link under many treeitems and no tree, that selector tries every treeitem
  // ancestor's ancestors in turn (quadratic in the depth). The outermost trees hold every link
  // the long selector matches, each once and in page order.
  const links = outermost(all(doc, '[role="tree"]')).flatMap((tree) =>
    all(tree, '[role="treeitem"] a[href]')
  );
  for (const link of links) {
    const category = toCategory(attr(link, "href"), text(link), origin);
    if (!category || seen.has(category.id)) continue;
    seen.add(category.id);
    categories.push(category);
  }
  return categories;
}

/** The search bar's departments; "All Departments" (`aps`) is every department, not one. */
function dropdownCategories(html: string, origin: string): Category[] {
  const at = html.indexOf('id="searchDropdownBox"');
  if (at < 0) return [];
  const end = html.indexOf("</select>", at);
  if (end < 0) return [];
  const doc = parseHtml(html.slice(html.lastIndexOf("<", at), end + 9));
  const seen = new Set<string>();
  const categories: Category[] = [];
  for (const option of all(doc, "option[value]")) {
    const value = new URLSearchParams(attr(option, "value"));
    const alias = value.get("search-alias") ?? "";
    const node = /^\d+$/.test(value.get("node") ?? "") ? value.get("node")! : null;
    const name = text(option);
    // As category_id takes it: an option's value may hold any text (probe EW).
    if (!isCategoryAlias(alias) || alias === "aps" || !name || seen.has(alias)) continue;
    seen.add(alias);
    const url = new URL("/s", origin);
    url.searchParams.set("i", alias);
    if (node) url.searchParams.set("rh", `n:${node}`);
    categories.push({ id: alias, url: url.href, name, type: "search_alias", node });
  }
  return categories;
}

/**
 * A tree link as a category: only a link on the marketplace's own host (dom.ts's linkUrl), so
 * `//evil.example/zgbs/x` names no category. The URL is the link without its `ref=` part, query
 * and fragment, cut at the first "?" or "#" by indexOf: `/[?#].*$/` retries from every "?" of a
 * run of them up to a line break (quadratic).
 */
function toCategory(href: string, name: string, origin: string): Category | null {
  if (!name || !linkUrl(href, origin)) return null;
  const path = href.replace(/^https?:\/\/[^/]+/, "");
  const slug = SLUG.exec(path)?.[1]?.replace(/\/$/, ""); // SLUG's segments end in one "/" at most
  // As /v1/bestsellers takes it back: a link may carry any text there (probe EX: `../../admin`).
  if (!slug || !TREE_SLUG.test(slug)) return null;
  const bare = path.replace(/\/ref=[^?#]*/, "");
  const cut = bare.search(/[?#]/);
  const url = linkUrl(cut < 0 ? bare : bare.slice(0, cut), origin);
  if (!url) return null;
  const node = /(?:^|\/)(\d+)$/.exec(slug)?.[1] ?? null;
  return { id: slug, url, name, type: "bestsellers_slug", node };
}

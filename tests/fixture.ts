/**
 * Corpus pages for tests, read from tests/fixtures/ (gzipped copies of ../shared/corpus, so a
 * clean clone tests without shared/). Names are the corpus paths: "product/amazon.de__x.html".
 */
import { decodeHtml } from "../parsers/decode.ts";
import { marketplace, marketplaceForHost } from "../schemas/marketplaces.ts";

const root = new URL("./fixtures/", import.meta.url);

/** The raw bytes of a corpus page. */
export async function fixtureBytes(name: string): Promise<Uint8Array> {
  const file = await Deno.open(new URL(`${name}.gz`, root));
  const stream = file.readable.pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** A corpus page decoded to text the way the service decodes an upstream body. */
export async function fixture(name: string): Promise<string> {
  return decodeHtml(await fixtureBytes(name));
}

/** Every corpus page name under a folder ("product", "search", …), sorted. */
export function fixtureNames(folder: string): string[] {
  const names: string[] = [];
  for (const e of Deno.readDirSync(new URL(`${folder}/`, root))) {
    if (e.name.endsWith(".html.gz")) names.push(`${folder}/${e.name.slice(0, -3)}`);
  }
  return names.sort();
}

/** The marketplace code of a corpus page, from its host in the file name. */
export function fixtureMarketplace(name: string): string {
  const host = name.split("/").pop()!.split("__")[0];
  const m = marketplaceForHost(host);
  if (!m) {
    throw new RangeError(`Cannot name the marketplace of fixture '${name}': unknown host ${host}`);
  }
  return m.code;
}

/**
 * A search page as page `page` of its results: every item's ASIN renamed to one of its own, as a
 * marketplace's further pages hold other items than its first, and its pagination marking page
 * `page` as the current one. Served unchanged under every page number, one page would be read
 * again and again, and a further page holding only items already read, or stating another page
 * number, ends a search (upstream/search_pages.ts).
 */
export function asResultsPage(html: string, page: number): string {
  if (page <= 1) return html;
  const names = new Map<string, string>();
  const tag = page.toString(36).toUpperCase().padStart(2, "0");
  for (const m of html.matchAll(/data-asin="([A-Z0-9]{10})"/g)) {
    if (!names.has(m[1])) {
      names.set(m[1], `B${tag}${names.size.toString(36).toUpperCase().padStart(7, "0")}`);
    }
  }
  return html.replace(/[A-Z0-9]{10}/g, (a) => names.get(a) ?? a)
    .replace(/(s-pagination-selected"[^>]*>)\d+/, `$1${page}`);
}

/**
 * A search page's HTML with the words its links search (`k=`) made `words`: a corpus page served
 * for a search it was not saved for, which upstream/listing_shown.ts would answer as another
 * search's page.
 */
export function searchingFor(html: string, words: string): string {
  return html.replace(/([?;]k=)[^&"\\]*/g, `$1${encodeURIComponent(words)}`);
}

/**
 * A page of one Amazon site as another serves it: the marketplace id its head names (`ue_mid`)
 * made `code`'s, for tests that serve a corpus page under another site for what its markup shows;
 * as saved, such a page is refused as the other site's (upstream/page_read.ts).
 */
export function onSite(html: string, code: string): string {
  return html.replace(/(\bue_mid\s*=\s*['"])[A-Z0-9]+/g, `$1${marketplace(code).id}`);
}

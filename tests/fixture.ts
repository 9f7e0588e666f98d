/**
 * Corpus pages for tests, read from tests/fixtures/ (gzipped copies of ../shared/corpus, so a
 * clean clone tests without shared/). Names are the corpus paths: "product/amazon.de__x.html".
 */
import { decodeHtml } from "../parsers/decode.ts";
import { marketplaceForHost } from "../schemas/marketplaces.ts";

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

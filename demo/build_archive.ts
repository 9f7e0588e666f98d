/**
 * Builds demo/sample.warc.gz, the demo's fake marketplace: real corpus pages recorded as WARC
 * responses at the URLs Shelf requests for the demo's calls. Run it again after changing PAGES:
 * `deno run -A demo/build_archive.ts`. Each record is its own gzip member, as WARC.gz files are.
 */
import { serializeResponse } from "../upstream/warc_recorder.ts";
import {
  bestsellersUrl,
  offersUrl,
  productPageUrl,
  reviewsUrl,
  searchUrl,
  sellerProductsUrl,
} from "../upstream/urls.ts";
import { fixtureBytes } from "../tests/fixture.ts";
import { DEMO } from "./calls.ts";

const PAGES: [url: string, corpusPage: string][] = [
  [productPageUrl("US", DEMO.asin), "product/amazon.com__app-B07H57DNVV.html"],
  [
    searchUrl("US", { query: DEMO.query }, 1),
    "search/amazon.com__pricechecker-portable-charger.html",
  ],
  [reviewsUrl("US", DEMO.reviewsAsin), "reviews/amazon.com__metaagent-dawn-B0BBPNPZTC.html"],
  [bestsellersUrl("US", DEMO.bestsellersCategory, 1), "bestsellers/amazon.com__parsy-zgbs-hi.html"],
  [offersUrl("US", DEMO.offersAsin), "offers/amazon.com__wk-aod-main-B0BN72FYFG.html"],
  [
    sellerProductsUrl("US", DEMO.sellerId, 1),
    "seller_products/amazon.com__app-storefront-A2DP2EEPU3VU45.html",
  ],
];

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

const out = new URL("./sample.warc.gz", import.meta.url);
const parts: Uint8Array[] = [];
for (const [url, page] of PAGES) {
  const body = await fixtureBytes(page);
  const record = await serializeResponse(url, {
    url,
    status: 200,
    headers: new Headers({ "content-type": "text/html" }),
    body,
    authenticated: false,
  });
  parts.push(await gzip(record));
  console.log(`${url} ← ${page}`);
}
await Deno.writeFile(out, new Uint8Array(await new Blob(parts as BlobPart[]).arrayBuffer()));
console.log(`wrote ${out.pathname}`);

/**
 * Rules of the upstream source (upstream/source.ts) and of its settings (upstream/select.ts) seen
 * end to end: the sort a search's answer names, a GTIN's words told apart from its zeros, the
 * page size a `limit` search learns for fetching ahead, and UPSTREAM_RECORD_MAX_MB's bounds.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { asResultsPage, fixture, searchingFor } from "./fixture.ts";
import { parseSearch } from "../parsers/search.ts";
import { checkUpstream } from "../upstream/select.ts";

const IPADS = "search/amazon.com__pavel-ipad-pro.html"; // 16 results a page, a next page linked

Deno.test("a search whose page shows a sort the SPEC has no name for answers sort null, not the sort asked for", async () => {
  await using rig = await startRig();
  // The page's sort menu marks a key none of the SPEC's sorts is (Amazon's "Featured").
  const html = (await fixture(IPADS)).replace(
    'value="relevanceblender" selected',
    'value="featured-rank" selected',
  );
  assert.equal(parseSearch(html, { marketplace: "US" }).sort_shown, "featured-rank");
  rig.fake.page("https://www.amazon.com/s?k=ipad&s=price-asc-rank", { html });
  const r = await rig.call("/v1/products/search?query=ipad&sort=price_asc");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.sort, null);
});

Deno.test("gtin-to-asin with a zero-padded GTIN-14 takes a search page whose links write it without the zeros", async () => {
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/s?k=00012345678905", {
    html: searchingFor(await fixture(IPADS), "12345678905"),
  });
  const r = await rig.call("/v1/utility/gtin-to-asin?gtin=00012345678905");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.gtin, "00012345678905");
  assert.equal(r.body.asin, "B0BJLF2BRM");
  // The results' pages are not served: an unsure match, said so.
  assert.match(String(r.body.note), /^Unsure/);
});

/** The ipad page as page `page`, the last: no next link, and only three results left in it. */
async function shortLastPage(page: number): Promise<string> {
  const seen: string[] = [];
  const html = asResultsPage(await fixture(IPADS), page)
    .replaceAll("s-pagination-next", "s-pagination-gone")
    .replace(/\bpage=\d+/g, "pg=0")
    // Cards without an ASIN are no results: the first six cards hold the first three results.
    .replace(/(<div[^>]*data-asin=")([A-Z0-9]{10})"/g, (whole, head, asin) => {
      if (!seen.includes(asin)) seen.push(asin);
      return seen.indexOf(asin) < 6 ? whole : `${head}"`;
    });
  const read = parseSearch(html, { marketplace: "US" });
  assert.equal(read.results.length, 3);
  assert.equal(read.has_next_page, false);
  return html;
}

Deno.test("a limit search learns its page size from full pages only: a short last page does not make the next search fetch pages ahead it does not use", async () => {
  await using rig = await startRig();
  const ipads = await fixture(IPADS);
  rig.fake.page("https://www.amazon.com/s?k=ipad", { html: ipads });
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=2", { html: await shortLastPage(2) });
  for (let p = 1; p <= 6; p++) {
    rig.fake.page(`https://www.amazon.com/s?k=tablet${p > 1 ? `&page=${p}` : ""}`, {
      html: searchingFor(asResultsPage(ipads, p), "tablet"),
    });
  }
  const first = await rig.call("/v1/products/search?query=ipad&limit=30");
  assert.equal(first.status, 200, JSON.stringify(first.body).slice(0, 300));
  assert.equal(first.body.count, 19);
  assert.equal(first.body.has_next_page, false);
  // Its 16-item full page sizes the next search: 20 items are two pages, the second fetched
  // with the first. Sized by the 3-item last page, four went with it, two of them unused.
  const r = await rig.call("/v1/products/search?query=tablet&limit=20");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.count, 20);
  assert.equal(r.headers.get("x-credits-cost"), "2");
  // Every page the call sent for has come by its answer (pages fetched ahead are awaited).
  assert.equal(rig.fake.pageRequests("k=tablet"), 2);
});

Deno.test("UPSTREAM_RECORD_MAX_MB takes its documented top value, 1048576 MiB, and refuses one more", () => {
  const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });
  const origin = "origin:http://127.0.0.1:9";
  assert.deepEqual(checkUpstream(origin, env({ UPSTREAM_RECORD_MAX_MB: "1048576" })), {
    kind: "origin",
    origin: "http://127.0.0.1:9",
  });
  assert.throws(
    () => checkUpstream(origin, env({ UPSTREAM_RECORD_MAX_MB: "1048577" })),
    /'UPSTREAM_RECORD_MAX_MB' must be a whole number of MiB from 1 to 1048576/,
  );
});

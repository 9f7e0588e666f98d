/**
 * Search `limit` over real HTTP: items collected over successive pages, one credit per upstream
 * page fetched (SPEC), pages fetched ahead past the last page included, and a stop with
 * `has_next_page` true when the credits run out or a further page fails. Pages fetched together
 * with the first, before it has shown they are needed, are paid only when their items are used,
 * and each account may leave only a few of them unused (upstream/search_ahead.ts).
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { parsePlans } from "../metering/plans.ts";
import { asResultsPage, fixture, searchingFor } from "./fixture.ts";
import { parseSearch } from "../parsers/search.ts";
import { AHEAD_ALLOWANCE } from "../upstream/search_ahead.ts";

// amazon.com__pavel-ipad-pro holds 16 organic results and links a next page; each further page
// holds items of its own (asResultsPage).
async function servePages(rig: Awaited<ReturnType<typeof startRig>>, pages: number) {
  const html = await fixture("search/amazon.com__pavel-ipad-pro.html");
  for (let p = 1; p <= pages; p++) {
    rig.fake.page(`https://www.amazon.com/s?k=ipad${p > 1 ? `&page=${p}` : ""}`, {
      html: asResultsPage(html, p),
    });
  }
}

Deno.test("search limit=40 over 16-item pages uses three pages and charges three credits", async () => {
  await using rig = await startRig();
  await servePages(rig, 6);
  const r = await rig.call("/v1/products/search?query=ipad&limit=40");
  assert.equal(r.status, 200);
  assert.equal(r.body.count, 40);
  assert.equal(r.headers.get("x-credits-cost"), "3");
  assert.equal(r.body.has_next_page, true);
  const positions = (r.body.results as { position: number }[]).map((x) => x.position);
  assert.deepEqual(positions, Array.from({ length: 40 }, (_, i) => i + 1));
  const usage = await rig.call("/v1/usage");
  assert.equal((usage.body as { requests_used: number }).requests_used, 3);
});

Deno.test("search limit stops when credits run out and returns what it has with has_next_page", async () => {
  const plans = parsePlans(JSON.stringify({
    plans: [{ id: "tiny", credits: 2, rate_limit_per_sec: 100, max_keys: 1, groups: ["products"] }],
  }));
  await using rig = await startRig({ plans, plan: "tiny" });
  await servePages(rig, 6);
  const r = await rig.call("/v1/products/search?query=ipad&limit=60");
  assert.equal(r.status, 200);
  assert.equal(r.body.count, 32);
  assert.equal(r.body.has_next_page, true);
  assert.equal(r.headers.get("x-credits-cost"), "2");
  assert.equal(r.headers.get("x-credits-remaining"), "0");
});

Deno.test("a further page the marketplace does not have ends the search with the items so far", async () => {
  await using rig = await startRig();
  await servePages(rig, 1); // page 1 links a page 2, which is the marketplace's 404
  const r = await rig.call("/v1/products/search?query=ipad&limit=30");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.count, 16);
  assert.equal(r.body.has_next_page, false);
  // The 404 was the marketplace's answer for that page: fetched, so paid.
  assert.equal(rig.fake.pageRequests("/s?"), 2);
  assert.equal(r.headers.get("x-credits-cost"), "2");
});

Deno.test("a further page that fails ends the search with the items so far, has_next_page true, and is not charged", async () => {
  await using rig = await startRig();
  await servePages(rig, 6);
  rig.fake.fail("robot", 3, "page=2"); // page 2 blocked through its retries
  const r = await rig.call("/v1/products/search?query=ipad&limit=40");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.count, 16, "page 1's items, which were paid for");
  assert.equal(r.body.has_next_page, true);
  // Pages 2 and 3 were asked for together. Page 2 did not come, and page 3, which did, is not in
  // the answer: neither is paid (page 3 was, and its items had to be bought again; probe AJ).
  assert.equal(rig.fake.pageRequests("page=3"), 1);
  assert.equal(r.headers.get("x-credits-cost"), "1");
  const usage = await rig.call("/v1/usage");
  assert.equal((usage.body as { requests_used: number }).requests_used, 1);
});

Deno.test("searches whose first page fails are not charged, and move pages ahead of it only while the account's allowance lasts", async () => {
  await using rig = await startRig();
  // No page at all: the query's first page, and every page after it, is the marketplace's 404.
  const calls = 10;
  for (let i = 0; i < calls; i++) {
    const r = await rig.call("/v1/products/search?query=ipad&page=9&limit=200");
    assert.equal(r.status, 404);
    assert.equal(r.headers.get("x-credits-cost"), "0");
  }
  const moved = rig.fake.pageRequests("/s?");
  // Fetched ahead with the first: 3 pages a call (limit=200 over 60-item pages) until the
  // allowance is spent, then the first page alone. Unbounded, the ten calls moved 40 pages.
  assert.ok(moved > calls, `pages were fetched ahead at first (${moved})`);
  assert.ok(moved <= calls + AHEAD_ALLOWANCE + 1, `${moved} pages for ${calls} failed calls`);
  const usage = await rig.call("/v1/usage");
  assert.equal((usage.body as { requests_used: number }).requests_used, 0);
});

Deno.test("identical concurrent details calls share one upstream fetch", async () => {
  await using rig = await startRig();
  rig.fake.delayMs = 200;
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  const rs = await Promise.all(
    Array.from({ length: 20 }, () => rig.call("/v1/products/details?asin=B07H57DNVV")),
  );
  assert.deepEqual(new Set(rs.map((r) => r.status)), new Set([200]));
  assert.equal(rig.fake.pageRequests("/dp/"), 1);
});

Deno.test("search limit never fetches more upstream pages than the call pays for (issue 13.11)", async () => {
  const plans = parsePlans(JSON.stringify({
    plans: [{ id: "tiny", credits: 2, rate_limit_per_sec: 100, max_keys: 1, groups: ["products"] }],
  }));
  await using rig = await startRig({ plans, plan: "tiny" });
  await servePages(rig, 14);
  const r = await rig.call("/v1/products/search?query=ipad&limit=200");
  assert.equal(r.status, 200);
  assert.equal(r.headers.get("x-credits-cost"), "2");
  assert.equal(r.body.has_next_page, true);
  assert.equal(rig.fake.pageRequests("/s?"), 2, "two credits, two upstream pages");
});

Deno.test("with credits to spare, the pages fetched are the pages charged", async () => {
  await using rig = await startRig();
  await servePages(rig, 14);
  for (const [limit, pages] of [[40, 3], [100, 7], [16, 1], [17, 2]]) {
    const before = rig.fake.pageRequests("/s?");
    const r = await rig.call(`/v1/products/search?query=ipad&limit=${limit}`);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("x-credits-cost"), String(pages), `limit=${limit}`);
    assert.equal(rig.fake.pageRequests("/s?") - before, pages, `limit=${limit}: pages fetched`);
  }
});

/**
 * The search pages the fake marketplace has been asked for, once the `expected` ones a call paid
 * for have come in: a call may answer while pages it fetched ahead are still on their way.
 */
async function searchPagesFetched(rig: Awaited<ReturnType<typeof startRig>>, expected: number) {
  for (let i = 0; i < 100 && rig.fake.pageRequests("/s?") < expected; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 50)); // none past them either
  return rig.fake.pageRequests("/s?");
}

/**
 * The ipad page as the last page of its results: no next link, no links to further pages; as page
 * `page`, with items of its own.
 */
async function lastPage(page = 1): Promise<string> {
  const html = asResultsPage(await fixture("search/amazon.com__pavel-ipad-pro.html"), page)
    .replaceAll("s-pagination-next", "s-pagination-gone")
    .replace(/\bpage=\d+/g, "pg=0");
  assert.equal(parseSearch(html, { marketplace: "US" }).has_next_page, false);
  return html;
}

Deno.test("limit=200 over a one-page result costs one page: the pages fetched with it are not charged", async () => {
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/s?k=ipad", { html: await lastPage() });
  const r = await rig.call("/v1/products/search?query=ipad&limit=200");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.count, 16);
  assert.equal(r.body.has_next_page, false);
  assert.equal(r.headers.get("x-credits-cost"), "1");
  assert.ok(await searchPagesFetched(rig, 2) > 1, "pages 2 on were fetched with the first");
  const usage = (await rig.call("/v1/usage")).body as {
    requests_used: number;
    requests_remaining: number;
  };
  assert.equal(usage.requests_used, 1);
  assert.equal(r.headers.get("x-credits-remaining"), String(usage.requests_remaining));
});

Deno.test("a query without results and limit=200 costs one credit", async () => {
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/s?k=qzxv", {
    // Amazon's answer to a query without results: an empty result grid (as in e2e_endpoints).
    html:
      `<html><body><div class="s-main-slot s-result-list"></div>No results for qzxv.</body></html>`,
  });
  const r = await rig.call("/v1/products/search?query=qzxv&limit=200");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.count, 0);
  assert.equal(r.headers.get("x-credits-cost"), "1");
  const usage = await rig.call("/v1/usage");
  assert.equal((usage.body as { requests_used: number }).requests_used, 1);
});

Deno.test("limit=200 over a two-page result: pages fetched with the first and not used are not charged, and the usage adds up", async () => {
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/s?k=ipad", "search/amazon.com__pavel-ipad-pro.html");
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=2", { html: await lastPage(2) });
  let remaining = NaN;
  let paid = 0;
  for (const round of [1, 2]) {
    const before = rig.fake.pageRequests("/s?");
    const r = await rig.call("/v1/products/search?query=ipad&limit=200");
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
    assert.equal(r.body.count, 32);
    assert.equal(r.body.has_next_page, false);
    const cost = Number(r.headers.get("x-credits-cost"));
    const fetched = await searchPagesFetched(rig, before + 4) - before;
    // Pages 3 and 4 went out with page 1, before it showed that only two exist.
    assert.ok(cost >= 2 && cost <= fetched - 2, `call ${round}: cost ${cost}, ${fetched} fetched`);
    const left = Number(r.headers.get("x-credits-remaining"));
    if (round === 2) assert.equal(left, remaining - cost, "the second call pays its own");
    remaining = left;
    paid += cost;
  }
  const usage = (await rig.call("/v1/usage")).body as {
    requests_used: number;
    requests_remaining: number;
  };
  assert.equal(usage.requests_used, paid);
  assert.equal(usage.requests_remaining, remaining);
});

Deno.test("limit=200 over a listing whose pagination names its last page asks for no page past it (probe FQ)", async () => {
  await using rig = await startRig();
  // Pages 1 and 2 link a next page and name 3 as the last ("1 2 3 … 3"); page 3 is the last.
  const namingThree = (html: string) =>
    html.replace(/(s-pagination-disabled" aria-disabled="true">)20</, "$13<");
  const html = await fixture("search/amazon.com__pavel-ipad-pro.html");
  assert.equal(parseSearch(namingThree(html), { marketplace: "US" }).last_page, 3);
  rig.fake.page("https://www.amazon.com/s?k=ipad", { html: namingThree(html) });
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=2", {
    html: namingThree(asResultsPage(html, 2)),
  });
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=3", { html: await lastPage(3) });
  const r = await rig.call("/v1/products/search?query=ipad&limit=200");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.count, 48);
  assert.equal(r.body.has_next_page, false);
  // Page 4 may go out with the first, before it names its last page, and is then not paid for;
  // nothing past it is asked for. Planned on the limit alone, page 5 was fetched and paid.
  await searchPagesFetched(rig, 4);
  assert.equal(rig.fake.pageRequests("page=5"), 0);
  assert.equal(r.headers.get("x-credits-cost"), "3");
  const usage = await rig.call("/v1/usage");
  assert.equal((usage.body as { requests_used: number }).requests_used, 3);
});

Deno.test("another account's search of small pages does not make an account's limit search fetch pages it does not use (probe GD)", async () => {
  await using rig = await startRig();
  const small = await fixture("search/amazon.de__amznscrp-plastikfrei-gesicht.html"); // 16 a page
  const large = await fixture("search/amazon.de__parsy-katzenfutter.html"); // 60 a page
  for (let p = 1; p <= 6; p++) {
    const page = p > 1 ? `&page=${p}` : "";
    rig.fake.page(`https://www.amazon.de/s?k=seife${page}`, {
      html: searchingFor(asResultsPage(small, p), "seife"),
    });
    rig.fake.page(`https://www.amazon.de/s?k=katzenfutter${page}`, {
      html: searchingFor(asResultsPage(large, p), "katzenfutter"),
    });
  }
  const victim = await rig.server.account("growth");
  for (let i = 0; i < 3; i++) {
    const cheap = await rig.call("/v1/products/search?query=seife&marketplace=DE");
    assert.equal(cheap.status, 200);
    const r = await rig.server.get(
      "/v1/products/search?query=katzenfutter&marketplace=DE&limit=60",
      victim.key,
    );
    assert.equal(r.status, 200);
    assert.equal((await r.json()).count, 60);
    assert.equal(r.headers.get("x-credits-cost"), "1");
  }
  await new Promise((r) => setTimeout(r, 200)); // any page fetched ahead would have come
  // Sized by the other account's 16-item pages, each call fetched three more it did not use.
  assert.equal(rig.fake.pageRequests("k=katzenfutter"), 3, "one page a call");
});

Deno.test("limit=200 over full pages asks for its further pages while the first is on its way, and pays each", async () => {
  // Each page takes 2 s; the harness's 1.5 s per request would cut them (on a loaded machine a
  // 1 s page sometimes met it: an uncharged 504 in CI), and what is measured is when pages are
  // asked for, not how long they may take.
  await using rig = await startRig({ browser: { timeoutMs: 10_000 } });
  await servePages(rig, 14);
  rig.fake.delayMs = 2_000;
  const call = rig.call("/v1/products/search?query=ipad&limit=200");
  await new Promise((r) => setTimeout(r, 1_000));
  const asked = rig.fake.pageRequests("/s?");
  const r = await call;
  assert.ok(asked > 1, `pages asked for before the first answered: ${asked}`);
  assert.equal(r.status, 200);
  assert.equal(r.body.count, 200);
  assert.equal(r.headers.get("x-credits-cost"), "13");
  assert.equal(await searchPagesFetched(rig, 13), 13, "every page fetched was used and paid");
});

Deno.test("one account's concurrent limit=200 searches over small pages all succeed: a call has at most a few pages in flight", async () => {
  await using rig = await startRig();
  const queries = ["ipad", "tablet", "stylus"];
  const html = await fixture("search/amazon.com__pavel-ipad-pro.html");
  for (const q of queries) {
    for (let p = 1; p <= 14; p++) {
      rig.fake.page(`https://www.amazon.com/s?k=${q}${p > 1 ? `&page=${p}` : ""}`, {
        html: asResultsPage(html, p),
      });
    }
  }
  const answers = await Promise.all(
    queries.map((q) => rig.call(`/v1/products/search?query=${q}&limit=200`)),
  );
  for (const r of answers) {
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 200));
    assert.equal(r.body.count, 200);
    assert.equal(r.headers.get("x-credits-cost"), "13");
  }
});

Deno.test("a client that hangs up while its pages are fetched pays for the pages fetched, and its search takes no further pages", async () => {
  const lines: Record<string, unknown>[] = [];
  await using rig = await startRig({ accessLog: (l) => lines.push(l) });
  await servePages(rig, 6);
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  rig.fake.slowMs = 600; // within the rig's 1.5 s exchange timeout
  rig.fake.fail("slow", 2);
  for (
    const path of [
      "/v1/products/details?asin=B07H57DNVV",
      "/v1/products/search?query=ipad&limit=60",
    ]
  ) {
    const gaveUp = await fetch(`${rig.server.url}${path}`, {
      headers: { "x-api-key": rig.key },
      signal: AbortSignal.timeout(150),
    }).then(() => false, () => true);
    assert.ok(gaveUp, "the client gave up first");
  }
  await new Promise((r) => setTimeout(r, 900)); // both pages have come, both calls settled
  // Each fetched one page at the client's request, and is charged for it: refunded, hanging up
  // would get upstream work for nothing.
  const usage = await rig.call("/v1/usage");
  assert.equal(usage.body.requests_used, 2, "one page each");
  assert.equal(rig.fake.pageRequests("/s?"), 1, "the search took no page past its first");
  const abandoned = lines.filter((l) => l.status === 499);
  assert.equal(abandoned.length, 2, `logged as 499: ${JSON.stringify(lines)}`);
  assert.deepEqual(abandoned.map((l) => l.credits), [1, 1]);
});

Deno.test("further pages that are the first again (a redirect to it, or its items once more) are given back and end the search (probe CS)", async () => {
  for (const how of ["redirect", "same items"] as const) {
    await using rig = await startRig();
    await servePages(rig, 1);
    const html = await fixture("search/amazon.com__pavel-ipad-pro.html");
    for (let p = 2; p <= 8; p++) {
      const url = `https://www.amazon.com/s?k=ipad&page=${p}`;
      if (how === "redirect") rig.fake.redirect(url, "https://www.amazon.com/s?k=ipad");
      else rig.fake.page(url, { html });
    }
    const r = await rig.call("/v1/products/search?query=ipad&limit=100");
    assert.equal(r.status, 200, `${how}: ${JSON.stringify(r.body).slice(0, 300)}`);
    const asins = (r.body.results as { asin: string }[]).map((x) => x.asin);
    assert.equal(new Set(asins).size, asins.length, `${how}: no item twice`);
    assert.equal(r.body.count, 16, how);
    assert.equal(r.body.has_next_page, false, how);
    assert.equal(r.headers.get("x-credits-cost"), "1", how);
    await new Promise((r) => setTimeout(r, 200)); // pages fetched ahead settle their refunds
    const usage = await rig.call("/v1/usage");
    assert.equal((usage.body as { requests_used: number }).requests_used, 1, how);
  }
});

/** Page 1's results again under page `p`'s address, with each ad replaced by a new one. */
function withNewAds(html: string, p: number): string {
  const page = parseSearch(html, { marketplace: "US" });
  const results = new Set(page.results.filter((x) => !x.sponsored).map((x) => x.asin));
  let out = html;
  for (const [i, ad] of page.results.filter((x) => x.sponsored).entries()) {
    if (!results.has(ad.asin)) out = out.replaceAll(ad.asin, `B0AD${p}X${i}`.padEnd(10, "0"));
  }
  return out;
}

Deno.test("further pages that are page 1 again with new ads are given back and end the search (probe DY)", async () => {
  const html = await fixture("search/amazon.com__alaa-laptop.html");
  const first = parseSearch(html, { marketplace: "US" });
  const results = first.results.filter((x) => !x.sponsored).length;
  assert.ok(first.results.length > results, "the page holds ads");
  // As served (stating page 1), and stating the page asked for: its results alone tell it.
  for (const stated of ["page 1", "the page asked for"] as const) {
    await using rig = await startRig();
    rig.fake.page("https://www.amazon.com/s?k=laptop", { html });
    for (let p = 2; p <= 30; p++) {
      let page = withNewAds(html, p);
      if (stated !== "page 1") page = page.replace(/(s-pagination-selected"[^>]*>)1/, `$1${p}`);
      rig.fake.page(`https://www.amazon.com/s?k=laptop&page=${p}`, { html: page });
    }
    const r = await rig.call("/v1/products/search?query=laptop&limit=200&include_sponsored=false");
    assert.equal(r.status, 200, stated);
    assert.equal(r.body.count, results, stated);
    assert.equal(r.body.has_next_page, false, stated);
    assert.equal(r.headers.get("x-credits-cost"), "1", stated);
    await new Promise((r) => setTimeout(r, 200)); // pages fetched ahead settle their refunds
    const usage = await rig.call("/v1/usage");
    assert.equal((usage.body as { requests_used: number }).requests_used, 1, stated);
    assert.ok(rig.fake.pageRequests("/s?") <= 5, `${stated}: ${rig.fake.pageRequests("/s?")}`);
  }
});

Deno.test("a further page of another search or another marketplace is given back and not merged in (probe DY)", async () => {
  const charger = await fixture("search/amazon.com__pricechecker-portable-charger.html");
  const other = {
    // Another query's page, stating page 2 as asked.
    "another query": charger.replace(/(s-pagination-selected"[^>]*>)1/, "$12"),
    // Another query's own page 1: not an earlier page of this search (probe EF).
    "another query's page 1": charger,
    // amazon.de's page for the same words: only its prices (EUR) tell it.
    "another marketplace": (await fixture("search/amazon.de__parsy-katzenfutter.html"))
      .replaceAll("katzenfutter", "ipad pro").replace(/(s-pagination-selected"[^>]*>)1/, "$12"),
  };
  for (const [how, html] of Object.entries(other)) {
    await using rig = await startRig();
    await servePages(rig, 1);
    rig.fake.page("https://www.amazon.com/s?k=ipad&page=2", { html });
    const r = await rig.call("/v1/products/search?query=ipad&limit=40");
    assert.equal(r.status, 200, how);
    const asins = (r.body.results as { asin: string }[]).map((x) => x.asin);
    const page1 = parseSearch(await fixture("search/amazon.com__pavel-ipad-pro.html"), {
      marketplace: "US",
    }).results.map((x) => x.asin);
    assert.deepEqual(asins, page1, `${how}: page 1's items alone`);
    assert.equal(r.body.has_next_page, true, how);
    assert.equal(r.headers.get("x-credits-cost"), "1", how);
    await new Promise((r) => setTimeout(r, 200));
    const usage = await rig.call("/v1/usage");
    assert.equal((usage.body as { requests_used: number }).requests_used, 1, how);
  }
});

Deno.test("a listing is labelled with the page the marketplace's page states, not the page asked for (probe DY)", async () => {
  await using rig = await startRig();
  const html = await fixture("search/amazon.com__pavel-ipad-pro.html");
  // Past the last page, the marketplace answers page 1, whether by redirect or under the address.
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=7", { html });
  rig.fake.page("https://www.amazon.com/s?k=ipad", { html });
  rig.fake.redirect("https://www.amazon.com/s?k=ipad&page=9", "https://www.amazon.com/s?k=ipad");
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=3", { html: asResultsPage(html, 3) });
  for (const [asked, stated] of [[7, 1], [9, 1], [3, 3]]) {
    const r = await rig.call(`/v1/products/search?query=ipad&page=${asked}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.page, stated, `page=${asked}`);
  }
});

Deno.test("a limit search answered page 1 for a page past the last answers page 1 with its own next page (probe EB)", async () => {
  await using rig = await startRig();
  await servePages(rig, 3);
  const html = await fixture("search/amazon.com__pavel-ipad-pro.html");
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=7", { html });
  for (const q of ["page=7", "page=7&limit=40"]) {
    const r = await rig.call(`/v1/products/search?query=ipad&${q}`);
    assert.equal(r.status, 200, q);
    assert.equal(r.body.page, 1, q);
    assert.equal(r.body.count, 16, q);
    assert.equal(r.body.has_next_page, true, q);
    assert.equal(r.headers.get("x-credits-cost"), "1", q);
  }
  await new Promise((r) => setTimeout(r, 200)); // pages fetched ahead settle their refunds
  assert.equal(((await rig.call("/v1/usage")).body as { requests_used: number }).requests_used, 2);
});

Deno.test("a limit search asks for no further page once its time for them is spent, and a call past its deadline is an uncharged 504 (probe EB)", async () => {
  {
    await using rig = await startRig({ times: { deadlineMs: 10_000, morePagesMs: 500 } });
    await servePages(rig, 13);
    rig.fake.delayMs = 400;
    const r = await rig.call("/v1/products/search?query=ipad&limit=200");
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
    const count = r.body.count as number;
    assert.ok(count >= 16 && count < 200, String(count));
    assert.equal(r.body.has_next_page, true);
    const pages = Number(r.headers.get("x-credits-cost"));
    assert.equal(r.body.count, pages * 16);
    await new Promise((r) => setTimeout(r, 600)); // pages fetched ahead settle their refunds
    const usage = (await rig.call("/v1/usage")).body as { requests_used: number };
    assert.equal(usage.requests_used, pages);
  }
  {
    await using rig = await startRig({ times: { deadlineMs: 600, morePagesMs: 60_000 } });
    rig.fake.page(
      "https://www.amazon.com/dp/B07H57DNVV",
      "product/amazon.com__app-B07H57DNVV.html",
    );
    rig.fake.delayMs = 1_000;
    const r = await rig.call("/v1/products/details?asin=B07H57DNVV");
    assert.equal(r.status, 504, JSON.stringify(r.body).slice(0, 300));
    assert.equal((r.body as { error: { code: string } }).error.code, "upstream_timeout");
    assert.equal(r.headers.get("x-credits-cost"), "0");
    const usage = (await rig.call("/v1/usage")).body as { requests_used: number };
    assert.equal(usage.requests_used, 0);
  }
});

Deno.test("a limit search whose first page names page 2 as the last asks for no page past it and pays two pages", async () => {
  await using rig = await startRig();
  const html = await fixture("search/amazon.com__pavel-ipad-pro.html");
  // Page 1 as the first of two: it links page 2 (also as its next page) and shows "… 2" as the
  // last, where the saved page links page 3 and shows 20.
  const namingTwo = html
    .replace(/(s-pagination-disabled" aria-disabled="true">)20</, "$12<")
    .replace(/([?&;]page=)3\b/g, "$12");
  const first = parseSearch(namingTwo, { marketplace: "US" });
  assert.equal(first.last_page, 2);
  assert.equal(first.has_next_page, true);
  rig.fake.page("https://www.amazon.com/s?k=ipad", { html: namingTwo });
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=2", { html: await lastPage(2) });
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=3", { html: asResultsPage(html, 3) });
  // limit=60: a new account guesses 60-item pages, so no page goes out with the first; after it,
  // the 44 items missing would need three 16-item pages, and the pagination allows one.
  const r = await rig.call("/v1/products/search?query=ipad&limit=60");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.body.count, 32);
  assert.equal(r.body.has_next_page, false);
  assert.equal(r.headers.get("x-credits-cost"), "2");
  assert.equal(await searchPagesFetched(rig, 2), 2, "pages 1 and 2, nothing past the last");
  assert.equal(rig.fake.pageRequests("page=3"), 0);
  const usage = await rig.call("/v1/usage");
  assert.equal((usage.body as { requests_used: number }).requests_used, 2);
});

Deno.test("a further page stating another, later page number is given back and not merged, and the search ends there", async () => {
  await using rig = await startRig();
  await servePages(rig, 1);
  const html = await fixture("search/amazon.com__pavel-ipad-pro.html");
  // Asked for page 2, the marketplace answers a page of new items that states it is page 7.
  const seventh = asResultsPage(html, 7);
  const stated = parseSearch(seventh, { marketplace: "US" });
  assert.equal(stated.page, 7);
  assert.equal(stated.page_stated, true);
  assert.equal(stated.results.length, 16);
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=2", { html: seventh });
  rig.fake.page("https://www.amazon.com/s?k=ipad&page=3", { html: asResultsPage(html, 3) });
  const r = await rig.call("/v1/products/search?query=ipad&limit=40");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  const page1 = parseSearch(html, { marketplace: "US" }).results.map((x) => x.asin);
  const asins = (r.body.results as { asin: string }[]).map((x) => x.asin);
  assert.deepEqual(asins, page1, "page 1's items alone");
  assert.equal(r.body.count, 16);
  assert.equal(r.body.has_next_page, true);
  // Page 3 went out with page 2 (24 items missing, 16 a page): it comes after the page that was
  // not page 2, so it is given back as well.
  assert.equal(r.headers.get("x-credits-cost"), "1", "the page stating 7 is given back");
  // Pages fetched ahead settle their refunds after the answer: waited for, up to 5 s.
  let used = NaN;
  for (const until = Date.now() + 5_000; Date.now() < until;) {
    used = ((await rig.call("/v1/usage")).body as { requests_used: number }).requests_used;
    if (used === 1) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(used, 1);
});

/**
 * Upstream figures against the fake marketplace (tests/fake_marketplace.ts), through the real
 * upstream source and browser transport (`origin:`):
 * - search `limit=200` with every page answered after 300 ms, against one page's wall time
 *   (target ≤ 1.5×: further pages are fetched concurrently, not one after another);
 * - 100 concurrent identical details calls: upstream page fetches (target 1).
 */
import { FakeMarketplace } from "../tests/fake_marketplace.ts";
import { asResultsPage, fixture } from "../tests/fixture.ts";
import { BrowserTransport } from "../upstream/browser_transport.ts";
import { UpstreamSource } from "../upstream/source.ts";
import { pageReaderFor } from "../upstream/page_pool.ts";
import { loadConfig } from "../config.ts";
import { DATA_ENDPOINTS } from "../schemas/endpoints.ts";
import { validateQuery } from "../routes/validate_query.ts";
import { queryParams } from "../routes/query_params.ts";
import { median } from "./median.ts";

function request(path: string) {
  const endpoint = DATA_ENDPOINTS.find((e) => e.path === path.split("?")[0])!;
  const v = validateQuery(endpoint.params, queryParams(`http://bench${path}`));
  if (!v.ok) throw new TypeError(`bench request ${path} is invalid`);
  return { endpoint, params: v.value, chargePage: () => Promise.resolve(true) };
}

async function timed(
  source: UpstreamSource,
  path: string,
): Promise<{ ms: number; body: Record<string, unknown> }> {
  const t0 = performance.now();
  const body = await source.fetch(request(path)) as Record<string, unknown>;
  return { ms: performance.now() - t0, body };
}

const ROUNDS = 5;

export async function benchUpstream(): Promise<void> {
  await using fake = new FakeMarketplace();
  // amazon.de__parsy-katzenfutter: 60 results a page, so 200 items span four pages; each further
  // page with items of its own (asResultsPage).
  const grid = await fixture("search/amazon.de__parsy-katzenfutter.html");
  // A query of its own for every timed call: nothing a call fetched serves a later one.
  const queries = ["warmup", ...Array.from({ length: 2 * ROUNDS }, (_, i) => `katzenfutter${i}`)];
  for (let p = 1; p <= 8; p++) {
    for (const q of queries) {
      fake.page(`https://www.amazon.de/s?k=${q}${p > 1 ? `&page=${p}` : ""}`, {
        html: asResultsPage(grid, p),
      });
    }
  }
  fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  const transport = new BrowserTransport({ origin: fake.origin });
  // Pages are read as a deployment reads them: on PARSE_WORKERS workers, the cores unless set.
  const workers = loadConfig().parseWorkers;
  const reader = pageReaderFor(workers);
  const source = new UpstreamSource(transport, reader);
  await timed(source, "/v1/products/search?query=warmup&marketplace=DE&limit=200"); // JIT, fixtures, connections

  // One call's wall time swung by a third between runs on a loaded machine (the ratio read 1.44
  // to 1.75 on one commit), so each figure is the median of alternating rounds.
  fake.delayMs = 300;
  const ones: number[] = [];
  const alls: number[] = [];
  let items = 0;
  let pages = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const q = (i: number) => `query=katzenfutter${2 * r + i}&marketplace=DE`;
    ones.push((await timed(source, `/v1/products/search?${q(0)}&page=2`)).ms);
    const before = fake.pageRequests("/s?");
    const all = await timed(source, `/v1/products/search?${q(1)}&limit=200`);
    pages = fake.pageRequests("/s?") - before;
    items = all.body.count as number;
    alls.push(all.ms);
  }
  const one = median(ones);
  const all = median(alls);
  console.log(
    `upstream search (fake marketplace answering each page after 300 ms; medians of ${ROUNDS} alternating rounds; PARSE_WORKERS=${workers}):`,
  );
  console.log(`  one page           ${one.toFixed(0).padStart(6)} ms`);
  console.log(
    `  limit=200          ${
      all.toFixed(0).padStart(6)
    } ms  (${items} items, ${pages} pages requested)`,
  );
  console.log(`  ratio limit/one: ${(all / one).toFixed(2)} (target ≤ 1.50)`);

  const fetchesBefore = fake.pageRequests("/dp/");
  const answers = await Promise.all(
    Array.from(
      { length: 100 },
      () =>
        source.fetch(request("/v1/products/details?asin=B07H57DNVV")).then(() => true, () => false),
    ),
  );
  const fetches = fake.pageRequests("/dp/") - fetchesBefore;
  console.log("upstream details, 100 concurrent identical calls:");
  console.log(
    `  answered ${answers.filter(Boolean).length}/100, upstream fetches ${fetches} (target 1)`,
  );
  await transport.close();
  reader.close();
}

if (import.meta.main) await benchUpstream();

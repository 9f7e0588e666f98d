import assert from "node:assert/strict";
import { fixtureBytes } from "./fixture.ts";
import { parseBytes, parseTask as parseArgs } from "./parse_task.ts";

const root = new URL("../", import.meta.url);

async function runParse(name: string, ...flags: string[]) {
  return await parseBytes(await fixtureBytes(name), ".html", ...flags);
}

Deno.test("deno task parse prints the detected page's JSON and exits 0", async () => {
  const { code, stdout } = await runParse("bestsellers/amazon.de__parsy-ce-de.html");
  assert.equal(code, 0);
  const page = JSON.parse(stdout);
  assert.equal(page.category, "Bestseller in Elektronik & Foto");
  assert.equal(page.results.length, 30);
  // Marketplace taken from the page's canonical link: prices read as euros.
  assert.equal(page.results[0].price.currency, "EUR");
});

Deno.test("deno task parse reads a gzipped page as the page (probe EZ: the fixtures are kept so)", async () => {
  const page = await fixtureBytes("bestsellers/amazon.de__parsy-ce-de.html");
  const zipped = await new Response(
    new Blob([new Uint8Array(page)]).stream().pipeThrough(new CompressionStream("gzip")),
  ).bytes();
  const out = await parseBytes(zipped, ".html.gz");
  assert.equal(out.code, 0, out.stderr);
  assert.equal(JSON.parse(out.stdout).results.length, 30);
});

Deno.test("deno task parse prints the endpoint's envelope, the same the HTTP answer has (16.4)", async () => {
  const search = JSON.parse((await runParse("search/amazon.de__parsy-katzenfutter.html")).stdout);
  // /v1/products/search's fields: the page's 60 results with count, page, query (from the
  // page's search box), sort, marketplace, has_next_page and total_results ("über 3.000").
  assert.deepEqual(Object.keys(search).sort(), [
    "count",
    "has_next_page",
    "marketplace",
    "page",
    "query",
    "results",
    "sort",
    "total_results",
  ]);
  assert.equal(search.count, 60);
  assert.equal(search.query, "katzenfutter");
  assert.equal(search.marketplace, "DE");
  assert.equal(search.total_results, 3000);
  const store = JSON.parse(
    (await runParse("seller_products/amazon.com__app-storefront-A2DP2EEPU3VU45.html")).stdout,
  );
  assert.equal(store.seller_id, "A2DP2EEPU3VU45");
  assert.equal(store.count, 16);
  const offers = JSON.parse(
    (await runParse("offers/amazon.com__wk-aod-main-B0BN72FYFG.html")).stdout,
  );
  assert.deepEqual(Object.keys(offers), ["url", "asin", "count", "offers"]);
  assert.equal(offers.count, 11);
  assert.equal(offers.url, "https://www.amazon.com/dp/B0BN72FYFG");
  // A single review without a canonical link: named by its id, as the endpoint names it (probe
  // CU: the marketplace's root was printed).
  const review = JSON.parse(
    (await runParse("reviews/amazon.com__weih-B003EM8008-p3837.html")).stdout,
  );
  assert.equal(review.review_id, "R12J0UJC4DRYLC");
  assert.equal(review.url, "https://www.amazon.com/gp/customer-reviews/R12J0UJC4DRYLC");
});

Deno.test("deno task parse honours --type and --marketplace", async () => {
  const { code, stdout } = await runParse(
    "bestsellers/amazon.in__santapan-gp-bestsellers.html",
    "--type",
    "categories",
    "--marketplace",
    "IN",
  );
  assert.equal(code, 0);
  const page = JSON.parse(stdout);
  assert.equal(page.categories[0].url, "https://www.amazon.in/gp/bestsellers/boost");
  assert.equal(page.count, page.categories.length);
  assert.equal(page.marketplace, "IN");
});

Deno.test("deno task parse refuses, as the endpoint does, a page that names another marketplace than --marketplace (probe HP)", async () => {
  for (
    const [name, asked, line] of [
      ["product/amazon.com__app-B07H57DNVV.html", "UK", "www.amazon.com's, not www.amazon.co.uk's"],
      ["product/amazon.de__sapila-B008TLGFW4.html", "us", "www.amazon.de's, not www.amazon.com's"],
    ]
  ) {
    const { code, stdout, stderr } = await runParse(name, "--marketplace", asked);
    assert.equal(code, 1, stdout);
    assert.equal(stdout, "");
    assert.equal(stderr.trim().split("\n").length, 1, stderr);
    assert.ok(stderr.includes(`the page is ${line}`), stderr);
  }
  // Its own marketplace, given or not, reads as before.
  const own = await runParse("product/amazon.de__sapila-B008TLGFW4.html", "--marketplace", "DE");
  assert.equal(own.code, 0, own.stderr);
  assert.equal(JSON.parse(own.stdout).url, "https://www.amazon.de/dp/B008TLGFW4");
});

Deno.test("deno task parse exits 1 with one line on a blocked page", async () => {
  const { code, stdout, stderr } = await runParse("blocked/amazon.com__app-robot-check.html");
  assert.equal(code, 1);
  assert.equal(stdout, "");
  const lines = stderr.trim().split("\n");
  assert.equal(lines.length, 1, stderr);
  assert.match(lines[0], /blocked page \(robot_check\)/);
});

Deno.test("deno task parse exits 1 with one line when the page is not of the given type", async () => {
  const { code, stderr } = await runParse(
    "bestsellers/amazon.de__parsy-ce-de.html",
    "--type",
    "promotion",
  );
  assert.equal(code, 1);
  assert.equal(stderr.trim().split("\n").length, 1, stderr);
});

Deno.test("deno task parse and the HTTP endpoint answer the same page with the same JSON", async () => {
  const { startDemo } = await import("../demo/server.ts");
  await using demo = await startDemo({ port: 0 });
  const pairs: [string, string][] = [
    [
      "/v1/products/details?asin=B07H57DNVV&marketplace=US",
      "product/amazon.com__app-B07H57DNVV.html",
    ],
    [
      "/v1/products/offers?asin=B0BN72FYFG&marketplace=US",
      "offers/amazon.com__wk-aod-main-B0BN72FYFG.html",
    ],
    ["/v1/bestsellers?category=hi&marketplace=US", "bestsellers/amazon.com__parsy-zgbs-hi.html"],
    [
      "/v1/products/search?query=portable%20charger&marketplace=US",
      "search/amazon.com__pricechecker-portable-charger.html",
    ],
  ];
  for (const [path, page] of pairs) {
    const http = await (await fetch(demo.origin + path, { headers: { "x-api-key": demo.key } }))
      .json();
    const cli = JSON.parse((await runParse(page)).stdout);
    assert.deepEqual(cli, http, path);
  }
});

Deno.test("deno task parse prints the page number the page shows, not its canonical link's", async () => {
  // The page's pagination marks "3" (aria-current="page") and its banner reads "33-48 of over
  // 50,000 results"; its canonical link names no page.
  const { code, stdout } = await runParse("search/amazon.in__aditya-motorola-phone-5g.html");
  assert.equal(code, 0);
  assert.equal(JSON.parse(stdout).page, 3);
});

Deno.test("deno task parse reads no more of a file than a page may be (probe DZ: /dev/zero took 3 GB)", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    // Not through `deno task`: a kill must reach the process that reads.
    args: ["run", "--allow-read", "cli/parse.ts", "/dev/zero"],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => out.kill("SIGKILL"), 20_000);
  const { code, stderr } = await out.output();
  clearTimeout(timer);
  assert.equal(code, 1);
  assert.match(new TextDecoder().decode(stderr), /larger than the 8 MiB a page may be/);
});

Deno.test("deno task parse takes the marketplace a page names in its head, before its links", async () => {
  // amazon.de's page with its canonical link and amazon.de addresses taken out: the head still
  // names the marketplace (ue_mid), where the page had been labelled amazon.com.
  const html = new TextDecoder().decode(
    await fixtureBytes("product/amazon.de__sapila-B008TLGFW4.html"),
  ).replace(/<link rel="canonical"[^>]*>/, "").replace(
    /https?:\/\/www\.amazon\.de/g,
    "https://x.test",
  );
  const out = await parseBytes(new TextEncoder().encode(html), ".html");
  assert.equal(out.code, 0, out.stderr);
  assert.equal(JSON.parse(out.stdout).url, "https://www.amazon.de/dp/B008TLGFW4");
});

const USAGE_LINE = "usage: deno task parse [--type T] [--marketplace M] FILE";

Deno.test("deno task parse takes the marketplace code in any case, as the API's marketplace is read", async () => {
  const { code, stdout, stderr } = await runParse(
    "bestsellers/amazon.in__santapan-gp-bestsellers.html",
    "--type",
    "categories",
    "--marketplace",
    "in",
  );
  assert.equal(code, 0, stderr);
  assert.equal(JSON.parse(stdout).marketplace, "IN");
});

Deno.test("deno task parse: an unknown flag is a usage error (exit 2) naming it, never read as the file", async () => {
  const file = await Deno.makeTempFile({ suffix: ".html" });
  try {
    await Deno.writeFile(file, await fixtureBytes("bestsellers/amazon.de__parsy-ce-de.html"));
    for (const args of [["--bogus", file], ["--bogus"], ["--bogus=1", file]]) {
      const out = await parseArgs(...args);
      assert.equal(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
      assert.equal(out.stdout, "");
      const flag = args[0];
      assert.equal(out.stderr.trim(), `unexpected argument ${flag}; ${USAGE_LINE}`, args.join(" "));
    }
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("deno task parse without a file is a usage error (exit 2), the usage line alone", async () => {
  for (const args of [[], ["--type", "categories"], ["--marketplace", "DE"]]) {
    const out = await parseArgs(...args);
    assert.equal(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
    assert.equal(out.stdout, "");
    assert.equal(out.stderr.trim(), USAGE_LINE, args.join(" "));
  }
});

/**
 * The displayed currency (issue 16.3): `currency` is the currency of the amount shown, read from
 * the price itself; with a postcode asked for, a page showing another currency was rendered for
 * a shopper elsewhere and is the uncharged location-mismatch error. Two real pages: the corpus
 * category listing that amazon.com served in Egyptian pounds, and a real product page whose
 * "$11.88" was edited (text only) to "EUR 11,88", as amazon.com shows it to a shopper in Europe.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { asResultsPage, fixture } from "./fixture.ts";
import { DEAL_PRODUCTS_PAGE, DEALS_PAGE } from "./handbuilt_pages.ts";

const DP = "https://www.amazon.com/dp/B07H57DNVV";

Deno.test("a product page showing EUR on amazon.com: currency EUR; with a postcode, an uncharged mismatch", async () => {
  await using rig = await startRig();
  const html = (await fixture("product/amazon.com__app-B07H57DNVV.html")).replaceAll(
    "$11.88",
    "EUR 11,88",
  );
  rig.fake.page(DP, { html });
  const plain = await rig.call("/v1/products/details?asin=B07H57DNVV");
  assert.equal(plain.status, 200, JSON.stringify(plain.body));
  assert.deepEqual(plain.body.price, {
    amount: 11.88,
    display: "EUR 11,88",
    currency: "EUR",
    list_price: null,
  });
  const before = (await rig.call("/v1/usage")).body.requests_used;
  const zipped = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001");
  assert.equal(zipped.status, 502, JSON.stringify(zipped.body));
  assert.match(
    (zipped.body.error as { message: string }).message,
    /Delivery location mismatch: the page shows prices in EUR instead of USD/,
  );
  assert.equal(zipped.headers.get("x-credits-cost"), "0");
  assert.equal((await rig.call("/v1/usage")).body.requests_used, before);
});

Deno.test("a category listing in EGP: read as EGP; with a postcode, an uncharged mismatch", async () => {
  await using rig = await startRig();
  rig.fake.page(
    "https://www.amazon.com/s?rh=n:13896617011",
    "category/amazon.com__azza-rh-n16225007011-n13896617011.html",
  );
  const zipped = await rig.call("/v1/products/category?category_id=13896617011&zip=10001");
  assert.equal(zipped.status, 502, JSON.stringify(zipped.body));
  assert.match(
    (zipped.body.error as { message: string }).message,
    /prices in EGP instead of USD for postcode '10001'/,
  );
  assert.equal(zipped.headers.get("x-credits-cost"), "0");
});

Deno.test("the marketplace's own currency with a postcode is served as usual", async () => {
  await using rig = await startRig();
  rig.fake.page(DP, "product/amazon.com__app-B07H57DNVV.html");
  const r = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001");
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal((r.body.price as { currency: string }).currency, "USD");
});

Deno.test("a search limit with a postcode whose first page shows another currency is not charged, nor the pages fetched with it", async () => {
  await using rig = await startRig();
  const grid = "category/amazon.com__azza-rh-n16225007011-n13896617011.html"; // EGP prices
  for (let p = 1; p <= 6; p++) {
    rig.fake.page(`https://www.amazon.com/s?k=ipad${p > 1 ? `&page=${p}` : ""}`, grid);
  }
  const r = await rig.call("/v1/products/search?query=ipad&limit=200&zip=10001");
  assert.equal(r.status, 502, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.headers.get("x-credits-cost"), "0");
  await new Promise((r) => setTimeout(r, 200)); // anything fetched ahead would have come by now
  // Pages 2-4 went out with the first (upstream/search_ahead.ts), and no page after it was read.
  assert.ok(rig.fake.pageRequests("/s?") <= 4, "no page fetched past the first's answer");
  const usage = await rig.call("/v1/usage");
  assert.equal((usage.body as { requests_used: number }).requests_used, 0);
});

Deno.test("with a postcode, offers, best sellers, deals and a deal's products in another currency are uncharged mismatches (probe EE)", async () => {
  await using rig = await startRig({ plan: "scale" });
  // Their prices in euros, as a page rendered for a shopper elsewhere shows them.
  const inEuros = (html: string) =>
    html.replace(
      /<span class="a-price-symbol">\$<\/span>/g,
      '<span class="a-price-symbol">€</span>',
    )
      .replace(/\$(\d)/g, "€$1");
  const cases: [string, string, string][] = [
    [
      "/v1/products/offers?asin=B0BN72FYFG",
      "https://www.amazon.com/gp/product/ajax/?asin=B0BN72FYFG&pc=dp&experienceId=aodAjaxMain",
      await fixture("offers/amazon.com__wk-aod-page-B0BN72FYFG.html"),
    ],
    [
      "/v1/bestsellers",
      "https://www.amazon.com/gp/bestsellers",
      await fixture("bestsellers/amazon.com__parsy-zgbs-hi.html"),
    ],
    ["/v1/deals", "https://www.amazon.com/deals", DEALS_PAGE],
    [
      "/v1/deals/products?deal_id=e5f6a7b8",
      "https://www.amazon.com/deal/e5f6a7b8",
      DEAL_PRODUCTS_PAGE,
    ],
  ];
  for (const [path, url, html] of cases) {
    rig.fake.page(url, { html: inEuros(html) });
    const sep = path.includes("?") ? "&" : "?";
    const plain = await rig.call(path);
    assert.equal(plain.status, 200, `${path}: ${JSON.stringify(plain.body).slice(0, 300)}`);
    assert.match(JSON.stringify(plain.body), /"currency":"EUR"/, path);
    const zipped = await rig.call(`${path}${sep}zip=10001`);
    assert.equal(zipped.status, 502, `${path}: ${JSON.stringify(zipped.body).slice(0, 300)}`);
    assert.match(
      (zipped.body.error as { message: string }).message,
      /prices in EUR instead of USD for postcode '10001'/,
      path,
    );
    assert.equal(zipped.headers.get("x-credits-cost"), "0", path);
  }
  assert.equal((await rig.call("/v1/usage")).body.requests_used, cases.length);
});

Deno.test("with a postcode, only prices are checked, and a bare $ off the dollar marketplaces is another currency (probe EG)", async () => {
  await using rig = await startRig();
  // A detail row labelled "currency" is a page label, not a price.
  const html = (await fixture("product/amazon.com__app-B07H57DNVV.html"))
    .replace("<b>Label:</b> Lava Music", "<b>currency:</b> US Dollar");
  rig.fake.page(DP, { html });
  const labelled = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001");
  assert.equal(labelled.status, 200, JSON.stringify(labelled.body).slice(0, 300));
  assert.equal((labelled.body.product_facts as Record<string, string>).currency, "US Dollar");
  // amazon.de showing "$6.37": its currency is not read, yet it cannot be euros.
  const de = await fixture("product/amazon.de__app-B01LW7X0JJ.html");
  const dollars = de.replaceAll("EUR 6,37", "$6.37").replaceAll("6,37 €", "$6.37")
    .replaceAll("6,37&nbsp;€", "$6.37");
  assert.notEqual(dollars, de);
  rig.fake.page("https://www.amazon.de/dp/B01LW7X0JJ", { html: dollars });
  const plain = await rig.call("/v1/products/details?asin=B01LW7X0JJ&marketplace=DE");
  assert.deepEqual(
    [
      (plain.body.price as { currency: string }).currency,
      (plain.body.price as { display: string }).display,
    ],
    ["", "$6.37"],
  );
  const zipped = await rig.call("/v1/products/details?asin=B01LW7X0JJ&marketplace=DE&zip=10115");
  assert.equal(zipped.status, 502, JSON.stringify(zipped.body).slice(0, 300));
  assert.match((zipped.body.error as { message: string }).message, /prices in \$ instead of EUR/);
  assert.equal(zipped.headers.get("x-credits-cost"), "0");
  // amazon.com.br writes R$: a bare "$" there is not reais either (probe EI).
  const br = await fixture("product/amazon.com.br__mzmvyp-B0D6NN6TM7.html");
  rig.fake.page("https://www.amazon.com.br/dp/B0D6NN6TM7", { html: br.replaceAll("R$", "$") });
  const real = await rig.call("/v1/products/details?asin=B0D6NN6TM7&marketplace=BR&zip=01310-100");
  assert.equal(real.status, 502, JSON.stringify(real.body).slice(0, 300));
  assert.match((real.body.error as { message: string }).message, /prices in \$ instead of BRL/);
});

Deno.test("a further search page in a bare $ on amazon.de ends a limit search there, with or without a postcode", async () => {
  await using rig = await startRig();
  // 48 organic results in euros, a next page linked; page 2 is its own items priced in "$".
  const html = await fixture("search/amazon.de__parsy-katzenfutter.html");
  const dollars = asResultsPage(html, 2).replaceAll("€", "$");
  rig.fake.page("https://www.amazon.de/s?k=katzenfutter", { html });
  rig.fake.page("https://www.amazon.de/s?k=katzenfutter&page=2", { html: dollars });
  rig.fake.page("https://www.amazon.de/s?k=katzenfutter&page=3", { html: asResultsPage(html, 3) });
  const one = await rig.call("/v1/products/search?query=katzenfutter&marketplace=DE");
  const page1 = (one.body.results as unknown[]).length;
  for (const zip of ["", "&zip=10115"]) {
    const before = (await rig.call("/v1/usage")).body.requests_used as number;
    const r = await rig.call(
      `/v1/products/search?query=katzenfutter&marketplace=DE&limit=150${zip}`,
    );
    assert.equal(r.status, 200, `${zip}: ${JSON.stringify(r.body).slice(0, 300)}`);
    const results = r.body.results as { price: { display: string } | null }[];
    assert.equal(results.length, page1, zip);
    assert.ok(!results.some((x) => x.price?.display.includes("$")), zip);
    assert.equal(r.body.has_next_page, true, zip);
    assert.equal(r.headers.get("x-credits-cost"), "1", zip);
    assert.equal((await rig.call("/v1/usage")).body.requests_used, before + 1, zip);
  }
});

Deno.test("a currency no marketplace uses is another currency with a postcode, and a list price in another currency is no list price (probe FP)", async () => {
  await using rig = await startRig();
  const de = await fixture("product/amazon.de__app-B01LW7X0JJ.html");
  const roubles = de.replaceAll("EUR 6,37", "6,37 ₽").replaceAll("6,37 €", "6,37 ₽")
    .replaceAll("6,37&nbsp;€", "6,37 ₽");
  assert.notEqual(roubles, de);
  rig.fake.page("https://www.amazon.de/dp/B01LW7X0JJ", { html: roubles });
  const before = (await rig.call("/v1/usage")).body.requests_used;
  const zipped = await rig.call("/v1/products/details?asin=B01LW7X0JJ&marketplace=DE&zip=10115");
  assert.equal(zipped.status, 502, JSON.stringify(zipped.body).slice(0, 300));
  assert.match((zipped.body.error as { message: string }).message, /prices in RUB instead of EUR/);
  assert.equal(zipped.headers.get("x-credits-cost"), "0");
  assert.equal((await rig.call("/v1/usage")).body.requests_used, before);

  // The struck-through "Unverb. Preisempf.: 26,99 €" over 14,09 €, then shown in dollars.
  const mug = await fixture("product/amazon.de__sapila-B008TLGFW4.html");
  const dp = "https://www.amazon.de/dp/B008TLGFW4";
  rig.fake.page(dp, { html: mug });
  const own = await rig.call("/v1/products/details?asin=B008TLGFW4&marketplace=DE");
  assert.equal((own.body.price as { list_price: number }).list_price, 26.99);
  rig.fake.page(dp, { html: mug.replace("26,99&nbsp;€", "$99.99") });
  const other = await rig.call("/v1/products/details?asin=B008TLGFW4&marketplace=DE&zip=10115");
  assert.equal(other.status, 200, JSON.stringify(other.body).slice(0, 300));
  assert.deepEqual(other.body.price, {
    amount: 14.09,
    display: "14,09 €",
    currency: "EUR",
    list_price: null,
  });
});

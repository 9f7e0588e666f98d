/**
 * Price history (issue 17.3) over real HTTP: the fake marketplace changes a product's price
 * between two details fetches (the real page's "$11.88" edited to "$10.50", text only), and
 * /v1/products/history answers both observations newest first, charged like any call. HISTORY=off
 * records nothing and answers an uncharged 404. At most 1,000 observations are kept per product.
 */
import assert from "node:assert/strict";
import { type Rig, startRig } from "./upstream_harness.ts";
import { fixture } from "./fixture.ts";
import { HISTORY_POINTS, HistorySource } from "../upstream/price_history.ts";
import { systemClock } from "../metering/clock.ts";
import type { DataSource } from "../upstream/data_source.ts";
import { parseProduct } from "../parsers/product.ts";
import { envelope } from "../upstream/envelopes.ts";
import { DATA_ENDPOINTS } from "../schemas/endpoints.ts";
import { KV } from "../metering/kv_layout.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { replacing } from "./counted_kv.ts";

const DP = "https://www.amazon.com/dp/B07H57DNVV";
const PAGE = "product/amazon.com__app-B07H57DNVV.html";

/** A details call of the watched product, as the route makes it. */
const DETAILS_CALL = {
  endpoint: DATA_ENDPOINTS.find((e) => e.name === "details")!,
  params: { asin: "B07H57DNVV" },
  chargePage: () => Promise.resolve(false),
};

/** The details answer the upstream source gives for PAGE (its envelope), as the route checks it. */
async function detailsAnswer() {
  return envelope.details(
    {},
    "US",
    { url: DP, authenticated: false },
    parseProduct(await fixture(PAGE), { marketplace: "US" }),
  );
}

/** A rig's source wrapped in a HistorySource, and a wait for the appends it started. */
function recorded() {
  let history: HistorySource | undefined;
  return {
    wrap: (
      source: DataSource,
      kv: Deno.Kv,
    ) => (history = new HistorySource(source, kv, systemClock)),
    settled: () => history!.settled(),
    /** A details call of B07H57DNVV (`extra` appended to its query) answered 200, appended. */
    async fetched(rig: Rig, extra = "") {
      const r = await rig.call(`/v1/products/details?asin=B07H57DNVV${extra}`);
      assert.equal(r.status, 200);
      await history!.settled();
    },
  };
}

Deno.test("history: two fetches with a price change between them, newest first, 1 credit", async () => {
  const history = recorded();
  await using rig = await startRig({ wrap: history.wrap });
  const page = await fixture(PAGE);
  rig.fake.page(DP, PAGE);
  await history.fetched(rig);
  rig.fake.page(DP, { html: page.replaceAll("$11.88", "$10.50") });
  const second = await rig.call("/v1/products/details?asin=B07H57DNVV");
  assert.equal((second.body.price as { amount: number }).amount, 10.5);
  await history.settled();

  const r = await rig.call("/v1/products/history?asin=b07h57dnvv");
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.headers.get("x-credits-cost"), "1");
  const schema = DATA_ENDPOINTS.find((e) => e.name === "history")!.response;
  assert.ok(schema.safeParse(r.body).success);
  assert.equal(r.body.asin, "B07H57DNVV");
  assert.equal(r.body.marketplace, "US");
  const points = r.body.points as {
    observed_at: string;
    price: { amount: number; currency: string };
    in_stock: boolean;
    rating: number;
    reviews_count: number;
    bestsellers_rank: unknown[];
  }[];
  assert.deepEqual(points.map((p) => p.price.amount), [10.5, 11.88]);
  assert.ok(points[0].observed_at > points[1].observed_at);
  // The rest is what the page shows: in stock, 4.3 of 5, 33 ratings, #2 in CDs & Vinyl.
  assert.deepEqual(
    { ...points[1], observed_at: undefined, price: undefined },
    {
      observed_at: undefined,
      price: undefined,
      in_stock: true,
      rating: 4.3,
      reviews_count: 33,
      bestsellers_rank: [{ rank: 2, category: "CDs & Vinyl" }],
    },
  );
  const other = await rig.call("/v1/products/history?asin=B000000001&marketplace=DE");
  assert.equal(other.status, 200);
  assert.deepEqual(other.body.points, []);
});

Deno.test("history: a page cannot write into another product's history, nor store what the answer cannot carry", async () => {
  const history = recorded();
  await using rig = await startRig({ wrap: history.wrap });
  const page = await fixture(PAGE);
  rig.fake.page(DP, PAGE);
  await history.fetched(rig);
  // Another ASIN's page that names B07H57DNVV (served at /dp/B0ATTACK01) records nothing under it.
  rig.fake.page("https://www.amazon.com/dp/B0ATTACK01", { html: page.replace("$11.88", "$1.00") });
  await rig.call("/v1/products/details?asin=B0ATTACK01");
  await history.settled();
  // A count no answer can carry (beyond a safe integer) is not stored either.
  rig.fake.page(DP, {
    html: page.replaceAll("33 customer reviews", "100000000000000000000 customer reviews"),
  });
  await rig.call("/v1/products/details?asin=B07H57DNVV");
  await history.settled();
  const r = await rig.call("/v1/products/history?asin=B07H57DNVV");
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const points = r.body.points as { price: { amount: number }; reviews_count: number }[];
  assert.deepEqual(points.map((p) => [p.price.amount, p.reviews_count]), [[11.88, 33]]);
  const attack = await rig.call("/v1/products/history?asin=B0ATTACK01");
  assert.deepEqual(attack.body.points, [], "nor under the ASIN asked for, which the page was not");
});

Deno.test("HISTORY=off: nothing recorded, the endpoint answers an uncharged 404", async () => {
  let history: HistorySource | undefined;
  let store: Deno.Kv | undefined;
  await using rig = await startRig({
    wrap: (source, kv) => {
      store = kv;
      return (history = new HistorySource(source, kv, systemClock, { enabled: false }));
    },
  });
  rig.fake.page(DP, PAGE);
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV")).status, 200);
  await history!.settled();
  const r = await rig.call("/v1/products/history?asin=B07H57DNVV");
  assert.equal(r.status, 404, JSON.stringify(r.body));
  assert.equal((r.body.error as { code: string }).code, "not_found");
  assert.equal(r.headers.get("x-credits-cost"), "0");
  const kept = await Array.fromAsync(store!.list({ prefix: ["history"] }));
  assert.equal(kept.length, 0);
});

Deno.test("history keeps the newest 1,000 observations of a product", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(kvPath);
  try {
    // The details answer the upstream source gives (its envelope), as the route checks it.
    const body = await detailsAnswer();
    let n = 0;
    const history = new HistorySource(
      { fetch: () => Promise.resolve({ ...body, price: { ...body.price!, amount: ++n } }) },
      kv,
      systemClock,
    );
    const call = DETAILS_CALL;
    for (let i = 0; i < HISTORY_POINTS + 100; i++) {
      await history.fetch(call);
      await history.settled();
    }
    const kept = await Array.fromAsync(kv.list({ prefix: KV.historyOf("US", "B07H57DNVV") }));
    assert.equal(kept.length, HISTORY_POINTS);
    const answer = await history.fetch({
      ...call,
      endpoint: DATA_ENDPOINTS.find((e) => e.name === "history")!,
    }) as { points: { price: { amount: number } }[] };
    assert.equal(answer.points.length, HISTORY_POINTS);
    assert.equal(answer.points[0].price.amount, HISTORY_POINTS + 100, "newest first");
    assert.equal(answer.points.at(-1)!.price.amount, 101, "the oldest kept");
  } finally {
    kv.close();
    await removeKvFiles(kvPath);
  }
});

Deno.test("history: a call for a postcode records nothing, since a point carries no postcode", async () => {
  const history = recorded();
  await using rig = await startRig({ wrap: history.wrap });
  rig.fake.page(DP, PAGE);
  await history.fetched(rig, "&zip=10001");
  assert.deepEqual((await rig.call("/v1/products/history?asin=B07H57DNVV")).body.points, []);
  await history.fetched(rig);
  const points = (await rig.call("/v1/products/history?asin=B07H57DNVV")).body.points as unknown[];
  assert.equal(points.length, 1, "the call without a postcode is recorded");
});

Deno.test("history: a page that shows nothing of its stock records in_stock as null, not false", async () => {
  const history = recorded();
  await using rig = await startRig({ wrap: history.wrap });
  // amazon.es (metascraper's fixture) shows no stock; a copy with its own "En stock" put in the
  // availability box shows it.
  const ES = "https://www.amazon.es/dp/B01MUGXRT9";
  const page = await fixture("product/amazon.es__metascraper-B01MUGXRT9.html");
  const open = '<div id="availability" class="a-section a-spacing-base a-spacing-top-micro }">';
  rig.fake.page(ES, { html: page.replace(open, open + "<span>En stock</span>") });
  const shown = await rig.call("/v1/products/details?asin=B01MUGXRT9&marketplace=ES");
  assert.equal(shown.body.in_stock, true);
  await history.settled();
  rig.fake.page(ES, "product/amazon.es__metascraper-B01MUGXRT9.html");
  const unread = await rig.call("/v1/products/details?asin=B01MUGXRT9&marketplace=ES");
  assert.ok((unread.body.missing as string[]).includes("in_stock"));
  await history.settled();

  const r = await rig.call("/v1/products/history?asin=B01MUGXRT9&marketplace=ES");
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const schema = DATA_ENDPOINTS.find((e) => e.name === "history")!.response;
  assert.ok(schema.safeParse(r.body).success);
  const points = r.body.points as { in_stock: boolean | null }[];
  assert.deepEqual(points.map((p) => p.in_stock), [null, true], "newest first");
});

Deno.test("history records no answer the route refuses, and one reading for calls sharing one fetch (probe EJ)", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(kvPath);
  try {
    const good = await detailsAnswer();
    let answer: unknown = good;
    const history = new HistorySource({ fetch: () => Promise.resolve(answer) }, kv, systemClock);
    const call = DETAILS_CALL;
    const points = async () =>
      (await Array.fromAsync(kv.list({ prefix: KV.historyOf("US", "B07H57DNVV") }))).length;
    // Four callers of one shared fetch get the same answer at once: one reading.
    await Promise.all([1, 2, 3, 4].map(() => history.fetch(call)));
    await history.settled();
    assert.equal(await points(), 1);
    // An answer past the size of any real page's, which the route refuses as an uncharged 502.
    answer = {
      ...good,
      price: { ...good.price!, amount: 6.66 },
      feature_bullets: ['"'.repeat(5_000_000)],
    };
    await history.fetch(call);
    // One its schema refuses.
    answer = { ...good, price: { ...good.price!, amount: 7.77 }, title: 42 };
    await history.fetch(call);
    await history.settled();
    assert.equal(await points(), 1);
  } finally {
    kv.close();
    await removeKvFiles(kvPath);
  }
});

Deno.test("a reading whose history write failed does not drop the next identical one (probe EK)", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const real = await Deno.openKv(kvPath);
  try {
    let failNext = false;
    // The store refusing one write, as a held lock does.
    const kv = replacing(real, "set", (t) => (...a: Parameters<Deno.Kv["set"]>) => {
      if (!failNext) return t.set(...a);
      failNext = false;
      return Promise.reject(new Error("database is locked"));
    });
    const good = await detailsAnswer();
    let amount = 10;
    const history = new HistorySource(
      { fetch: () => Promise.resolve({ ...good, price: { ...good.price!, amount } }) },
      kv,
      systemClock,
    );
    const call = DETAILS_CALL;
    await history.fetch(call);
    await history.settled();
    amount = 12;
    failNext = true;
    await history.fetch(call);
    await history.settled();
    await history.fetch(call); // the same reading, now written
    await history.settled();
    // Calls sharing one fetch, the first one's write failing: one other's is written (probes EL, EN).
    amount = 14;
    failNext = true;
    await Promise.all([1, 2, 3, 4].map(() => history.fetch(call)));
    await history.settled();
    const points = await Array.fromAsync(real.list<{ price: { amount: number } }>({
      prefix: KV.historyOf("US", "B07H57DNVV"),
    }));
    assert.deepEqual(points.map((p) => p.value.price.amount), [10, 12, 14]);
  } finally {
    real.close();
    await removeKvFiles(kvPath);
  }
});

Deno.test("history: identical readings an hour apart are two points, not one", async () => {
  // The same values seen again later are an observation of their own (a steady price is history
  // too); only calls within seconds of each other (one shared fetch) are one reading.
  let now = Date.parse("2025-03-01T12:00:00Z");
  const clock = { now: () => now };
  let history: HistorySource | undefined;
  await using rig = await startRig({
    wrap: (source, kv) => (history = new HistorySource(source, kv, clock)),
  });
  rig.fake.page(DP, PAGE);
  const first = await rig.call("/v1/products/details?asin=B07H57DNVV");
  assert.equal(first.status, 200);
  await history!.settled();
  now += 60 * 60_000;
  const second = await rig.call("/v1/products/details?asin=B07H57DNVV");
  assert.equal(second.status, 200);
  assert.deepEqual(second.body.price, first.body.price, "the same reading");
  await history!.settled();
  const r = await rig.call("/v1/products/history?asin=B07H57DNVV");
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const points = r.body.points as { observed_at: string; price: unknown }[];
  assert.deepEqual(points.map((p) => p.observed_at), [
    "2025-03-01T13:00:00.000Z",
    "2025-03-01T12:00:00.000Z",
  ]);
  assert.deepEqual(points[0].price, points[1].price);
});

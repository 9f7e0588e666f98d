import assert from "node:assert/strict";

import { fieldCounts, ParserHealth } from "../core/parser_health.ts";
import { Metrics } from "../core/metrics.ts";
import { readPage } from "../upstream/page_read.ts";
import { fixtureBytes } from "./fixture.ts";

const HOUR = 3_600_000;

Deno.test("fieldCounts() counts top-level fields and each list item's fields, empty as `missing` counts it", () => {
  const c = fieldCounts({
    title: "A",
    price: null,
    rating: 0, // what parsers answer for a rating they could not read (probe BM)
    in_stock: false,
    list_price: { amount: 0, display: "" },
    results: [{ price: 1, image: "" }, { price: null, image: "x" }],
  });
  assert.deepEqual(c.get("title"), [1, 0]);
  assert.deepEqual(c.get("price"), [0, 1]);
  assert.deepEqual(c.get("rating"), [0, 1]);
  assert.deepEqual(c.get("in_stock"), [1, 0]);
  assert.deepEqual(c.get("list_price"), [0, 1]);
  assert.deepEqual(c.get("results"), [1, 0]);
  assert.deepEqual(c.get("results[].price"), [1, 1]);
  assert.deepEqual(c.get("results[].image"), [1, 1]);
});

Deno.test("ParserHealth flags a field whose fill rate fell below half of the day before, not one that held", () => {
  const h = new ParserHealth();
  const now = 100 * 24 * HOUR;
  for (let i = 0; i < 40; i++) {
    // the day before: price always filled, title always filled
    h.add("product", "US", fieldCounts({ price: 9.99, title: "t" }), now - 30 * HOUR);
    // the last day: price filled 1 in 4 (a fall below half), title still filled
    h.add(
      "product",
      "US",
      fieldCounts({ price: i % 4 === 0 ? 9.99 : null, title: "t" }),
      now - 2 * HOUR,
    );
  }
  const [report] = h.report(now);
  assert.deepEqual([report.page_type, report.marketplace], ["product", "US"]);
  const price = report.fields.find((f) => f.field === "price")!;
  const title = report.fields.find((f) => f.field === "title")!;
  assert.deepEqual(price.previous_day, { filled: 40, total: 40, rate: 1 });
  assert.deepEqual(price.last_day, { filled: 10, total: 40, rate: 0.25 });
  assert.deepEqual(price.last_hour, null);
  assert(price.falling);
  assert(!title.falling);
});

Deno.test("ParserHealth decides nothing on too few parses, and a fall to exactly half is not flagged", () => {
  const h = new ParserHealth();
  const now = 100 * 24 * HOUR;
  for (let i = 0; i < 40; i++) {
    h.add("search", "DE", fieldCounts({ price: 1 }), now - 30 * HOUR);
    h.add("search", "DE", fieldCounts({ price: i % 2 ? 1 : null }), now - 1 * HOUR);
  }
  h.add("search", "FR", fieldCounts({ price: 1 }), now - 30 * HOUR);
  h.add("search", "FR", fieldCounts({ price: null }), now - 1 * HOUR);
  const byMp = new Map(h.report(now).map((r) => [r.marketplace, r]));
  assert(!byMp.get("DE")!.fields[0].falling, "exactly half is not below half");
  assert(!byMp.get("FR")!.fields[0].falling, "one parse a day decides nothing");
});

Deno.test("Metrics renders the INTERFACE.md names in Prometheus text format", async () => {
  const m = new Metrics();
  m.httpRequests.inc({ route: "/v1/products/details", status: "200" });
  m.httpDuration.observe({ route: "/v1/products/details" }, 0.12);
  m.creditsCharged.inc(2);
  m.upstreamRequests.inc({ marketplace: "US", outcome: "ok" });
  m.recordParse("product", "US", fieldCounts({ title: "x", price: null }));
  const text = await m.render();
  assert(m.contentType.startsWith("text/plain; version=0.0.4"));
  assert(text.includes('shelf_http_requests_total{route="/v1/products/details",status="200"} 1'));
  assert(text.includes("shelf_http_request_duration_seconds_bucket"));
  assert(text.includes("shelf_credits_charged_total 2"));
  assert(text.includes('shelf_upstream_requests_total{marketplace="US",outcome="ok"} 1'));
  assert(
    text.includes(
      'shelf_parse_fields_total{page_type="product",marketplace="US",field="title",filled="true"} 1',
    ),
  );
  assert(
    text.includes(
      'shelf_parse_fields_total{page_type="product",marketplace="US",field="price",filled="false"} 1',
    ),
  );
});

Deno.test("parser health counts the answer's fields, not a reading's flags", async () => {
  // amazon.es (metascraper's fixture) shows nothing of its stock, so its reading carries the
  // stock_unread flag, which is no field of the answer.
  const read = readPage({
    parser: "product",
    url: "https://www.amazon.es/dp/B01MUGXRT9",
    marketplace: "ES",
    status: 200,
    contentType: "text/html",
    wantLocation: false,
  }, await fixtureBytes("product/amazon.es__metascraper-B01MUGXRT9.html"));
  const parsed = read.parsed;
  if (!parsed?.ok) throw new Error(`not read: ${JSON.stringify(parsed)}`);
  assert.equal((parsed.value as Record<string, unknown>).stock_unread, true);
  assert.deepEqual(parsed.fields.get("in_stock"), [0, 1], "empty, as `missing` lists it");
  assert(parsed.fields.has("title"));
  assert(!parsed.fields.has("stock_unread"), [...parsed.fields.keys()].join(", "));
  // amazon.ca (2019) says "No customer reviews": its 0 is read off the page, so filled.
  const none = readPage({
    parser: "product",
    url: "https://www.amazon.ca/dp/B01GAWQSFW",
    marketplace: "CA",
    status: 200,
    contentType: "text/html",
    wantLocation: false,
  }, await fixtureBytes("product/amazon.ca__app-B01GAWQSFW.html")).parsed;
  if (!none?.ok) throw new Error(`not read: ${JSON.stringify(none)}`);
  assert.deepEqual(none.fields.get("reviews_count"), [1, 0]);
  assert(!none.fields.has("no_reviews_stated"));
});

Deno.test("ParserHealth flags a fall at exactly MIN_SAMPLES (20) parses in each day, not at 19", () => {
  const report = (n: number) => {
    const h = new ParserHealth();
    const now = 100 * 24 * HOUR;
    for (let i = 0; i < n; i++) h.add("offers", "IT", fieldCounts({ price: 1 }), now - 30 * HOUR);
    for (let i = 0; i < n; i++) h.add("offers", "IT", fieldCounts({ price: null }), now - HOUR);
    return h.report(now)[0].fields.find((f) => f.field === "price")!;
  };
  const at = report(20);
  assert.deepEqual([at.previous_day?.total, at.last_day?.total], [20, 20]);
  assert(at.falling, "20 parses a day decide");
  assert(!report(19).falling, "19 parses a day decide nothing");
});

Deno.test("ParserHealth puts a bucket exactly 24 h old in the previous day only, and one 48 h old in neither day", () => {
  const h = new ParserHealth();
  const at = 200 * 24 * HOUR + 10 * 60_000;
  h.add("product", "US", fieldCounts({ title: "t" }), at);
  const field = (now: number) => h.report(now)[0].fields.find((f) => f.field === "title")!;
  const day = field(at + 24 * HOUR);
  assert.equal(day.last_day, null);
  assert.deepEqual(day.previous_day, { filled: 1, total: 1, rate: 1 });
  const twoDays = field(at + 48 * HOUR);
  assert.equal(twoDays.last_day, null);
  assert.equal(twoDays.previous_day, null);
});

Deno.test("fieldCounts() walks only the list fields' items, and only items that are objects", () => {
  const c = fieldCounts({
    images: [{ url: "a" }, { url: "" }],
    results: [[1, 2], { price: 3 }, null, "x"],
  });
  assert.deepEqual([...c.keys()].sort(), ["images", "results", "results[].price"]);
  assert.deepEqual(c.get("images"), [1, 0]);
  assert.deepEqual(c.get("results[].price"), [1, 0]);
});

Deno.test("ParserHealth rates keep three decimals", () => {
  const h = new ParserHealth();
  const now = 300 * 24 * HOUR;
  for (let i = 0; i < 3; i++) {
    h.add("search", "DE", fieldCounts({ price: i === 0 ? 1 : null }), now);
  }
  const price = h.report(now)[0].fields.find((f) => f.field === "price")!;
  assert.deepEqual(price.last_hour, { filled: 1, total: 3, rate: 0.333 });
  assert.deepEqual(price.last_day, { filled: 1, total: 3, rate: 0.333 });
});

Deno.test("ParserHealth does not flag a fall against a day before of fewer than 20 parses", () => {
  const h = new ParserHealth();
  const now = 400 * 24 * HOUR;
  for (let i = 0; i < 19; i++) {
    h.add("product", "US", fieldCounts({ price: 9.99 }), now - 30 * HOUR);
  }
  for (let i = 0; i < 40; i++) {
    h.add("product", "US", fieldCounts({ price: null }), now - 2 * HOUR);
  }
  const few = h.report(now)[0].fields.find((f) => f.field === "price")!;
  assert.equal(few.previous_day?.total, 19);
  assert.equal(few.last_day?.total, 40);
  assert.equal(few.falling, false);
});

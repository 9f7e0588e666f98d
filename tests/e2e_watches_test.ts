/**
 * Watches (INTERFACE.md "Beyond the spec") over real HTTP: the loopback fake marketplace serves a
 * real product page and changes its price between two refreshes; a real webhook receiver on
 * loopback checks every event's Shelf-Signature with Web Crypto (not the code under test).
 * Refreshes are charged as details calls, a watch pauses without credits, a failing receiver is
 * retried, and two instances over one KV file refresh each due watch once.
 */
import assert from "node:assert/strict";
import { FAST_WATCHES, startRig } from "./upstream_harness.ts";
import { ControlledSource, startServer } from "./test_server.ts";
import { fixture } from "./fixture.ts";
import { parseProduct } from "../parsers/product.ts";
import { withTinyPlan } from "./tiny_plan.ts";
import type { DataRequest } from "../upstream/data_source.ts";
import { WatchCreated, WatchList } from "../schemas/watches.ts";
import { browser } from "./dashboard_client.ts";
import { receiver, until, verify } from "./webhook_receiver.ts";
import { removeKvFiles } from "../core/kv_files.ts";

const DP = "https://www.amazon.com/dp/B07H57DNVV";
const PAGE = "product/amazon.com__app-B07H57DNVV.html";

function send(url: string, key: string, method: string, body?: unknown) {
  return fetch(url, {
    method,
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Watch `id` as GET /v1/watches lists it to `key`. */
/** POSTs a watch of B07H57DNVV to `base` with `key`, sending to `hook`. */
function postWatch(base: string, key: string, hook: string, every_seconds: number, on: string[]) {
  return send(`${base}/v1/watches`, key, "POST", {
    asin: "B07H57DNVV",
    every_seconds,
    webhook_url: hook,
    on,
  });
}

/** A watch refreshing every second, once it has refreshed; the account's usage then. */
async function firstRefresh(rig: Awaited<ReturnType<typeof startRig>>, hook: string, on: string[]) {
  const base = rig.server.url;
  const created = await postWatch(base, rig.key, hook, 1, on);
  const watch = WatchCreated.parse(await created.json());
  const listed = () => listedWatch(base, rig.key, watch.id);
  const first = await until("the first refresh", async () => {
    const w = await listed();
    return w.refreshes >= 1 ? w : undefined;
  });
  const used = (await rig.call("/v1/usage")).body.requests_used as number;
  return { listed, first, used };
}

async function listedWatch(base: string, key: string, id: string) {
  return WatchList.parse(await (await send(`${base}/v1/watches`, key, "GET")).json()).watches
    .find((w) => w.id === id)!;
}

Deno.test("watches: a price change between two refreshes POSTs one signed event; refreshes are charged", async () => {
  await using rig = await startRig({ watches: FAST_WATCHES, plan: "scale" });
  await using hook = receiver();
  const page = await fixture(PAGE);
  rig.fake.page(DP, PAGE);
  const base = rig.server.url;
  const creditsMetric = async () =>
    (await rig.server.deps.metrics.creditsCharged.get()).values[0]?.value ?? 0;
  const metricBefore = await creditsMetric();

  const created = await send(`${base}/v1/watches`, rig.key, "POST", {
    asin: "b07h57dnvv",
    every_seconds: 1,
    webhook_url: hook.url,
    on: ["price", "in_stock"],
  });
  assert.equal(created.status, 201);
  const watch = WatchCreated.parse(await created.json());
  assert.equal(watch.asin, "B07H57DNVV");
  assert.equal(watch.marketplace, "US");
  assert.match(watch.secret, /^whsec_[0-9a-f]{64}$/);

  // The first refresh records the values; nothing is sent for it.
  const listed = () => listedWatch(base, rig.key, watch.id);
  const first = await until("the first refresh", async () => {
    const w = await listed();
    return w.refreshes >= 1 ? w : undefined;
  });
  assert.deepEqual(first.last?.price, { amount: 11.88, display: "$11.88", currency: "USD" });
  assert.equal(hook.got.length, 0);

  rig.fake.page(DP, { html: page.replaceAll("$11.88", "$10.50") });
  const event = await until("the event", () => Promise.resolve(hook.got[0]));
  assert.ok(await verify(watch.secret, event.signature, event.body), event.signature);
  assert.equal(await verify("whsec_wrong", event.signature, event.body), false);
  const body = JSON.parse(event.body);
  assert.equal(body.watch_id, watch.id);
  assert.equal(body.asin, "B07H57DNVV");
  assert.equal(body.marketplace, "US");
  assert.deepEqual(body.changed, ["price"]);
  assert.equal(body.before.price.amount, 11.88);
  assert.equal(body.after.price.amount, 10.5);
  assert.equal(body.after.in_stock, body.before.in_stock);

  // More refreshes of an unchanged page send nothing more.
  const refreshed = (await listed()).refreshes;
  await until("two more refreshes", async () => {
    const w = await listed();
    return w.refreshes >= refreshed + 2 ? w : undefined;
  });
  assert.equal(hook.got.length, 1);

  // Stop refreshing, then count: every refresh was a details call charged one credit.
  const gone = await send(`${base}/v1/watches/${watch.id}`, rig.key, "DELETE");
  assert.deepEqual(await gone.json(), { id: watch.id, deleted: true });
  await new Promise((r) => setTimeout(r, 300)); // a refresh under way may still land
  const fetched = rig.fake.pageRequests("/dp/B07H57DNVV");
  const usage = await rig.call("/v1/usage");
  assert.equal(usage.body.requests_used, fetched);
  assert.ok(fetched >= 4, `${fetched} refreshes`);
  // /metrics counts the refreshes' credits as the usage figures do (probe FR).
  assert.equal(await creditsMetric() - metricBefore, fetched);
  await new Promise((r) => setTimeout(r, 1_500));
  assert.equal(rig.fake.pageRequests("/dp/B07H57DNVV"), fetched, "a deleted watch refreshed");
});

Deno.test("watches: a failing receiver is retried with back-off until it answers 2xx, attempts listed", async () => {
  await using rig = await startRig({ watches: FAST_WATCHES, plan: "scale" });
  await using hook = receiver((n) => (n <= 2 ? 500 : 204));
  await using stockHook = receiver();
  const page = await fixture(PAGE);
  rig.fake.page(DP, PAGE);
  const base = rig.server.url;
  // An owner who signs in to the dashboard, to read the attempts there too.
  const b = browser(base);
  const form = await b.send("/dashboard/signup");
  const email = "hooks@example.com", password = "correct horse battery";
  await b.send("/dashboard/signup", { form: { _csrf: form.csrf, email, password } });
  const owner = (await rig.server.accounts.idByEmail(email))!;
  await rig.server.accounts.update(owner, { plan: "scale" });
  const key = (await rig.server.accounts.createKey(owner)).value;
  // A second watch of the same product that does not watch the price: it must hear nothing.
  const other = await postWatch(base, key, stockHook.url, 1, ["in_stock", "rank"]);
  assert.equal(other.status, 201);
  const otherId = (await other.json()).id;
  const created = WatchCreated.parse(
    await (await postWatch(base, key, hook.url, 1, ["price"])).json(),
  );
  const listed = () => listedWatch(base, key, created.id);
  await until("the first refresh", async () => ((await listed()).refreshes >= 1 ? 1 : undefined));
  rig.fake.page(DP, { html: page.replaceAll("$11.88", "$9.99") });
  const w = await until("a delivered attempt", async () => {
    const w = await listed();
    return w.deliveries.some((d) => d.delivered) ? w : undefined;
  });
  assert.equal(hook.got.length, 3);
  assert.equal(stockHook.got.length, 0, "a watch not on the price heard of its change");
  // The same event each time, each attempt signed anew.
  assert.equal(new Set(hook.got.map((g) => g.body)).size, 1);
  for (const g of hook.got) assert.ok(await verify(created.secret, g.signature, g.body));
  // Waits double: 100 ms after the first failure, 200 ms after the second (lower bounds).
  assert.ok(hook.got[1].at - hook.got[0].at >= 90, `${hook.got[1].at - hook.got[0].at} ms`);
  assert.ok(hook.got[2].at - hook.got[1].at >= 190, `${hook.got[2].at - hook.got[1].at} ms`);
  assert.deepEqual(
    w.deliveries.map((d) => [d.attempt, d.result, d.delivered]),
    [[3, "delivered (HTTP 204)", true], [2, "HTTP 500", false], [1, "HTTP 500", false]],
  );
  // The dashboard lists the same attempts under the watch, with the webhook's host only.
  const dash = await b.send("/dashboard/watches");
  assert.equal(dash.status, 200);
  const card = new RegExp(`<div class="card" id="${created.id}">[\\s\\S]*?</table>`).exec(
    dash.text,
  )?.[0] ?? "";
  const rows = [...card.matchAll(/<tr class="(delivered|failed)">[\s\S]*?<\/tr>/g)]
    .map((m) => [m[1], /data-label="Result">([^<]*)</.exec(m[0])?.[1]]);
  assert.deepEqual(rows, [
    ["delivered", "delivered (HTTP 204)"],
    ["failed", "HTTP 500"],
    ["failed", "HTTP 500"],
  ]);
  assert.ok(card.includes(new URL(hook.url).host));
  assert.equal(dash.text.includes("token=abc"), false, "the webhook's query is not shown");
  await send(`${base}/v1/watches/${created.id}`, key, "DELETE");
  await send(`${base}/v1/watches/${otherId}`, key, "DELETE");
});

Deno.test("watches: a watch pauses when the account's credits run out, and costs nothing then", async () => {
  const plans = withTinyPlan(1_000);
  await using rig = await startRig({ watches: FAST_WATCHES, plans, plan: "tiny" });
  await using hook = receiver();
  rig.fake.page(DP, PAGE);
  const base = rig.server.url;
  const r = await postWatch(base, rig.key, hook.url, 1, ["rank"]);
  assert.equal(r.status, 201);
  const w = await until("the pause", async () => {
    const list = WatchList.parse(await (await send(`${base}/v1/watches`, rig.key, "GET")).json());
    return list.watches[0].status === "paused" ? list.watches[0] : undefined;
  });
  assert.equal(w.paused_reason, "no credits left in this period");
  assert.equal(w.refreshes, 2);
  await new Promise((r) => setTimeout(r, 1_300)); // at least one more due time passes
  assert.equal(rig.fake.pageRequests("/dp/B07H57DNVV"), 2);
  const usage = await rig.call("/v1/usage");
  assert.equal(usage.body.requests_used, 2);
  assert.equal(usage.body.requests_remaining, 0);
});

/** Answers details with a real parsed page and notes when each call came. */
class DetailsSource extends ControlledSource {
  readonly at: number[] = [];
  constructor(readonly page: unknown) {
    super();
  }
  override fetch(req: DataRequest): Promise<unknown> {
    if (req.endpoint.name !== "details") return super.fetch(req);
    this.at.push(Date.now());
    return Promise.resolve(this.page);
  }
}

Deno.test("watches: two instances over one KV file refresh each due watch once", async () => {
  const page = { ...parseProduct(await fixture(PAGE), { marketplace: "US" }), missing: [] };
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const a = new DetailsSource(page), b = new DetailsSource(page);
  // Both instances poll every 20 ms, so both see every due time.
  const watches = { ...FAST_WATCHES, scheduler: { pollMs: 20 } };
  await using one = await startServer({ kvPath, source: a, watches });
  await using two = await startServer({ kvPath, source: b, watches });
  await using hook = receiver();
  const { key } = await one.account("growth");
  const r = await postWatch(two.url, key, hook.url, 1, ["price"]);
  assert.equal(r.status, 201);
  const started = Date.now();
  await new Promise((r) => setTimeout(r, 3_500));
  const id = (await r.json()).id;
  await send(`${one.url}/v1/watches/${id}`, key, "DELETE");
  const elapsed = (Date.now() - started) / 1000;
  const calls = [...a.at, ...b.at].sort((x, y) => x - y);
  assert.ok(calls.length >= 3, `${calls.length} refreshes`);
  assert.ok(calls.length <= Math.floor(elapsed) + 1, `${calls.length} refreshes in ${elapsed} s`);
  for (let i = 1; i < calls.length; i++) {
    assert.ok(calls[i] - calls[i - 1] >= 900, `two refreshes ${calls[i] - calls[i - 1]} ms apart`);
  }
  const usage = await (await one.get("/v1/usage", key)).json();
  assert.equal(usage.requests_used, calls.length);
  await removeKvFiles(kvPath);
});

Deno.test("watches: a page that shows nothing of its stock sends no in_stock event; a stated change does", async () => {
  await using rig = await startRig({ watches: FAST_WATCHES, plan: "scale" });
  await using hook = receiver();
  // amazon.es (metascraper's fixture) shows nothing of its stock; copies with a line in its
  // availability box show it in stock ("En stock", the page's own words) or not.
  const ES = "https://www.amazon.es/dp/B01MUGXRT9";
  const UNREAD = "product/amazon.es__metascraper-B01MUGXRT9.html";
  const page = await fixture(UNREAD);
  const open = '<div id="availability" class="a-section a-spacing-base a-spacing-top-micro }">';
  const withLine = (line: string) => ({ html: page.replace(open, open + `<span>${line}</span>`) });
  rig.fake.page(ES, UNREAD);
  const base = rig.server.url;
  const created = await send(`${base}/v1/watches`, rig.key, "POST", {
    asin: "B01MUGXRT9",
    marketplace: "ES",
    every_seconds: 1,
    webhook_url: hook.url,
    on: ["in_stock"],
  });
  assert.equal(created.status, 201);
  const watch = WatchCreated.parse(await created.json());
  const refreshes = () => listedWatch(base, rig.key, watch.id);
  const more = async (n: number) => {
    const from = (await refreshes()).refreshes;
    return await until(`${n} more refreshes`, async () => {
      const w = await refreshes();
      return w.refreshes >= from + n ? w : undefined;
    });
  };
  // Nothing read yet: null, not a false that a later page would seem to change.
  assert.equal((await more(1)).last?.in_stock, null);
  rig.fake.page(ES, withLine("En stock"));
  assert.equal((await more(2)).last?.in_stock, true);
  assert.equal(hook.got.length, 0, "stock first read is no change");

  // The page without its line again: in_stock is only a default there, so nothing changed.
  rig.fake.page(ES, UNREAD);
  assert.equal((await more(2)).last?.in_stock, true, "kept as last read");
  assert.equal(hook.got.length, 0, "no event for a page that shows no stock");

  // A page that says it is unavailable: one event, true to false.
  rig.fake.page(ES, withLine("No disponible."));
  const event = await until("the event", () => Promise.resolve(hook.got[0]));
  const body = JSON.parse(event.body);
  assert.deepEqual(body.changed, ["in_stock"]);
  assert.equal(body.before.in_stock, true);
  assert.equal(body.after.in_stock, false);
  await send(`${base}/v1/watches/${watch.id}`, rig.key, "DELETE");
});

Deno.test("watches: a product page that shows another ASIN is no refresh: refunded, noted, nothing sent or recorded", async () => {
  await using rig = await startRig({ watches: FAST_WATCHES, plan: "scale" });
  await using hook = receiver();
  rig.fake.page(DP, PAGE);
  const { listed, first, used } = await firstRefresh(rig, hook.url, ["price", "in_stock", "rank"]);
  // A merged listing: the watched product's address now shows another product (probe DV: a
  // signed, charged event gave the watched ASIN the other product's price and ranks).
  rig.fake.page(
    "https://www.amazon.com/dp/B0057OC5O8",
    "product/amazon.com__metascraper-B0057OC5O8.html",
  );
  rig.fake.redirect(DP, "https://www.amazon.com/dp/B0057OC5O8");
  const noted = await until("a refresh of the other page", async () => {
    const w = await listed();
    return w.last_error ? w : undefined;
  });
  assert.match(noted.last_error!, /another product at ASIN B07H57DNVV/);
  // Refunded, the note does not give away what a details call pays for (probe FQ).
  assert.doesNotMatch(noted.last_error!, /B0057OC5O8/);
  assert.equal(noted.refreshes, first.refreshes);
  assert.deepEqual(noted.last, first.last, "the watched values are kept");
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(hook.got.length, 0, "no event");
  assert.equal((await rig.call("/v1/usage")).body.requests_used, used, "refunded");
});

Deno.test("watches: a page whose answer is larger than any real page's is no refresh: refunded, noted, nothing sent (probe EJ)", async () => {
  await using rig = await startRig({ watches: FAST_WATCHES, plan: "scale" });
  await using hook = receiver();
  const html = await fixture(PAGE);
  rig.fake.page(DP, { html });
  const { listed, first, used } = await firstRefresh(rig, hook.url, ["price"]);
  // A 6 MB page whose one bullet of quotes doubles in JSON: a client's call is refused it,
  // uncharged; the refresh kept its charge and sent the page's price (probe EJ).
  const bullet = `<div id="feature-bullets"><ul><li>${'"'.repeat(5_500_000)}</li></ul></div>`;
  rig.fake.page(DP, {
    html: html.replace(/<body[^>]*>/, (m) => m + bullet).replaceAll("$11.88", "$6.66"),
  });
  const client = await rig.call("/v1/products/details?asin=B07H57DNVV");
  assert.equal(client.status, 502, JSON.stringify(client.body).slice(0, 200));
  const noted = await until("a refresh of the large page", async () => {
    const w = await listed();
    return w.last_error ? w : undefined;
  });
  assert.match(noted.last_error!, /far larger than any real page/);
  assert.deepEqual(noted.last, first.last, "the watched values are kept");
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(hook.got.length, 0, "no event");
  assert.equal((await rig.call("/v1/usage")).body.requests_used, used, "refunded");
});

/** Details refreshes that wait until the server stops, then fail as an aborted fetch does. */
class HangingSource extends ControlledSource {
  started = 0;
  override fetch(req: DataRequest): Promise<unknown> {
    if (req.endpoint.name !== "details") return super.fetch(req);
    this.started++;
    const signal = req.signal!;
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((_, reject) =>
      signal.addEventListener("abort", () => reject(signal.reason), { once: true })
    );
  }
}

Deno.test("watches: a refresh cut by a stop is refunded and due again at once, not an interval later (probe EJ)", async () => {
  const stop = new AbortController();
  const source = new HangingSource();
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  // Declared before the servers, so removed after both have closed it (it was left in the
  // temporary folder by every run).
  await using _files = { [Symbol.asyncDispose]: () => removeKvFiles(kvPath) };
  await using s = await startServer({
    kvPath,
    source,
    watches: FAST_WATCHES,
    stopping: stop.signal,
  });
  await using hook = receiver();
  const { key } = await s.account("growth");
  const r = await postWatch(s.url, key, hook.url, 3_600, ["price"]);
  assert.equal(r.status, 201);
  const id = (await r.json()).id;
  await until("the first refresh to start", () => Promise.resolve(source.started > 0 || undefined));
  // As main.ts stops: the loop first, then the refreshes under way at the drain's end.
  const stopped = s.deps.watches.stop();
  stop.abort(new Error("the drain ended"));
  await stopped;
  // Read as the next process reads it: this one is stopping.
  await using next = await startServer({ kvPath, watches: { ...FAST_WATCHES, run: false } });
  const w = await until("the refresh to end", async () => {
    const got = await listedWatch(next.url, key, id);
    return got.last_error ? got : undefined;
  });
  assert.match(w.last_error!, /interrupted: the server stopped/);
  assert.ok(Date.parse(w.next_refresh_at) - Date.now() < 60_000, w.next_refresh_at);
  assert.equal((await (await next.get("/v1/usage", key)).json()).requests_used, 0, "refunded");
});

Deno.test("watches: once the stop is signalled, no refresh is claimed again, even with the loop still running (probe EK)", async () => {
  const stop = new AbortController();
  const source = new HangingSource();
  await using s = await startServer({ source, watches: FAST_WATCHES, stopping: stop.signal });
  await using hook = receiver();
  const { key } = await s.account("growth");
  assert.equal((await postWatch(s.url, key, hook.url, 3_600, ["price"])).status, 201);
  await until("the first refresh to start", () => Promise.resolve(source.started > 0 || undefined));
  // The loop is not stopped first, as main.ts does: the refresh is cut and due again at once.
  stop.abort(new Error("the drain ended"));
  await new Promise((r) => setTimeout(r, 1_000));
  assert.equal(source.started, 1, "claimed again by the stopping process");
  await s.deps.watches.stop();
});

Deno.test("watches: a price whose currency alone changes, and a rank whose category alone changes, each send an event (probe GT S04, S08)", async () => {
  // The README: an event when "the price (amount or currency) … or the ranks differ". The page's
  // details answer is given the currency and the rank's category the test sets.
  const shown = { currency: "USD", category: "Toys & Games" };
  await using rig = await startRig({
    watches: FAST_WATCHES,
    plan: "scale",
    wrap: (source) => ({
      fetch: async (req) => {
        const page = await source.fetch(req) as Record<string, unknown>;
        if (req.endpoint.name !== "details") return page;
        const price = page.price as Record<string, unknown>;
        return {
          ...page,
          price: { ...price, currency: shown.currency },
          bestsellers_rank: [{ rank: 5, category: shown.category }],
        };
      },
    }),
  });
  await using hook = receiver();
  rig.fake.page(DP, PAGE);
  const { first } = await firstRefresh(rig, hook.url, ["price", "rank"]);
  assert.equal(first.last?.price?.currency, "USD");
  assert.deepEqual(first.last?.rank, [{ rank: 5, category: "Toys & Games" }]);

  shown.currency = "CAD"; // 11.88 USD → 11.88 CAD: the same amount
  const currency = JSON.parse(
    (await until("the currency's event", () => Promise.resolve(hook.got[0]))).body,
  );
  assert.deepEqual(currency.changed, ["price"]);
  assert.equal(currency.before.price.amount, currency.after.price.amount);
  assert.deepEqual([currency.before.price.currency, currency.after.price.currency], ["USD", "CAD"]);

  shown.category = "Games"; // #5 in Toys & Games → #5 in Games: the same rank
  const rank = JSON.parse(
    (await until("the rank's event", () => Promise.resolve(hook.got[1]))).body,
  );
  assert.deepEqual(rank.changed, ["rank"]);
  assert.deepEqual(rank.before.rank, [{ rank: 5, category: "Toys & Games" }]);
  assert.deepEqual(rank.after.rank, [{ rank: 5, category: "Games" }]);
});

/**
 * The watches API at its edges: who may see and delete a watch, what a body must hold (422 in the
 * spec's shape, the details endpoint's own rules for asin/marketplace/zip), which webhook targets
 * are refused without WEBHOOK_ALLOW_PRIVATE, the methods each path takes, the per-account limit,
 * and that creating, listing and deleting cost nothing. No loop runs here.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import {
  canonical,
  checkedLookup,
  ownAddresses,
  webhookRefusal,
} from "../watches/webhook_target.ts";
import { isPublicAddress } from "../core/ip_address.ts";
import { routeLabel } from "../routes/access_log.ts";
import { LISTS_PER_SECOND } from "../routes/watches.ts";
import { createWatch, deleteWatch } from "../watches/store.ts";
import { countedKv } from "./counted_kv.ts";
import { hourlyWatch } from "./webhook_receiver.ts";
import { MAX_WATCHES_PER_ACCOUNT, WatchList } from "../schemas/watches.ts";
import { BUILTIN_PLANS, Plans } from "../metering/plans.ts";

/** A plan whose rate window these tests' bursts never reach (one test checks the window itself). */
const plans = new Plans([...BUILTIN_PLANS, {
  id: "bulk",
  credits: 1_000,
  rate_limit_per_sec: 100_000,
  max_keys: 5,
  groups: ["products"],
}]);

/** Names this test's resolver knows; every other name does not resolve. */
const DNS: Record<string, string[]> = {
  "hooks.example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
  "internal.example.com": ["10.1.2.3"],
  "mixed.example.com": ["93.184.216.34", "192.168.1.20"],
  "rebind6.example.com": ["fd00::1"],
};
const watchesOpts = { resolve: (host: string) => Promise.resolve(DNS[host] ?? []) };
const GOOD = {
  asin: "B07H57DNVV",
  every_seconds: 3600,
  webhook_url: "https://hooks.example.com/shelf",
  on: ["price"],
};

function post(url: string, key: string | null, body: unknown, type = "application/json") {
  const headers: Record<string, string> = { "content-type": type };
  if (key) headers["x-api-key"] = key;
  return fetch(`${url}/v1/watches`, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

Deno.test("watches API: an account sees and deletes only its own watches; none of it is charged", async () => {
  await using s = await startServer({ watches: watchesOpts, plans });
  const a = await s.account("bulk"), b = await s.account("bulk");
  const r = await post(s.url, a.key, { ...GOOD, marketplace: "de", zip: "10115" });
  assert.equal(r.status, 201);
  const created = await r.json();
  assert.equal(created.marketplace, "DE");
  assert.equal(created.zip, "10115");
  assert.equal(created.status, "active");
  assert.equal(created.refreshes, 0);

  const mine = WatchList.parse(await (await s.get("/v1/watches", a.key)).json());
  assert.equal(mine.count, 1);
  assert.equal(mine.watches[0].id, created.id);
  assert.equal("secret" in mine.watches[0], false, "the secret is shown once, at creation");
  assert.equal(JSON.stringify(mine).includes(created.secret), false);
  assert.deepEqual(await (await s.get("/v1/watches", b.key)).json(), { count: 0, watches: [] });

  const theirs = await s.get(`/v1/watches/${created.id}`, b.key, { method: "DELETE" });
  assert.equal(theirs.status, 404);
  assert.equal((await theirs.json()).error.code, "not_found");
  assert.equal((await (await s.get("/v1/watches", a.key)).json()).count, 1);
  const gone = await s.get(`/v1/watches/${created.id}`, a.key, { method: "DELETE" });
  assert.equal(gone.status, 200);
  assert.equal((await s.get(`/v1/watches/${created.id}`, a.key, { method: "DELETE" })).status, 404);

  const usage = await (await s.get("/v1/usage", a.key)).json();
  assert.equal(usage.requests_used, 0);
  assert.equal((await post(s.url, null, GOOD)).status, 401);
  assert.equal((await s.get("/v1/watches", "shelf_live_" + "0".repeat(48))).status, 401);
});

Deno.test("watches API: a body that breaks a rule gets 422 with the field's location", async () => {
  await using s = await startServer({ watches: watchesOpts, plans });
  const { key } = await s.account("bulk");
  const cases: [unknown, string[]][] = [
    [{ ...GOOD, asin: "B07H57" }, ["body", "asin"]],
    [{ ...GOOD, marketplace: "XX" }, ["body", "marketplace"]],
    [{ ...GOOD, every_seconds: 3599 }, ["body", "every_seconds"]], // WATCH_MIN_SECONDS 3600
    [{ ...GOOD, every_seconds: 1.5 }, ["body", "every_seconds"]],
    [{ ...GOOD, on: [] }, ["body", "on"]],
    [{ ...GOOD, on: ["title"] }, ["body", "on", "0"]],
    [{ ...GOOD, extra: 1 }, ["body", "extra"]],
    [{ asin: "B07H57DNVV", every_seconds: 3600, on: ["price"] }, ["body", "webhook_url"]],
  ];
  for (const [body, loc] of cases) {
    const r = await post(s.url, key, body);
    assert.equal(r.status, 422, JSON.stringify(body));
    const detail = (await r.json()).detail;
    assert.deepEqual(detail[0].loc.map(String), loc, JSON.stringify(detail));
  }
  for (const [text, type] of [["{", "application/json"], ["[1]", "application/json"]]) {
    const r = await post(s.url, key, text, type);
    assert.equal(r.status, 422);
  }
  const form = await post(s.url, key, JSON.stringify(GOOD), "text/plain");
  assert.equal(form.status, 422);
  assert.equal((await form.json()).detail[0].type, "json_invalid");
  assert.equal((await (await s.get("/v1/watches", key)).json()).count, 0);
  // Spaces around a value and lower case are taken, as a details call takes them (probe FA).
  const loose = await post(s.url, key, {
    ...GOOD,
    asin: " b07h57dnvv ",
    marketplace: " us",
    zip: " 10001 ",
  });
  assert.equal(loose.status, 201, await loose.clone().text());
  const made = await loose.json();
  assert.deepEqual([made.asin, made.marketplace], ["B07H57DNVV", "US"]);
  // Whatever postcode a details call takes (probe FC: "123-" was refused in a body only).
  const dash = await post(s.url, key, { ...GOOD, zip: "123-" });
  assert.equal(dash.status, 201, await dash.clone().text());
});

Deno.test("watches API: a postcode starts with a letter or digit and holds 2-12 characters; -1234 is an uncharged 422 on body.zip", async () => {
  await using s = await startServer({ watches: watchesOpts, plans });
  const { key } = await s.account("bulk");
  for (const zip of ["-1234", " -1234", "-", "1", "1".repeat(13), "12_34"]) {
    const r = await post(s.url, key, { ...GOOD, zip });
    const body = await r.json();
    assert.equal(r.status, 422, `zip ${JSON.stringify(zip)}: ${JSON.stringify(body)}`);
    assert.equal(r.headers.get("x-credits-cost"), "0");
    assert.deepEqual(body.detail.map((d: { loc: unknown[] }) => d.loc), [["body", "zip"]]);
    assert.equal(body.detail[0].input, zip);
  }
  assert.equal((await (await s.get("/v1/watches", key)).json()).count, 0, "no watch was made");
  for (const zip of ["12", "1234-", "A1 2-3", "1".repeat(12)]) {
    const r = await post(s.url, key, { ...GOOD, zip });
    const body = await r.json();
    assert.equal(r.status, 201, `zip ${JSON.stringify(zip)}: ${JSON.stringify(body)}`);
    assert.equal(body.zip, zip);
  }
  assert.equal((await (await s.get("/v1/watches", key)).json()).count, 4);
  assert.equal((await (await s.get("/v1/usage", key)).json()).requests_used, 0);
});

Deno.test("watches API: a body's 422 entries speak the spec's (pydantic's) words and echo the value given", async () => {
  await using s = await startServer({ watches: { ...watchesOpts, minSeconds: 60 }, plans });
  const { key } = await s.account("bulk");
  const { asin: _, ...noAsin } = GOOD;
  const cases: [unknown, { loc: string[]; type: string; msg: string; input: unknown }][] = [
    [noAsin, { loc: ["body", "asin"], type: "missing", msg: "Field required", input: null }],
    [{ ...GOOD, every_seconds: 1 }, {
      loc: ["body", "every_seconds"],
      type: "greater_than_equal",
      msg: "Input should be greater than or equal to 60",
      input: 1,
    }],
    [{ ...GOOD, every_seconds: "3600" }, {
      loc: ["body", "every_seconds"],
      type: "int_type",
      msg: "Input should be a valid integer",
      input: "3600",
    }],
    [{ ...GOOD, on: ["title"] }, {
      loc: ["body", "on", "0"],
      type: "enum",
      msg: "Input should be 'price', 'in_stock' or 'rank'",
      input: "title",
    }],
    [{ ...GOOD, on: [] }, {
      loc: ["body", "on"],
      type: "too_short",
      msg: "List should have at least 1 item after validation",
      input: [],
    }],
    [{ ...GOOD, extra: 7 }, {
      loc: ["body", "extra"],
      type: "extra_forbidden",
      msg: "Extra inputs are not permitted",
      input: 7,
    }],
  ];
  for (const [body, want] of cases) {
    const r = await post(s.url, key, body);
    assert.equal(r.status, 422, JSON.stringify(body));
    const [entry] = (await r.json()).detail;
    assert.deepEqual({ ...entry, loc: entry.loc.map(String) }, want, JSON.stringify(body));
  }
});

Deno.test("watches API: a field's 422 is its own error alone, in its documented limits (probe EA)", async () => {
  await using s = await startServer({ watches: { ...watchesOpts, minSeconds: 60 }, plans });
  const { key } = await s.account("bulk");
  const cases: [unknown, { loc: string[]; type: string; msg: string }][] = [
    // Not also "String should have at most 3 characters", the list's own bound run on a string.
    [{ ...GOOD, on: "price" }, {
      loc: ["body", "on"],
      type: "list_type",
      msg: "Input should be a valid list",
    }],
    // Not first "at most 9007199254740991", the bound zod gives every integer.
    [{ ...GOOD, every_seconds: 1e20 }, {
      loc: ["body", "every_seconds"],
      type: "less_than_equal",
      msg: "Input should be less than or equal to 2592000",
    }],
    [{ ...GOOD, every_seconds: -1e20 }, {
      loc: ["body", "every_seconds"],
      type: "greater_than_equal",
      msg: "Input should be greater than or equal to 60",
    }],
  ];
  for (const [body, want] of cases) {
    const r = await post(s.url, key, body);
    assert.equal(r.status, 422, JSON.stringify(body));
    const detail = (await r.json()).detail.map((
      e: { loc: unknown[]; type: string; msg: string },
    ) => ({
      loc: e.loc.map(String),
      type: e.type,
      msg: e.msg,
    }));
    assert.deepEqual(detail, [want], JSON.stringify(body));
  }
  // A query parameter past an integer's own bound is told its documented limit too.
  const page = await s.get(`/v1/products/search?query=x&page=${"9".repeat(20)}`, key);
  assert.equal(page.status, 422);
  assert.equal((await page.json()).detail[0].type, "less_than_equal");
});

Deno.test("watches API: a deeply nested or bulky value is a 422 that echoes null, not a 503", async () => {
  await using s = await startServer({ watches: watchesOpts, plans });
  const { key } = await s.account("bulk");
  // 10,000 nested arrays in 20 KB: echoed whole, serializing the answer overflowed the stack.
  const deep =
    `{"asin":"B07H57DNVV","every_seconds":3600,"webhook_url":"https://hooks.example.com/x","on":[${
      "[".repeat(10_000)
    }${"]".repeat(10_000)}]}`;
  const r = await post(s.url, key, deep);
  assert.equal(r.status, 422);
  const [entry] = (await r.json()).detail;
  assert.deepEqual(entry.loc, ["body", "on", 0]);
  assert.equal(entry.input, null);
  const wide = await post(s.url, key, {
    ...GOOD,
    extra: Array.from({ length: 5_000 }, (_, i) => i),
  });
  assert.equal(wide.status, 422);
  assert.equal((await wide.json()).detail[0].input, null);
  // Strings are cut at 1,024 characters wherever they are, never in half of a surrogate pair.
  const long = "a".repeat(1_023) + "\u{1F600}" + "b".repeat(5_000);
  const cut = await post(s.url, key, { ...GOOD, on: [long], extra: { note: long } });
  assert.equal(cut.status, 422);
  const entries = (await cut.json()).detail;
  const onEntry = entries.find((e: { loc: unknown[] }) => e.loc[1] === "on");
  const extraEntry = entries.find((e: { loc: unknown[] }) => e.loc[1] === "extra");
  assert.equal(onEntry.input, "a".repeat(1_023));
  assert.deepEqual(extraEntry.input, { note: "a".repeat(1_023) });
  // Field names too, in `loc` and inside an echoed value (probe AI).
  const name = "k".repeat(5_000);
  const keys = await post(s.url, key, { ...GOOD, [name]: 1, extra: { [name]: 2 } });
  const named = (await keys.json()).detail;
  assert.ok(named.every((e: { loc: unknown[] }) => JSON.stringify(e.loc).length < 1_100));
  const echoedObject = named.find((e: { loc: unknown[] }) => e.loc[1] === "extra").input;
  assert.deepEqual(Object.keys(echoedObject).map((k) => k.length), [1_024]);
  assert.equal(s.errors.length, 0, s.errors.join("\n"));
});

Deno.test("watches API: /openapi.json states this server's minimum interval and describes the body's 422 as sent", async () => {
  await using s = await startServer({
    watches: { ...watchesOpts, minSeconds: 60, allowPrivate: true },
    plans,
  });
  const doc = await (await fetch(`${s.url}/openapi.json`)).json();
  const body = doc.components.schemas.WatchCreateBody;
  assert.equal(body.properties.every_seconds.minimum, 60);
  assert.match(body.properties.every_seconds.description, /this server: 60\b/);
  assert.match(body.properties.webhook_url.description, /allows private hosts/);
  const { key } = await s.account("bulk");
  const r = await post(s.url, key, { ...GOOD, on: ["title"] });
  const answer = await r.json();
  const ref = doc.paths["/v1/watches"].post.responses["422"].content["application/json"].schema
    .$ref;
  const schema = doc.components.schemas[ref.split("/").at(-1)];
  // The loc the answer has fits the loc the document gives: "body", then names or indexes.
  const loc = schema.properties.detail.items.properties.loc;
  assert.equal(loc.prefixItems[0].const, "body");
  assert.deepEqual(answer.detail[0].loc, ["body", "on", 0]);
  assert.ok(
    answer.detail[0].loc.slice(1).every((p: unknown) =>
      loc.items.anyOf.some((t: { type: string }) =>
        t.type === (typeof p === "number" ? "integer" : "string")
      )
    ),
    JSON.stringify(loc),
  );
});

Deno.test("watches API: private, loopback and odd webhook targets are refused", async () => {
  await using s = await startServer({ watches: watchesOpts, plans });
  const { key } = await s.account("bulk");
  const refused = [
    "http://127.0.0.1:8000/hook",
    "http://localhost:8080/hook",
    "http://api.localhost/hook",
    "http://10.0.0.1/hook",
    "http://172.16.5.4/hook",
    "http://192.168.0.10/hook",
    "http://100.64.0.1/hook",
    "http://169.254.169.254/latest/meta-data/",
    "http://0.0.0.0/hook",
    "http://[::1]/hook",
    "http://[::ffff:127.0.0.1]/hook",
    "http://[::ffff:a9fe:a9fe]/hook",
    "http://[fe80::1]/hook",
    "http://[fd12:3456::1]/hook",
    "http://2130706433/hook",
    "http://0x7f.1/hook",
    "http://internal.example.com/hook",
    "http://mixed.example.com/hook",
    "http://rebind6.example.com/hook",
    "http://unknown.example.com/hook",
    "ftp://hooks.example.com/hook",
    "https://user:pw@hooks.example.com/hook",
    "https://:secret@hooks.example.com/h", // a password alone (probe GP, WT2)
    "http://198.51.100.1/hook", // TEST-NET-2 (probe GP, I1)
    "http://203.0.113.5/hook", // TEST-NET-3 (probe GP, I1)
    "http://192.0.0.170/hook", // IETF protocol assignments (probe GP, I2)
    "not a url",
  ];
  for (const url of refused) {
    const r = await post(s.url, key, { ...GOOD, webhook_url: url });
    assert.equal(r.status, 422, url);
    const d = (await r.json()).detail[0];
    assert.deepEqual(d.loc, ["body", "webhook_url"], url);
  }
  for (const url of ["https://hooks.example.com/shelf?token=x", "http://93.184.216.34:8443/h"]) {
    assert.equal((await post(s.url, key, { ...GOOD, webhook_url: url })).status, 201, url);
  }
});

Deno.test("watches API: address rules, one by one", () => {
  const pub = [
    "93.184.216.34",
    "8.8.8.8",
    "2606:4700::1111",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
    "2001:4860:4860::8888",
    "2001:30::1",
    "3fff:1000::1", // just past documentation's 3fff::/20
    "3ffe::1",
    "192.0.1.1", // between 192.0.0.0/24 and TEST-NET-1
    "198.51.101.1", // just past TEST-NET-2
    "203.0.114.1", // just past TEST-NET-3
  ];
  const priv = [
    "127.0.0.1",
    "10.255.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.0.1",
    "100.127.0.1",
    "0.1.2.3",
    "224.0.0.1",
    "255.255.255.255",
    "198.18.0.1",
    "192.0.2.1",
    "192.0.0.170", // IETF protocol assignments 192.0.0.0/24 (probe GP, I2)
    "192.0.0.1",
    "198.51.100.1", // TEST-NET-2 (probe GP, I1)
    "198.51.100.255",
    "203.0.113.5", // TEST-NET-3 (probe GP, I1)
    "203.0.113.0",
    "::",
    "::1",
    "fc00::1",
    "fe80::1%eth0",
    "ff02::1",
    "100::1", // discard-only 100::/64
    "::ffff:10.0.0.1",
    "::127.0.0.1",
    "64:ff9b::a00:1",
    "2001:db8::1",
    "3fff:123::1", // documentation 3fff::/20
    "2001:2::5", // benchmarking
    "2001:10::1", // ORCHID
    "2001:2f:ffff::1", // ORCHIDv2
    "2002:7f00:1::1",
    "2002:a9fe:a9fe::",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "not-an-address",
  ];
  for (const a of pub) assert.equal(isPublicAddress(a), true, a);
  for (const a of priv) assert.equal(isPublicAddress(a), false, a);
});

Deno.test("a webhook name whose lookup never ends is refused after a few seconds, as one that does not resolve (probe GO)", async () => {
  const silent = (_host: string, signal?: AbortSignal) =>
    new Promise<string[]>((_, fail) =>
      signal?.addEventListener("abort", () => fail(signal.reason))
    );
  const began = performance.now();
  assert.equal(
    await webhookRefusal("https://slow.example/hook", false, silent, () => new Set()),
    "the host does not resolve",
  );
  assert.ok(performance.now() - began < 10_000);
});

Deno.test("a webhook may not target this server's own addresses, public ones included, in any spelling or through a name", async () => {
  // The machine's public address stands in for one of its own (see ownAddresses).
  const self = () => new Set(["45.33.32.156", canonical("2600:3c01::f03c:91ff:fe18:bb2f")!]);
  const resolve = (host: string) =>
    Promise.resolve(host === "me.example" ? ["45.33.32.156"] : ["93.184.215.14"]);
  for (
    const url of [
      "http://45.33.32.156:25555/internal",
      "http://[::ffff:45.33.32.156]:8080/",
      "http://[2600:3c01:0:0:f03c:91ff:fe18:bb2f]/",
      "http://me.example:9200/_cat",
    ]
  ) {
    assert.match(
      (await webhookRefusal(url, false, resolve, self)) ?? "allowed",
      /this server itself/,
      url,
    );
  }
  assert.equal(await webhookRefusal("https://hooks.example/x", false, resolve, self), null);
  const looked = await new Promise<Error | null>((done) =>
    checkedLookup(resolve, self)("me.example", {}, (e) => done(e))
  );
  assert.match(String(looked), /this server itself/, "refused at the connection too");
  // The real list holds every interface address, whatever its class.
  const mine = ownAddresses();
  for (const i of Deno.networkInterfaces()) {
    assert.ok(mine.has(canonical(i.address)!), `${i.name} ${i.address}`);
  }
});

Deno.test("webhook URLs: only http and https, not schemes that merely begin so (probe HM)", async () => {
  const resolve = () => Promise.resolve(["93.184.216.34"]);
  for (
    const url of ["httpx://hooks.example/x", "http+unix://hooks.example/x", "ftp://h.example/"]
  ) {
    assert.equal(
      await webhookRefusal(url, false, resolve, () => new Set()),
      "only http and https URLs",
      url,
    );
  }
  assert.equal(
    await webhookRefusal("http://hooks.example/x", false, resolve, () => new Set()),
    null,
  );
});

Deno.test("webhook connection lookup: answers node's request for every address with all it checked, and for one with the first (probe HM)", async () => {
  const resolve = () => Promise.resolve(["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"]);
  const self = () => new Set<string>();
  const all = await new Promise<unknown>((done) =>
    checkedLookup(resolve, self)("two.example", { all: true }, (e, found) => done(e ?? found))
  );
  assert.deepEqual(all, [
    { address: "93.184.216.34", family: 4 },
    { address: "2606:2800:220:1:248:1893:25c8:1946", family: 6 },
  ]);
  const one = await new Promise<unknown>((done) =>
    checkedLookup(resolve, self)(
      "two.example",
      {},
      (e, address, family) => done(e ?? [address, family]),
    )
  );
  assert.deepEqual(one, ["93.184.216.34", 4]);
});

Deno.test("watches API: each path takes its own methods; the data endpoints stay GET only", async () => {
  await using s = await startServer({ watches: watchesOpts, plans });
  const { key } = await s.account("bulk");
  const put = await s.get("/v1/watches", key, { method: "PUT" });
  assert.equal(put.status, 405);
  assert.equal(put.headers.get("allow"), "GET, POST");
  assert.equal((await put.json()).error.code, "method_not_allowed");
  const getOne = await s.get("/v1/watches/wat_0000000000000000", key);
  assert.equal(getOne.status, 405);
  assert.equal(getOne.headers.get("allow"), "DELETE");
  await getOne.body?.cancel();
  const postData = await s.get("/v1/products/details?asin=B07H57DNVV", key, { method: "POST" });
  assert.equal(postData.status, 405);
  assert.equal(postData.headers.get("allow"), "GET");
  await postData.body?.cancel();
  const del = await s.get("/v1/products/details", key, { method: "DELETE" });
  assert.equal(del.status, 405);
  await del.body?.cancel();
});

Deno.test("watches API: an account holds at most the documented number of watches, even when created at once", async () => {
  await using s = await startServer({ watches: watchesOpts, plans });
  const { key } = await s.account("bulk");
  const extra = 12;
  const answers = await Promise.all(
    Array.from({ length: MAX_WATCHES_PER_ACCOUNT + extra }, async () => {
      const r = await post(s.url, key, GOOD);
      const body = await r.json();
      return { status: r.status, body };
    }),
  );
  const created = answers.filter((a) => a.status === 201);
  assert.equal(created.length, MAX_WATCHES_PER_ACCOUNT);
  const over = answers.filter((a) => a.status === 409);
  assert.equal(over.length, extra, JSON.stringify(answers.map((a) => a.status)));
  assert.equal(over[0].body.error.code, "watch_limit_reached");
  assert.equal((await (await s.get("/v1/watches", key)).json()).count, MAX_WATCHES_PER_ACCOUNT);
  // Deleting one frees one place.
  const gone = await s.get(`/v1/watches/${created[0].body.id}`, key, { method: "DELETE" });
  assert.equal(gone.status, 200);
  await gone.body?.cancel();
  const again = await post(s.url, key, GOOD);
  assert.equal(again.status, 201);
  await again.body?.cancel();
  assert.equal((await post(s.url, key, GOOD)).status, 409);
});

Deno.test("watches API: calls take a slot of the key's one-second window and carry the meter headers", async () => {
  await using s = await startServer({ watches: watchesOpts, plans });
  const { key } = await s.account("free"); // 1 call a second
  const first = await s.get("/v1/watches", key);
  assert.equal(first.status, 200);
  assert.equal(first.headers.get("x-credits-cost"), "0");
  assert.equal(first.headers.get("x-credits-remaining"), "50");
  await first.body?.cancel();
  const burst = await Promise.all([
    post(s.url, key, GOOD),
    post(s.url, key, GOOD),
    s.get("/v1/watches", key),
  ]);
  const statuses = burst.map((r) => r.status).sort();
  for (const r of burst) await r.body?.cancel();
  assert.ok(statuses.filter((x) => x === 429).length >= 2, String(statuses));
  const limited = burst.find((r) => r.status === 429)!;
  assert.equal(limited.headers.get("retry-after"), "1");
});

Deno.test("watches API: metrics label the watch paths without ids", () => {
  assert.equal(routeLabel("/v1/watches"), "/v1/watches");
  assert.equal(routeLabel("/v1/watches/wat_0123456789abcdef"), "/v1/watches/{id}");
  assert.equal(routeLabel("/v1/watches/anything/else"), "/v1/watches/{id}");
});

Deno.test("watches API: a body over 64 KiB is refused with 413 before it is read", async () => {
  await using s = await startServer({ watches: watchesOpts, plans });
  const { key } = await s.account("bulk");
  const big = JSON.stringify({
    ...GOOD,
    webhook_url: "https://hooks.example.com/" + "a".repeat(70_000),
  });
  const r = await post(s.url, key, big);
  assert.equal(r.status, 413);
  assert.equal((await r.json()).error.code, "payload_too_large");
  assert.equal((await (await s.get("/v1/watches", key)).json()).count, 0);
});

Deno.test("watch scheduler: when more watches are due than one pass takes, the next pass starts at once", async () => {
  // Loops not started by the app; a 10 s poll, so only the immediate next pass can finish in time.
  await using s = await startServer({
    watches: { ...watchesOpts, scheduler: { pollMs: 10_000 } },
    plans,
  });
  const { id, keyId } = await s.account("bulk");
  for (let i = 0; i < 45; i++) {
    assert.ok(await createWatch(s.kv, hourlyWatch(id, keyId), MAX_WATCHES_PER_ACCOUNT));
  }
  s.deps.watches.scheduler.start();
  const stop = Date.now() + 3_000;
  while (s.source.calls < 45 && Date.now() < stop) await new Promise((r) => setTimeout(r, 20));
  assert.equal(s.source.calls, 45, "every due watch refreshed within 3 s");
});

Deno.test("watches API: an account lists its watches at most LISTS_PER_SECOND times a second, however many keys it uses", async () => {
  await using s = await startServer({ watches: watchesOpts, plans });
  const { id, key } = await s.account("bulk");
  const second = (await s.accounts.createKey(id)).value;
  // Two keys, each far inside its own rate window: the account's lists are what is counted.
  while (Date.now() % 1000 > 600) await new Promise((r) => setTimeout(r, 20)); // one second
  const statuses = await Promise.all(
    Array.from(
      { length: 2 * LISTS_PER_SECOND },
      (_, i) =>
        s.get("/v1/watches", i % 2 ? key : second).then(async (r) => {
          if (r.status === 429) {
            assert.equal(r.headers.get("retry-after"), "1");
            assert.equal((await r.json()).error.code, "rate_limited");
          } else await r.body?.cancel();
          return r.status;
        }),
    ),
  );
  assert.equal(statuses.filter((x) => x === 200).length, LISTS_PER_SECOND);
  assert.equal(statuses.filter((x) => x === 429).length, LISTS_PER_SECOND);
  const usage = await (await s.get("/v1/usage", key)).json();
  assert.equal(usage.requests_used, 0, "uncharged");
});

Deno.test("an account's watch creations and deletions in a burst take turns: exactly the limit created, every delete answered", async () => {
  await using s = await startServer({ watches: watchesOpts, plans });
  const a = await s.account("bulk");
  // At once, each changed the account's watch count with a checked commit: as many failed as got
  // through, and deletions past 50 tries were 503s (probe Z: 12–49 of 100).
  const created = await Promise.all(
    Array.from({ length: MAX_WATCHES_PER_ACCOUNT + 50 }, () => post(s.url, a.key, GOOD)),
  );
  const statuses = await Promise.all(created.map(async (r) => (await r.body?.cancel(), r.status)));
  assert.equal(statuses.filter((x) => x === 201).length, MAX_WATCHES_PER_ACCOUNT);
  assert.ok(statuses.every((x) => x === 201 || x === 409), JSON.stringify([...new Set(statuses)]));
  const list = WatchList.parse(await (await s.get("/v1/watches", a.key)).json());
  const deleted = await Promise.all(
    list.watches.map((w) => s.get(`/v1/watches/${w.id}`, a.key, { method: "DELETE" })),
  );
  const gone = await Promise.all(deleted.map(async (r) => (await r.body?.cancel(), r.status)));
  assert.deepEqual([...new Set(gone)], [200]);
  assert.equal(WatchList.parse(await (await s.get("/v1/watches", a.key)).json()).count, 0);
  assert.deepEqual(s.errors, []);
});

Deno.test("watch creations and deletions of one account in a burst cost about one commit each", async () => {
  await using store = await countedKv();
  const watch = (i: number) => ({ ...hourlyWatch("acc_burst", "key_burst"), id: `wat_${i}` });
  const made = await Promise.all(
    Array.from({ length: 300 }, (_, i) => createWatch(store.kv, watch(i), MAX_WATCHES_PER_ACCOUNT)),
  );
  assert.equal(made.filter(Boolean).length, MAX_WATCHES_PER_ACCOUNT);
  assert.ok(store.commits() <= MAX_WATCHES_PER_ACCOUNT + 10, `${store.commits()} commits`);
  const before = store.commits();
  const ids = made.flatMap((ok, i) => (ok ? [`wat_${i}`] : []));
  const gone = await Promise.all(ids.map((id) => deleteWatch(store.kv, "acc_burst", id)));
  assert.ok(gone.every(Boolean));
  assert.ok(store.commits() - before <= ids.length + 10, `${store.commits() - before} commits`);
});

Deno.test("watches API: a webhook_url is at most 2,048 characters (openapi maxLength): one more is a 422 on body.webhook_url", async () => {
  await using s = await startServer({ watches: watchesOpts, plans });
  const { key } = await s.account("bulk");
  const max = 2_048;
  const at = (n: number) => {
    const base = "https://hooks.example.com/";
    return base + "a".repeat(n - base.length);
  };
  const fits = await post(s.url, key, { ...GOOD, webhook_url: at(max) });
  assert.equal(fits.status, 201, (await fits.clone().text()).slice(0, 300));
  for (const n of [max + 1, 4_000]) {
    const r = await post(s.url, key, { ...GOOD, webhook_url: at(n) });
    const body = await r.json();
    assert.equal(r.status, 422, `${n} characters: ${JSON.stringify(body).slice(0, 300)}`);
    assert.deepEqual(body.detail.map((d: { loc: unknown[] }) => d.loc), [["body", "webhook_url"]]);
    assert.equal(r.headers.get("x-credits-cost"), "0");
  }
  assert.equal((await (await s.get("/v1/watches", key)).json()).count, 1);
  // The bound is the one the document states.
  const doc = await (await fetch(`${s.url}/openapi.json`)).json();
  assert.equal(doc.components.schemas.WatchCreateBody.properties.webhook_url.maxLength, max);
});

Deno.test("watches API: a body with thousands of unknown keys answers at most 20 detail entries", async () => {
  await using s = await startServer({ watches: watchesOpts, plans });
  const { key } = await s.account("bulk");
  const body: Record<string, unknown> = { ...GOOD };
  for (let i = 0; i < 3_000; i++) body[`k${i}`] = i;
  const r = await post(s.url, key, body);
  assert.equal(r.status, 422);
  const detail = (await r.json()).detail;
  assert.ok(detail.length > 0 && detail.length <= 20, `${detail.length} entries`);
  assert.deepEqual(detail[0].loc, ["body", "k0"]);
  assert.equal(s.errors.length, 0, s.errors.join("\n"));
});

Deno.test("watches API: a field named twice in `on` counts once, as stored and as answered", async () => {
  await using s = await startServer({ watches: watchesOpts, plans });
  const { key } = await s.account("bulk");
  const r = await post(s.url, key, { ...GOOD, on: ["price", "price", "rank"] });
  assert.equal(r.status, 201, await r.clone().text());
  assert.deepEqual((await r.json()).on, ["price", "rank"]);
  const listed = WatchList.parse(await (await s.get("/v1/watches", key)).json());
  assert.deepEqual(listed.watches.map((w) => w.on), [["price", "rank"]]);
});

Deno.test("watches API: DELETE of an id that is no watch id, however long, is a 404, never a 500", async () => {
  await using s = await startServer({ watches: watchesOpts, plans });
  const { key } = await s.account("bulk");
  for (const id of ["x".repeat(3_000), `wat_${"0".repeat(3_000)}`, "wat_0123456789abcdeg"]) {
    const r = await s.get(`/v1/watches/${id}`, key, { method: "DELETE" });
    const body = await r.json();
    assert.equal(r.status, 404, `${id.length} characters: ${JSON.stringify(body).slice(0, 300)}`);
    assert.equal(body.error.code, "not_found");
  }
  assert.equal(s.errors.length, 0, s.errors.join("\n"));
});

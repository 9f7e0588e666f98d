/**
 * Server-side request forgery (issue 13.1): whatever a client puts in a scrape URL, whatever a
 * page redirects to and whatever cookies a page sets, Shelf sends requests only to marketplace
 * hosts, and cookies only where RFC 6265 scopes them within the marketplace's own domain.
 * Through real HTTP: Shelf on loopback with the real browser transport, in `origin:` mode against
 * the fake marketplace (which records the marketplace host of every request it receives), and in
 * `live` mode through a loopback proxy that records every CONNECT target and refuses it, so
 * that nothing leaves the machine.
 */
import { report } from "./proof/figures.ts";
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { FakeMarketplace } from "./fake_marketplace.ts";
import { CookieJar, MAX_JAR_BYTES } from "../upstream/cookie_jar.ts";
import { upstreamUrl } from "../schemas/marketplace_url.ts";
import { fixture, fixtureBytes } from "./fixture.ts";

// Valid at validation (a marketplace host), hostile in their path: each once led Shelf to
// another host when the URL was rebuilt from its path.
const HOSTILE_PATHS = [
  "https://www.amazon.com//127.0.0.1:9443/x",
  "https://www.amazon.com///127.0.0.1/x",
  "https://www.amazon.com/%2F%2F127.0.0.1/x",
  "https://www.amazon.com/\\\\127.0.0.1/x",
  "https://www.amazon.com\\@127.0.0.1/x",
  "https://www.amazon.com//[::1]/x",
  "https://www.amazon.com//2130706433/x",
  "https://www.amazon.com//0177.0.0.1/x",
  "https://www.amazon.com//user@127.0.0.1/x",
];

Deno.test("upstreamUrl() judges the parsed URL: hostile paths stay paths of the marketplace host", () => {
  for (const raw of HOSTILE_PATHS) {
    const u = upstreamUrl(raw).url;
    assert.equal(u.host, "www.amazon.com", raw);
    assert.equal(u.protocol, "https:");
  }
  for (
    const raw of [
      "https://user@127.0.0.1/",
      "https://www.amazon.com@127.0.0.1/",
      "https://[::1]/",
      "https://2130706433/",
      "https://0177.0.0.1/",
      "https://0x7f.1/",
      "http://www.amazon.com:8080/",
      "https://www.amazon.com.evil.example/",
      // Other names under a marketplace's domain are other sites, or whatever they resolve to.
      "https://evil.amazon.com/x",
      "https://aws.amazon.com/",
      "https://127.0.0.1.nip.io.amazon.com/",
      "https://smile.amazon.co.uk/",
    ]
  ) {
    assert.throws(() => upstreamUrl(raw), raw);
  }
  // Relative inputs (redirect Locations) are resolved first, then judged.
  assert.throws(() => upstreamUrl("//127.0.0.1:9/x", "https://www.amazon.com/dp/B000000001"));
  // Same scheme without slashes is a relative path (WHATWG URL), so it stays on the marketplace.
  assert.equal(
    upstreamUrl("https:127.0.0.1/x", "https://www.amazon.com/dp/B000000001").url.host,
    "www.amazon.com",
  );
  assert.equal(
    upstreamUrl("/gp/x", "https://www.amazon.de/dp/B000000001").url.href,
    "https://www.amazon.de/gp/x",
  );
  assert.equal(
    upstreamUrl("https://amazon.de/dp/B000000001").marketplace.code,
    "DE",
    "bare domain",
  );
  assert.equal(upstreamUrl("https://WWW.Amazon.de./dp/B000000001").url.host, "www.amazon.de");
  assert.equal(upstreamUrl("https://amazon.de./dp/B000000001").url.host, "amazon.de");
});

Deno.test("scrape: the operator's session goes only to the pages Shelf reads, never to an account page", async () => {
  const fake = new FakeMarketplace();
  await using rig = await startRig({
    fake,
    env: { UPSTREAM_COOKIES_US: "session-token=OPERATOR_SESSION; at-main=OPERATOR_AUTH" },
  });
  for (
    const path of [
      "/gp/flex/sign-out.html?action=sign-out",
      "/gp/css/order-history",
      "/ap/signin",
      "/a/addresses",
      // Read pages' paths only as whole leading segments: `/s` (search) is not `/signin`, and a
      // product path further down another path is not a product page.
      "/signin",
      "/spa/x",
      "/gp/css/order-history/x/dp/B07H57DNVV",
    ]
  ) {
    const r = await rig.call(
      `/v1/scrape?url=${encodeURIComponent(`https://www.amazon.com${path}`)}`,
    );
    assert.equal(r.headers.get("x-credits-cost"), "0", path);
  }
  await rig.call("/v1/products/details?asin=B07H57DNVV");
  const sent = (part: string) => fake.requests.filter((r) => r.path.startsWith(part));
  for (const part of ["/gp/flex/", "/gp/css/", "/ap/", "/a/", "/signin", "/spa/"]) {
    assert.ok(sent(part).length > 0, `${part} was fetched`);
    for (const r of sent(part)) {
      assert.doesNotMatch(r.cookie, /OPERATOR_/, `no operator session to ${r.path}`);
    }
  }
  assert.ok(sent("/dp/").length > 0);
  for (const r of sent("/dp/")) {
    assert.match(r.cookie, /session-token=OPERATOR_SESSION/, "the session goes to a product page");
  }
});

Deno.test("scrape: the answer to a page fetched signed out cannot sign the operator out, nor add cookies to the signed-in session", async () => {
  const fake = new FakeMarketplace();
  await using rig = await startRig({
    fake,
    env: { UPSTREAM_COOKIES_US: "session-id=OPSESSION; session-token=OPTOKEN; x-main=OPX" },
  });
  fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  fake.page("https://www.amazon.com/gp/flex/sign-out.html", {
    html: "<html><body>Signed out</body></html>",
    headers: [
      ["set-cookie", "session-token=; Max-Age=0; Path=/"],
      ["set-cookie", "x-main=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/"],
      ["set-cookie", "session-id=ANON; Path=/"],
      ["set-cookie", "ubid-main=ANON-UBID; Domain=.amazon.com; Path=/"],
    ],
  });
  const scraped = await rig.call(
    `/v1/scrape?url=${encodeURIComponent("https://www.amazon.com/gp/flex/sign-out.html")}`,
  );
  assert.equal(scraped.headers.get("x-credits-cost"), "0");
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV")).status, 200);
  const after = fake.requests.filter((r) => r.path.startsWith("/dp/")).at(-1)!;
  assert.equal(after.cookie, "session-id=OPSESSION; session-token=OPTOKEN; x-main=OPX");
});

Deno.test("scrape: the cookies a scraped page sets are not sent with any later call, signed in or not (probe FJ)", async () => {
  const envs: Record<string, string>[] = [
    {},
    { UPSTREAM_COOKIES_US: "session-id=OPSESSION; session-token=OPTOKEN" },
  ];
  for (const env of envs) {
    const fake = new FakeMarketplace();
    await using rig = await startRig({ fake, env });
    const page = "product/amazon.com__app-B07H57DNVV.html";
    fake.page("https://www.amazon.com/dp/B07H57DNVV", page);
    // A product page (a session path) asked in another language, which sets it as a cookie.
    fake.page("https://www.amazon.com/dp/B07H57DNVV?language=es_US", {
      html: await fixture(page),
      headers: [["set-cookie", "lc-main=es_US; Domain=.amazon.com; Path=/"]],
    });
    const scraped = await rig.call(
      `/v1/scrape?url=${encodeURIComponent("https://www.amazon.com/dp/B07H57DNVV?language=es_US")}`,
    );
    assert.equal(scraped.status, 200, JSON.stringify(scraped.body).slice(0, 200));
    assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV")).status, 200);
    const after = fake.requests.filter((r) => r.path === "/dp/B07H57DNVV").at(-1)!;
    assert.doesNotMatch(after.cookie ?? "", /lc-main/, JSON.stringify(env));
  }
});

Deno.test("scrape: a robot check leaves every account's session as it was, the operator's renewed sign-in with it (probe FL)", async () => {
  const fake = new FakeMarketplace();
  await using rig = await startRig({
    fake,
    env: { UPSTREAM_COOKIES_US: "session-id=OPSESSION; at-main=OLD" },
  });
  const page = "product/amazon.com__app-B07H57DNVV.html";
  // The marketplace renews the sign-in with the product page.
  fake.page("https://www.amazon.com/dp/B07H57DNVV", {
    html: await fixture(page),
    headers: [["set-cookie", "at-main=NEW; Domain=.amazon.com; Path=/"]],
  });
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV")).status, 200);
  fake.page("https://www.amazon.com/captcha-me", "blocked/amazon.com__app-robot-check.html");
  const scraped = await rig.call(
    `/v1/scrape?url=${encodeURIComponent("https://www.amazon.com/captcha-me")}`,
  );
  assert.equal(scraped.status, 503, JSON.stringify(scraped.body).slice(0, 200));
  assert.equal(scraped.headers.get("x-credits-cost"), "0");
  fake.page("https://www.amazon.com/dp/B07H57DNVV", page);
  const again = await rig.call("/v1/products/details?asin=B07H57DNVV");
  assert.equal(again.status, 200, JSON.stringify(again.body).slice(0, 200));
  const after = fake.requests.filter((r) => r.path === "/dp/B07H57DNVV").at(-1)!;
  assert.match(after.cookie, /at-main=NEW/);
});

Deno.test("scrape: a blocked attempt is retried on a fresh session, as any call's (probe FM)", async () => {
  const fake = new FakeMarketplace();
  await using rig = await startRig({ fake });
  const page = "product/amazon.com__app-B07H57DNVV.html";
  fake.page("https://www.amazon.com/dp/B07H57DNVV", page);
  // The shared session gets the marketplace's session-id from a first call; a second sends it.
  for (let i = 0; i < 2; i++) {
    assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV")).status, 200);
  }
  const last = fake.requests.filter((r) => r.path === "/dp/B07H57DNVV").at(-1)!;
  const shared = /session-id=([^;]+)/.exec(last.cookie ?? "")?.[1];
  assert.ok(shared, "the shared session carries a session-id");
  fake.fail("robot", 1, "/dp/B07H57DNVV?scrape=1");
  fake.page("https://www.amazon.com/dp/B07H57DNVV?scrape=1", page);
  const url = encodeURIComponent("https://www.amazon.com/dp/B07H57DNVV?scrape=1");
  const scraped = await rig.call(`/v1/scrape?url=${url}`);
  assert.equal(scraped.status, 200, JSON.stringify(scraped.body).slice(0, 200));
  const tries = fake.requests.filter((r) => r.path === "/dp/B07H57DNVV?scrape=1");
  assert.equal(tries.length, 2);
  // The first attempt on a copy of the shared session; the retry on a new one, as a call's retry
  // is (a copy of the same session was retried, into the same block).
  assert.match(tries[0].cookie ?? "", new RegExp(`session-id=${shared}`));
  assert.doesNotMatch(tries[1].cookie ?? "", new RegExp(`session-id=${shared}`));
});

Deno.test("scrape: a page that ends the sign-in in a scrape's copy logs no sign-out for the operator (probe FM)", async () => {
  const lines: Record<string, unknown>[] = [];
  const fake = new FakeMarketplace();
  await using rig = await startRig({
    fake,
    env: { UPSTREAM_COOKIES_US: "session-id=OPSESSION; at-main=SIGNEDIN" },
    browser: { log: (l) => void lines.push(l) },
  });
  const page = "product/amazon.com__app-B07H57DNVV.html";
  fake.page("https://www.amazon.com/dp/B07H57DNVV", page);
  fake.page("https://www.amazon.com/dp/B07H57DNVV?scrape=2", {
    html: await fixture(page),
    headers: [["set-cookie", "at-main=; Max-Age=0; Domain=.amazon.com; Path=/"]],
  });
  const out = encodeURIComponent("https://www.amazon.com/dp/B07H57DNVV?scrape=2");
  assert.equal((await rig.call(`/v1/scrape?url=${out}`)).status, 200);
  assert.deepEqual(lines.filter((l) => l.event === "upstream_signed_out"), []);
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV")).status, 200);
  const after = fake.requests.filter((r) => r.path === "/dp/B07H57DNVV").at(-1)!;
  assert.match(after.cookie, /at-main=SIGNEDIN/);
});

Deno.test("scrape URLs with hostile paths reach only the marketplace host (origin mode), uncharged", async () => {
  await using rig = await startRig();
  for (const raw of HOSTILE_PATHS) {
    const r = await rig.call(`/v1/scrape?url=${encodeURIComponent(raw)}`);
    assert.ok([404, 502].includes(r.status), `${raw} → ${r.status} ${JSON.stringify(r.body)}`);
    assert.equal(r.headers.get("x-credits-cost"), "0", raw);
  }
  const hosts = new Set(rig.fake.requests.map((r) => r.host));
  assert.deepEqual(
    [...hosts],
    ["www.amazon.com"],
    "every upstream request named the marketplace host",
  );
  const usage = await (await rig.server.get("/v1/usage", rig.key)).json();
  report("8. SSRF: hostile scrape paths (origin mode)", {
    "hostile URLs": HOSTILE_PATHS.length,
    "upstream requests": rig.fake.requests.length,
    "to another host": rig.fake.requests.filter((r) => r.host !== "www.amazon.com").length,
    "credits charged": usage.requests_used,
  });
  assert.equal(usage.requests_used, 0);
});

/** A loopback HTTP proxy that records each CONNECT target and refuses it: no byte leaves the box. */
function recordingProxy() {
  const targets: string[] = [];
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const served = (async () => {
    for await (const conn of listener) {
      (async () => {
        const buf = new Uint8Array(4096);
        const n = await conn.read(buf).catch(() => null);
        const head = new TextDecoder().decode(buf.subarray(0, n ?? 0));
        const m = /^(CONNECT|GET|POST) (\S+)/.exec(head);
        if (m) targets.push(m[2]);
        await conn.write(
          new TextEncoder().encode("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n"),
        ).catch(() => {});
        try {
          conn.close();
        } catch { /* closed */ }
      })();
    }
  })();
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    targets,
    async close() {
      listener.close();
      await served.catch(() => {});
    },
  };
}

Deno.test("live mode: a hostile scrape path, or an http:// URL, opens a tunnel to the marketplace host's port 443 only", async () => {
  const proxy = recordingProxy();
  try {
    await using rig = await startRig({
      upstream: "live",
      env: { HTTP_PROXY: proxy.url },
      browser: { retries: 0 },
    });
    // An http:// URL is asked for as https: sent as it was, it went in clear text, with the
    // operator's session cookies.
    const urls = [...HOSTILE_PATHS.slice(0, 4), "http://www.amazon.com/dp/B07H57DNVV"];
    for (const raw of urls) {
      const r = await rig.call(`/v1/scrape?url=${encodeURIComponent(raw)}`);
      assert.ok(r.status >= 500, `${raw} → ${r.status}`);
      assert.equal(r.headers.get("x-credits-cost"), "0");
    }
    assert.ok(proxy.targets.length > 0, "the requests went through the proxy");
    report("8. SSRF: hostile scrape paths (live mode, via a recording proxy)", {
      "hostile URLs": urls.length,
      tunnels: proxy.targets.length,
      "tunnels to another host": proxy.targets.filter((t) => t !== "www.amazon.com:443").length,
    });
    for (const t of proxy.targets) assert.equal(t, "www.amazon.com:443", `tunnel to ${t}`);
  } finally {
    await proxy.close();
  }
});

Deno.test("a redirect chain that leaves the marketplace is an uncharged 502, and nothing is sent off the marketplace", async () => {
  const fake = new FakeMarketplace()
    .redirect("https://www.amazon.com/dp/B0REDIRA01", "/gp/hop/one")
    .redirect("https://www.amazon.com/gp/hop/one", "//127.0.0.1:9/x")
    .redirect("https://www.amazon.com/dp/B0REDIRA02", "https://www.amazon.de/gp/hop/two")
    .redirect("https://www.amazon.de/gp/hop/two", "https://www.amazon.com@127.0.0.1/x")
    .redirect("https://www.amazon.com/dp/B0REDIRA03", "https://[::1]/x");
  await using _fake = fake;
  await using rig = await startRig({ fake });
  for (const asin of ["B0REDIRA01", "B0REDIRA02", "B0REDIRA03"]) {
    const r = await rig.call(`/v1/products/details?asin=${asin}`);
    assert.equal(r.status, 502, `${asin}: ${JSON.stringify(r.body)}`);
    assert.equal(r.headers.get("x-credits-cost"), "0");
  }
  const hosts = new Set(fake.requests.map((r) => r.host));
  assert.deepEqual([...hosts], ["www.amazon.com"], "no hop left the call's marketplace");
});

Deno.test("a redirect to another marketplace is an uncharged 502, not that marketplace's page answered as this one's", async () => {
  const fake = new FakeMarketplace()
    .redirect("https://www.amazon.com/dp/B01LW7X0JJ", "https://www.amazon.de/dp/B01LW7X0JJ")
    .page("https://www.amazon.de/dp/B01LW7X0JJ", "product/amazon.de__app-B01LW7X0JJ.html");
  await using _fake = fake;
  await using rig = await startRig({ fake });
  const r = await rig.call("/v1/products/details?asin=B01LW7X0JJ");
  assert.equal(r.status, 502, JSON.stringify(r.body).slice(0, 300));
  assert.match((r.body.error as { message: string }).message, /another marketplace/);
  assert.equal(r.headers.get("x-credits-cost"), "0");
  const de = await rig.call("/v1/products/details?asin=B01LW7X0JJ&marketplace=DE");
  assert.equal(de.status, 200, "the same page asked for in its own marketplace");
});

Deno.test("cookies a page sets for another site, a public suffix or a narrower path are not sent back (no jar poisoning)", async () => {
  const fake = new FakeMarketplace().page("https://www.amazon.com/dp/B0COOKIE01", {
    html: "<html><body>cookie setter</body></html>",
    headers: [
      ["set-cookie", "poison=1; Domain=com; Path=/"],
      ["set-cookie", "other=1; Domain=amazon.de; Path=/"],
      ["set-cookie", "evil=1; Domain=evil.example; Path=/"],
      ["set-cookie", "narrow=1; Path=/gp/special"],
      ["set-cookie", "good=1; Domain=.amazon.com; Path=/; Secure"],
      ["set-cookie", "hostonly=1; Path=/"],
    ],
  });
  await using _fake = fake;
  await using rig = await startRig({ fake });
  await rig.call("/v1/products/details?asin=B0COOKIE01");
  await rig.call("/v1/products/details?asin=B0COOKIE02");
  await rig.call("/v1/products/details?asin=B0COOKIE03&marketplace=DE");
  const us = fake.requests.filter((r) =>
    r.host === "www.amazon.com" && r.path.includes("B0COOKIE02")
  );
  assert.ok(us.length > 0);
  const sent = us.at(-1)!.cookie;
  assert.match(sent, /(^|; )good=1(;|$)/);
  assert.match(sent, /(^|; )hostonly=1(;|$)/);
  for (const name of ["poison", "other", "evil", "narrow"]) {
    assert.doesNotMatch(sent, new RegExp(`(^|; )${name}=`), `${name} must not be sent`);
  }
  const de = fake.requests.filter((r) => r.host === "www.amazon.de").map((r) => r.cookie).join(
    "; ",
  );
  assert.doesNotMatch(de, /good=|hostonly=|other=/, "amazon.com's cookies never go to amazon.de");
  report("8. cookie jar poisoning", {
    "hostile Set-Cookie lines": 4,
    "sent back": 0,
    "sent to amazon.de": 0,
  });
});

Deno.test("CookieJar follows RFC 6265 domain, path, Secure and expiry rules, inside the marketplace's domain only", () => {
  const jar = new CookieJar();
  const at = (u: string) => new URL(u);
  const set = (url: string, ...lines: string[]) => {
    const h = new Headers();
    for (const l of lines) h.append("set-cookie", l);
    jar.store(h, at(url), 1_000);
  };
  set(
    "https://www.amazon.co.uk/gp/a/b",
    "dir=1",
    "root=1; Path=/",
    "dom=1; Domain=amazon.co.uk; Path=/",
    "sub=1; Domain=amazon.co.uk",
    "sec=1; Secure; Path=/",
  );
  set(
    "https://www.amazon.co.uk/",
    "suffix=1; Domain=co.uk",
    "gone=1; Max-Age=0",
    "later=1; Max-Age=10; Path=/",
  );
  const h = (u: string, now = 1_000) => jar.header(at(u), now).split("; ").filter(Boolean).sort();
  assert.deepEqual(h("https://www.amazon.co.uk/gp/a/x"), [
    "dir=1",
    "dom=1",
    "later=1",
    "root=1",
    "sec=1",
    "sub=1",
  ]);
  assert.deepEqual(
    h("https://www.amazon.co.uk/other"),
    ["dom=1", "later=1", "root=1", "sec=1"],
    "without Path, the default path is /gp/a",
  );
  assert.deepEqual(
    h("http://www.amazon.co.uk/other"),
    ["dom=1", "later=1", "root=1"],
    "Secure only over https",
  );
  assert.deepEqual(
    h("https://smile.amazon.co.uk/"),
    ["dom=1"],
    "host-only cookies stay on their host",
  );
  assert.deepEqual(
    h("https://www.amazon.co.uk/", 20_000),
    ["dom=1", "root=1", "sec=1"],
    "Max-Age expires",
  );
  assert.deepEqual(h("https://www.amazon.com/"), [], "another marketplace gets nothing");
  assert.deepEqual(h("https://127.0.0.1/"), [], "a non-marketplace host gets nothing");
  const seeded = new CookieJar();
  seeded.seed("session-token=abc; ubid=1", "www.amazon.de");
  assert.equal(seeded.header(at("https://www.amazon.de/dp/X")), "session-token=abc; ubid=1");
  assert.equal(seeded.header(at("https://www.amazon.de/-/en/dp/X")), "session-token=abc; ubid=1");
  assert.equal(
    seeded.header(at("https://www.amazon.de/gp/flex/sign-out.html")),
    "",
    "no operator session outside the pages Shelf reads",
  );
  assert.equal(
    seeded.header(
      at("https://www.amazon.de/portal-migration/hz/glow/get-rendered-address-selections"),
    ),
    "",
    "nor the address pop-over (probe DT)",
  );
  assert.equal(
    seeded.header(at("https://www.amazon.com/dp/X")),
    "",
    "operator cookies stay on their marketplace",
  );
  assert.equal(
    seeded.header(at("http://www.amazon.de/dp/X")),
    "",
    "operator cookies only over https",
  );
  // The marketplace renews its session cookies; renewed, they keep to the same paths.
  const renewed = new Headers();
  renewed.append("set-cookie", "session-token=new; Domain=.amazon.de; Path=/; Secure");
  renewed.append("set-cookie", "i18n-prefs=EUR; Domain=.amazon.de; Path=/");
  seeded.store(renewed, at("https://www.amazon.de/dp/X"));
  assert.equal(seeded.header(at("https://www.amazon.de/gp/css/order-history")), "i18n-prefs=EUR");
  // Each renewal replaces its seeded cookie: both went out, the stale one first (probe DH).
  assert.equal(
    seeded.header(at("https://www.amazon.de/dp/X")),
    "ubid=1; session-token=new; i18n-prefs=EUR",
  );
  assert.equal(seeded.signedIn(at("https://www.amazon.de/dp/X")), true);
  // Expired by the marketplace, the session is no longer sent, nor said to be (probe DH).
  const ended = new Headers();
  ended.append("set-cookie", "session-token=; Domain=.amazon.de; Path=/; Max-Age=0");
  ended.append("set-cookie", "ubid=; Domain=.amazon.de; Path=/; Max-Age=0");
  seeded.store(ended, at("https://www.amazon.de/dp/X"));
  assert.equal(seeded.header(at("https://www.amazon.de/dp/X")), "i18n-prefs=EUR");
  assert.equal(seeded.signedIn(at("https://www.amazon.de/dp/X")), false);

  // Only the marketplace host renews the session, and one cookie of each name stands for the site.
  const op = new CookieJar();
  op.seed("session-id=OPERATOR; at-acbde=SECRET", "www.amazon.de");
  const www = at("https://www.amazon.de/dp/X");
  const bare = new Headers([
    ["set-cookie", "session-id=ANON; Path=/"],
    ["set-cookie", "at-acbde=; Path=/; Max-Age=0"],
  ]);
  op.store(bare, at("https://amazon.de/dp/X"));
  assert.equal(
    op.header(www),
    "session-id=OPERATOR; at-acbde=SECRET",
    "the bare domain (probe DI)",
  );
  op.store(new Headers([["set-cookie", "session-id=RENEWED; Path=/"]]), www);
  assert.equal(op.header(www), "at-acbde=SECRET; session-id=RENEWED", "renewed host-only by www");
});

Deno.test("a session's cookies are bounded in every byte they take: long paths and domains, and expired cookies, do not pile up", () => {
  const jar = new CookieJar();
  const at = new URL("https://www.amazon.com/dp/X");
  const now = Date.now();
  for (let round = 0; round < 50; round++) {
    const h = new Headers();
    // A 380 KB Path, ignored as RFC 6265bis says (the cookie keeps its default path)...
    h.append("set-cookie", `long${round}=1; Path=/${"p".repeat(380_000)}`);
    // ... and paths just under the attribute limit, which count in the jar's bytes.
    h.append("set-cookie", `wide${round}=1; Path=/${"w".repeat(1_000)}`);
    // Cookies that expire at once make room first.
    h.append("set-cookie", `brief${round}=1; Expires=${new Date(now + 1_000).toUTCString()}`);
    jar.store(h, at, now);
  }
  assert.match(jar.header(at, now), /long49=1/, "a cookie with an ignored Path is kept, on /dp");
  assert.ok(jar.bytes <= MAX_JAR_BYTES, `${jar.bytes} bytes kept`);
  const later = now + 5_000;
  const h = new Headers();
  for (let i = 0; i < 3; i++) h.append("set-cookie", `fresh${i}=${"f".repeat(2_000)}; Path=/`);
  jar.store(h, at, later);
  assert.match(jar.header(at, later), /fresh2=/);
  assert.doesNotMatch(jar.header(at, later), /brief/);
});

Deno.test("cookies named like the operator's session on other paths are bounded like any other; the operator's own stays", () => {
  const jar = new CookieJar();
  jar.seed("session-id=operator", "www.amazon.com");
  const at = new URL("https://www.amazon.com/dp/X");
  for (let round = 0; round < 100; round++) {
    const h = new Headers();
    for (let i = 0; i < 10; i++) {
      h.append("set-cookie", `session-id=${round}_${i}; Path=/p${round}_${i}`);
    }
    jar.store(h, at);
  }
  assert.ok(jar.bytes <= MAX_JAR_BYTES, `${jar.bytes} bytes kept`);
  assert.match(jar.header(at), /(^|; )session-id=operator(;|$)/);
});

Deno.test("a session's cookies are bounded: pages that set cookies without end cannot make every request fail", async () => {
  const jar = new CookieJar();
  jar.seed("session-token=operator", "www.amazon.com");
  const at = new URL("https://www.amazon.com/dp/X");
  for (let round = 0; round < 20; round++) {
    const h = new Headers();
    for (let i = 0; i < 40; i++) {
      h.append("set-cookie", `k${round}_${i}=${"v".repeat(240)}; Domain=.amazon.com; Path=/`);
    }
    h.append("set-cookie", `huge${round}=${"h".repeat(5_000)}; Path=/`);
    jar.store(h, at);
  }
  const header = jar.header(at);
  assert.ok(header.length <= 8_192 + 60 * 2, `Cookie header of ${header.length} bytes`);
  assert.ok(header.split("; ").length <= 60);
  assert.match(header, /(^|; )session-token=operator(;|$)/, "the operator's session stays");
  assert.match(header, /k19_39=/, "the newest cookies are kept");
  assert.doesNotMatch(header, /huge/, "a cookie over 4 KiB is not kept");

  // Over HTTP: an upstream that sets 40 new cookies with every answer, and a marketplace-like
  // limit on request headers. Every call of the session keeps working.
  const page = await fixtureBytes("product/amazon.com__app-B07H57DNVV.html");
  let n = 0;
  let largest = 0;
  const origin = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
    const cookie = req.headers.get("cookie") ?? "";
    largest = Math.max(largest, cookie.length);
    if (cookie.length > 16_384) return new Response("header too large", { status: 400 });
    const h = new Headers({ "content-type": "text/html" });
    for (let i = 0; i < 40; i++) {
      h.append("set-cookie", `k${n++}=${"v".repeat(240)}; Domain=.amazon.com; Path=/`);
    }
    return new Response(page as BodyInit, { headers: h });
  });
  try {
    await using rig = await startRig({ upstream: `origin:http://127.0.0.1:${origin.addr.port}` });
    const statuses = [];
    for (let i = 0; i < 12; i++) {
      statuses.push((await rig.call(`/v1/products/details?asin=B00000000${i % 10}&x=${i}`)).status);
    }
    assert.deepEqual(statuses, Array(12).fill(200));
    assert.ok(largest <= 8_192 + 120, `largest Cookie header sent: ${largest} bytes`);
  } finally {
    await origin.shutdown();
  }
});

Deno.test("upstreamUrl(): an accepted URL is https, without credentials of any kind, and without its fragment", () => {
  const http = upstreamUrl("http://www.amazon.com/dp/B07H57DNVV?th=1");
  assert.equal(http.url.href, "https://www.amazon.com/dp/B07H57DNVV?th=1");
  assert.equal(
    upstreamUrl("/dp/B07H57DNVV", "http://www.amazon.de/gp/x").url.href,
    "https://www.amazon.de/dp/B07H57DNVV",
    "a redirect's relative Location on an http base",
  );
  for (
    const raw of [
      "https://:secret@www.amazon.com/dp/B07H57DNVV",
      "http://:secret@www.amazon.com/dp/B07H57DNVV",
      "https://user:secret@www.amazon.com/dp/B07H57DNVV",
      "https://user@www.amazon.com/dp/B07H57DNVV",
    ]
  ) {
    assert.throws(() => upstreamUrl(raw), raw);
  }
  const a = upstreamUrl("https://www.amazon.com/dp/B07H57DNVV#a").url.href;
  const b = upstreamUrl("https://www.amazon.com/dp/B07H57DNVV#b").url.href;
  assert.equal(a, "https://www.amazon.com/dp/B07H57DNVV");
  assert.equal(a, b, "#a and #b are one URL");
});

Deno.test("scrape: a password-only credential (https://:secret@host) is an uncharged 422, and nothing is fetched", async () => {
  await using rig = await startRig();
  for (
    const raw of [
      "https://:secret@www.amazon.com/dp/B07H57DNVV",
      "http://:secret@www.amazon.com/dp/B07H57DNVV",
    ]
  ) {
    const r = await rig.call(`/v1/scrape?url=${encodeURIComponent(raw)}`);
    assert.equal(r.status, 422, `${raw} → ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    assert.equal(r.headers.get("x-credits-cost"), "0", raw);
  }
  assert.equal(rig.fake.requests.length, 0, "no request went upstream");
  assert.equal((await (await rig.server.get("/v1/usage", rig.key)).json()).requests_used, 0);
});

Deno.test("scrape: an http:// or fragment-carrying marketplace URL, or a redirect to http://, is fetched and answered as the one https URL", async () => {
  const fake = new FakeMarketplace()
    .redirect("https://www.amazon.com/gp/hop/plain", "http://www.amazon.com/dp/B07H57DNVV")
    .page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  await using _fake = fake;
  await using rig = await startRig({ fake });
  for (
    const raw of [
      "http://www.amazon.com/dp/B07H57DNVV",
      "https://www.amazon.com/dp/B07H57DNVV#a",
      "https://www.amazon.com/dp/B07H57DNVV#b",
      "https://www.amazon.com/gp/hop/plain",
    ]
  ) {
    const r = await rig.call(`/v1/scrape?url=${encodeURIComponent(raw)}`);
    assert.equal(r.status, 200, `${raw} → ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    assert.equal(r.body.url, "https://www.amazon.com/dp/B07H57DNVV", raw);
  }
  assert.deepEqual(
    [...new Set(fake.requests.map((r) => r.path))].sort(),
    ["/dp/B07H57DNVV", "/gp/hop/plain"],
  );
});

/**
 * Upstream proxies (UPSTREAM_PROXIES): an http proxy's credentials go on the CONNECT to the proxy
 * and never inside the tunnel to the marketplace (probe DK: Deno's fetch sent them there too, the
 * operator's proxy account to Amazon with every request); a proxy that takes requests and never
 * answers is left for the next one instead of timing every call out (probe DK).
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { credentialRelay } from "../upstream/proxy_relay.ts";
import { BrowserTransport } from "../upstream/browser_transport.ts";
import { fixture, onSite } from "./fixture.ts";
import { countingProxies } from "./counting_proxies.ts";

/**
 * Two proxies on loopback: one that takes connections and requests and answers nothing, and a
 * forward proxy, to which each request comes in absolute form and is fetched as it names.
 */
function proxyPair() {
  const stall = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  (async () => {
    for await (const c of stall) held.push(c);
  })().catch(() => {});
  const pair = {
    forwarded: 0,
    stall: `http://127.0.0.1:${stall.addr.port}`,
    forward: "",
    async [Symbol.asyncDispose]() {
      stall.close();
      for (const c of held) c.close();
      await server.shutdown();
    },
  };
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
    pair.forwarded++;
    return fetch(req.url, { headers: req.headers, redirect: "manual" });
  });
  pair.forward = `http://127.0.0.1:${server.addr.port}`;
  return pair;
}

/**
 * One live-mode fetch through a stand-in proxy of `scheme` that takes credentials (a child
 * process, tests/proxy_tunnel.ts): they go on the CONNECT, and never inside the tunnel.
 */
async function credentialsOnTheConnectOnly(scheme: "http" | "https"): Promise<void> {
  // One file naming both test CAs: the stand-in marketplace's and the stand-in proxy's.
  const certs = await Deno.makeTempFile({ suffix: ".pem" });
  try {
    const tls = new URL("./fixtures/tls/", import.meta.url);
    await Deno.writeTextFile(
      certs,
      (await Deno.readTextFile(new URL("ca.pem", tls))) +
        (await Deno.readTextFile(new URL("proxy-ca.pem", tls))),
    );
    const secret = `pw-${crypto.randomUUID()}`;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", new URL("./proxy_tunnel.ts", import.meta.url).pathname, secret, scheme],
      env: { DENO_CERT: certs },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const { status, connects, seen } = JSON.parse(text) as {
      status: number;
      connects: string[];
      seen: Record<string, string>[];
    };
    assert.equal(status, 200);
    assert.equal(connects.length, 1);
    assert.match(connects[0], /^CONNECT www\.amazon\.com:443 HTTP\/1\.1\r\n/);
    assert.ok(
      connects[0].includes(`Proxy-Authorization: Basic ${btoa(`op user:${secret}`)}\r\n`),
      connects[0],
    );
    assert.equal(seen.length, 1);
    assert.equal(seen[0]["proxy-authorization"], undefined, "sent to the marketplace");
    assert.ok(!JSON.stringify(seen).includes(btoa(`op user:${secret}`)));
  } finally {
    await Deno.remove(certs);
  }
}

Deno.test("an http proxy's credentials go on the CONNECT only, never to the marketplace inside the tunnel", async () => {
  await credentialsOnTheConnectOnly("http");
});

// The relay reaches an https proxy through node:tls (upstream/proxy_dial.ts).
Deno.test("an https proxy's credentials go on a CONNECT over TLS only, and the tunnel carries the call", async () => {
  await credentialsOnTheConnectOnly("https");
});

Deno.test("a proxy that never answers is left: the next call goes through the next proxy, and new sessions start there", async () => {
  await using proxies = proxyPair();
  await using rig = await startRig({
    env: { UPSTREAM_PROXIES: `${proxies.stall},${proxies.forward}` },
    browser: { timeoutMs: 500, deadlineMs: 5_000 },
  });
  const page = "product/amazon.com__app-B07H57DNVV.html";
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", page);
  rig.fake.page("https://www.amazon.de/dp/B07H57DNVV", page);
  const first = await rig.call("/v1/products/details?asin=B07H57DNVV");
  assert.equal(first.status, 504);
  assert.equal(first.headers.get("x-credits-cost"), "0");
  const second = await rig.call("/v1/products/details?asin=B07H57DNVV");
  assert.equal(second.status, 200, JSON.stringify(second.body));
  // Another marketplace's first session starts at the proxy that answered, not the first.
  const started = Date.now();
  const other = await rig.call("/v1/products/details?asin=B07H57DNVV&marketplace=DE");
  assert.notEqual(other.status, 504);
  assert.ok(Date.now() - started < 500, "no wait for the proxy that never answers");
  assert.equal(proxies.forwarded, 2);
});

/** A proxy that answers every CONNECT "200 Connection established" at once, keeping each head. */
function connectingProxy() {
  const heads: string[] = [];
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  (async () => {
    for await (const c of listener) {
      const buf = new Uint8Array(4096);
      const n = await c.read(buf);
      heads.push(new TextDecoder().decode(buf.subarray(0, n ?? 0)));
      await c.write(new TextEncoder().encode("HTTP/1.1 200 Connection established\r\n\r\n"));
      c.close();
    }
  })().catch(() => {});
  return { heads, port: listener.addr.port, close: () => listener.close() };
}

/** The status line a relay listening on `port` answers a CONNECT to `target` with. */
async function connectTo(port: number, target: string): Promise<string> {
  const c = await Deno.connect({ hostname: "127.0.0.1", port });
  await c.write(new TextEncoder().encode(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
  const buf = new Uint8Array(4096);
  const n = await c.read(buf);
  c.close();
  return new TextDecoder().decode(buf.subarray(0, n ?? 0)).split("\r\n")[0];
}

Deno.test("the credential relay tunnels only to the hosts it is told, and adds the credentials to the CONNECT alone", async () => {
  const proxy = connectingProxy();
  const heads = proxy.heads;
  const relay = credentialRelay(
    `http://user:p%40ss@127.0.0.1:${proxy.port}`,
    (host, port) => host === "www.amazon.com" && port === 443,
  )!;
  const ask = (target: string) => connectTo(Number(new URL(relay.url).port), target);
  try {
    assert.equal(await ask("10.0.0.1:22"), "HTTP/1.1 403 Forbidden");
    assert.equal(await ask("www.amazon.com:80"), "HTTP/1.1 403 Forbidden");
    assert.equal(heads.length, 0, "nothing reached the proxy");
    assert.equal(await ask("www.amazon.com:443"), "HTTP/1.1 200 Connection established");
    assert.equal(
      heads[0],
      `CONNECT www.amazon.com:443 HTTP/1.1\r\nHost: www.amazon.com:443\r\nProxy-Authorization: Basic ${
        btoa("user:p@ss")
      }\r\n\r\n`,
    );
    // Only a plain host name, passed on as checked (probe DL: a proxy reads
    // `evil.com?.amazon.com:443` as host evil.com).
    const loose = credentialRelay(`http://user:pw@127.0.0.1:${proxy.port}`, () => true)!;
    try {
      const port = Number(new URL(loose.url).port);
      for (
        const target of ["evil.com?.amazon.com:443", "evil.com@www.amazon.com:443", "[::1]:443"]
      ) {
        const c = await Deno.connect({ hostname: "127.0.0.1", port });
        await c.write(new TextEncoder().encode(`CONNECT ${target} HTTP/1.1\r\n\r\n`));
        const buf = new Uint8Array(256);
        const n = await c.read(buf);
        c.close();
        assert.match(new TextDecoder().decode(buf.subarray(0, n ?? 0)), /^HTTP\/1\.1 403/, target);
      }
    } finally {
      loose.close();
    }
    assert.equal(heads.length, 1, "nothing more reached the proxy");
    assert.equal(await ask("WWW.amazon.com.:0443"), "HTTP/1.1 200 Connection established");
    assert.match(
      heads[1],
      /^CONNECT www\.amazon\.com:443 HTTP\/1\.1\r\nHost: www\.amazon\.com:443\r\n/,
    );
    // Connections that send nothing do not take the tunnels' places (probe DO: 256 silent ones
    // made every upstream call fail).
    const port = Number(new URL(relay.url).port);
    const silent = await Promise.all(
      Array.from({ length: 300 }, () => Deno.connect({ hostname: "127.0.0.1", port })),
    );
    try {
      assert.equal(await ask("www.amazon.com:443"), "HTTP/1.1 200 Connection established");
    } finally {
      for (const c of silent) c.close();
    }
    assert.equal(credentialRelay("http://127.0.0.1:9", () => true), null, "no credentials");
    assert.equal(credentialRelay("socks5://u:p@127.0.0.1:9", () => true), null, "SOCKS5");
  } finally {
    relay.close();
    proxy.close();
  }
});

Deno.test("the transport's relay tunnels to the marketplaces on port 443 only, never to another port of theirs (probe GP, PR2)", async () => {
  const proxy = connectingProxy();
  const heads = proxy.heads;
  // No origin: the transport reaches the marketplaces themselves, through the operator's proxy.
  const transport = new BrowserTransport({
    proxies: [`http://user:pw@127.0.0.1:${proxy.port}`],
  });
  // The relay listens on loopback, where any local program can reach it: its URL is what the
  // transport hands the runtime, read here as such a program would find its port.
  const relays = transport["relays"];
  assert.equal(relays.length, 1);
  const port = Number(new URL(relays[0].url).port);
  const ask = (target: string) => connectTo(port, target);
  try {
    for (const target of ["www.amazon.com:25", "www.amazon.de:80", "www.amazon.co.uk:8443"]) {
      assert.equal(await ask(target), "HTTP/1.1 403 Forbidden", target);
    }
    assert.equal(await ask("evil.example:443"), "HTTP/1.1 403 Forbidden");
    assert.equal(heads.length, 0, "nothing reached the proxy");
    assert.equal(await ask("www.amazon.com:443"), "HTTP/1.1 200 Connection established");
    assert.match(heads[0], /^CONNECT www\.amazon\.com:443 HTTP\/1\.1\r\n/);
    assert.equal(heads.length, 1);
  } finally {
    await transport.close();
    proxy.close();
  }
});

Deno.test("a call that meets a block page does not move everyone's session onto a proxy that never answers", async () => {
  await using proxies = proxyPair();
  await using rig = await startRig({
    env: { UPSTREAM_PROXIES: `${proxies.forward},${proxies.stall}` },
    browser: { timeoutMs: 500, deadlineMs: 5_000, backoffMs: 5 },
  });
  const details = "/v1/products/details?asin=B07H57DNVV";
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  assert.equal((await rig.call(details)).status, 200);
  // A robot check moves the shared session to the next proxy, which is found never to answer.
  rig.fake.fail("robot", 1);
  assert.equal((await rig.call(details)).status, 504);
  // Another robot check: the session is not moved onto that proxy again (probe DL: a client
  // meeting one block page after another kept every account's calls on it, timing out).
  rig.fake.fail("robot", 1);
  const again = await rig.call(details);
  assert.equal(again.status, 200, JSON.stringify(again.body));
  const after = [];
  for (let i = 0; i < 3; i++) after.push((await rig.call(details)).status);
  assert.deepEqual(after, [200, 200, 200]);
});

Deno.test("a scrape that times out leaves every account's session where it was; a call's own timeout moves it (probes FN, FO)", async () => {
  await using proxies = proxyPair();
  await using rig = await startRig({
    env: { UPSTREAM_PROXIES: `${proxies.stall},${proxies.forward}` },
    browser: { timeoutMs: 500, deadlineMs: 5_000, backoffMs: 5 },
  });
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  const url = encodeURIComponent("https://www.amazon.com/dp/B07H57DNVV");
  // A scrape's timeout may be the page the client chose: it moves no account's session, or a
  // client could move them all between proxies at will (probe FO).
  const scraped = await rig.call(`/v1/scrape?url=${url}`);
  assert.equal(scraped.status, 504, JSON.stringify(scraped.body).slice(0, 200));
  assert.equal(scraped.headers.get("x-credits-cost"), "0");
  const details = "/v1/products/details?asin=B07H57DNVV";
  const own = await rig.call(details);
  assert.equal(own.status, 504, "the call's own timeout, on the proxy the session was on");
  assert.equal(own.headers.get("x-credits-cost"), "0");
  const next = await rig.call(details);
  assert.equal(next.status, 200, JSON.stringify(next.body).slice(0, 200));
});

Deno.test("calls that time out together on one proxy are one stall, and a proxy that answers again is used again", async () => {
  // A proxy that forwards, or takes requests and answers nothing while `stalling`.
  let stalling = true;
  let toA = 0;
  const a = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    toA++;
    if (stalling) await new Promise((r) => setTimeout(r, 3_000));
    return fetch(req.url, { headers: req.headers, redirect: "manual" })
      .catch(() => new Response(null, { status: 502 })); // the marketplace gone by then
  });
  await using proxies = proxyPair();
  try {
    await using rig = await startRig({
      env: { UPSTREAM_PROXIES: `http://127.0.0.1:${a.addr.port},${proxies.forward}` },
      browser: { timeoutMs: 300, deadlineMs: 5_000, stalledProxyMs: 500 },
    });
    const page = "product/amazon.com__app-B07H57DNVV.html";
    const asins = ["B07H57DNV1", "B07H57DNV2", "B07H57DNV3"];
    for (const asin of asins) rig.fake.page(`https://www.amazon.com/dp/${asin}`, page);
    rig.fake.page("https://www.amazon.de/dp/B07H57DNVV", {
      html: onSite(await fixture(page), "DE"),
    });
    // Three at once (three products, so three requests) on the shared session's first proxy,
    // all timing out.
    const three = await Promise.all(
      asins.map((asin) => rig.call(`/v1/products/details?asin=${asin}`)),
    );
    assert.deepEqual(three.map((r) => r.status), [504, 504, 504]);
    stalling = false;
    // Passed over for one stall's time (0.5 s), not three's (0.5 × 4 s: probe DO, 16 minutes
    // at the default): a new session then starts on it again.
    await new Promise((r) => setTimeout(r, 800));
    const before = toA;
    const de = await rig.call("/v1/products/details?asin=B07H57DNVV&marketplace=DE");
    assert.equal(de.status, 200, JSON.stringify(de.body));
    assert.equal(toA, before + 1, "the proxy that stalled took the new session's request");
  } finally {
    await a.shutdown();
  }
});

Deno.test("a scrape that times out does not pass its proxy over: a new session still starts on it (probe FO)", async () => {
  // Two forward proxies that both answer, counting the requests each takes.
  await using proxies = countingProxies(2);
  const { taken } = proxies;
  await using rig = await startRig({
    env: { UPSTREAM_PROXIES: proxies.setting },
    browser: { timeoutMs: 500, deadlineMs: 5_000, backoffMs: 5 },
  });
  const page = "product/amazon.com__app-B07H57DNVV.html";
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", page);
  rig.fake.page("https://www.amazon.de/dp/B07H57DNVV", {
    html: onSite(await fixture(page), "DE"),
  });
  // The page the client chose is slow, past the exchange timeout: the proxy is not to blame.
  rig.fake.slowMs = 1_200;
  rig.fake.fail("slow", 1, "/dp/B07H57DNVV");
  const url = encodeURIComponent("https://www.amazon.com/dp/B07H57DNVV");
  const scraped = await rig.call(`/v1/scrape?url=${url}`);
  assert.equal(scraped.status, 504, JSON.stringify(scraped.body).slice(0, 200));
  assert.equal(scraped.headers.get("x-credits-cost"), "0");
  assert.deepEqual(taken, [1, 0], "the scrape went through the first proxy");
  // Another marketplace's first session starts on the proxy the scrape timed out on.
  const de = await rig.call("/v1/products/details?asin=B07H57DNVV&marketplace=DE");
  assert.equal(de.status, 200, JSON.stringify(de.body).slice(0, 200));
  assert.deepEqual(taken, [2, 0], "the new session's request went through the first proxy");
});

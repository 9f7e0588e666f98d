/**
 * The credential relay's connection to an https proxy (upstream/proxy_dial.ts): a proxy that takes
 * the connection and never speaks TLS gives the tunnel's place back (probe DR) and keeps no socket
 * of ours open once the tunnel is refused (probe HT: Deno's own TLS connection, closed before its
 * handshake, kept its socket until the proxy closed it, one descriptor per tunnel asked); one whose
 * certificate is not trusted is sent nothing. The tunnel over TLS that works is in
 * tests/upstream_proxies_test.ts.
 */
import assert from "node:assert/strict";
import { credentialRelay } from "../upstream/proxy_relay.ts";
import { askTunnel, muteProxy } from "./mute_proxy.ts";

Deno.test("a tunnel whose https proxy never finishes connecting gives its place back", async () => {
  await using mute = muteProxy();
  const relay = credentialRelay(
    `https://user:pw@127.0.0.1:${mute.port}`,
    () => true,
    { tunnels: 1, connectMs: 300 },
  )!;
  try {
    assert.equal(await askTunnel(relay.url), "", "closed once the proxy did not connect in time");
    // Its place was given back (probe DR: 256 such connects refused every tunnel after, with 503).
    assert.equal(await askTunnel(relay.url), "");
  } finally {
    relay.close();
  }
});

Deno.test("a tunnel refused because its https proxy never speaks TLS leaves no socket open to the proxy", async () => {
  await using mute = muteProxy();
  const relay = credentialRelay(
    `https://user:pw@127.0.0.1:${mute.port}`,
    () => true,
    { connectMs: 200 },
  )!;
  try {
    for (let i = 0; i < 3; i++) assert.equal(await askTunnel(relay.url), "", "refused by closing");
    assert.equal(mute.closedByUs.length, 3);
    // Our side's close reaches the proxy at once; with the socket kept, it never would.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const outcome = await Promise.race([
      Promise.all(mute.closedByUs).then(() => "closed"),
      new Promise((r) => timer = setTimeout(() => r("still open after 5 s"), 5_000)),
    ]);
    clearTimeout(timer);
    assert.equal(outcome, "closed");
  } finally {
    relay.close();
  }
});

Deno.test("an https proxy whose certificate is not trusted is sent nothing: no CONNECT, no credentials", async () => {
  // Signed by the test proxy CA, which this process does not trust (no DENO_CERT here).
  const tls = new URL("./fixtures/tls/", import.meta.url);
  const proxy = Deno.listenTls({
    hostname: "127.0.0.1",
    port: 0,
    cert: await Deno.readTextFile(new URL("proxy-127.0.0.1.pem", tls)),
    key: await Deno.readTextFile(new URL("proxy-127.0.0.1.key", tls)),
  });
  const heard: string[] = [];
  const served = (async () => {
    for await (const c of proxy) {
      const buf = new Uint8Array(4096);
      const n = await c.read(buf).catch(() => null);
      if (n) heard.push(new TextDecoder().decode(buf.subarray(0, n)));
      c.close();
    }
  })().catch(() => {});
  const relay = credentialRelay(
    `https://user:secret@127.0.0.1:${proxy.addr.port}`,
    () => true,
    { connectMs: 5_000 },
  )!;
  try {
    const c = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(relay.url).port) });
    await c.write(new TextEncoder().encode("CONNECT www.amazon.com:443 HTTP/1.1\r\n\r\n"));
    const n = await c.read(new Uint8Array(256)).catch(() => null);
    c.close();
    assert.equal(n, null, "the tunnel was refused by closing");
    assert.deepEqual(heard, [], "the proxy read a request");
  } finally {
    relay.close();
    proxy.close();
    await served;
  }
});

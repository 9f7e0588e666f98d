/**
 * The credential relay's connection to an https proxy (upstream/proxy_dial.ts): a proxy that takes
 * the connection and never speaks TLS keeps no socket of ours open once the tunnel is refused
 * (probe HT: Deno's own TLS connection, closed before its handshake, kept its socket until the
 * proxy closed it, one descriptor per tunnel asked). The tunnel over TLS that works is in
 * tests/upstream_proxies_test.ts.
 */
import assert from "node:assert/strict";
import { credentialRelay } from "../upstream/proxy_relay.ts";

Deno.test("a tunnel refused because its https proxy never speaks TLS leaves no socket open to the proxy", async () => {
  // Takes the TCP connection and never answers; tells when our side closes it.
  const mute = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const closedByUs: Promise<void>[] = [];
  const held: Deno.Conn[] = [];
  (async () => {
    for await (const c of mute) {
      held.push(c);
      closedByUs.push((async () => {
        const buf = new Uint8Array(4096);
        while ((await c.read(buf).catch(() => null)) !== null) { /* the ClientHello */ }
      })());
    }
  })().catch(() => {});
  const relay = credentialRelay(
    `https://user:pw@127.0.0.1:${mute.addr.port}`,
    () => true,
    { connectMs: 200 },
  )!;
  const port = Number(new URL(relay.url).port);
  const ask = async () => {
    const c = await Deno.connect({ hostname: "127.0.0.1", port });
    await c.write(new TextEncoder().encode("CONNECT www.amazon.com:443 HTTP/1.1\r\n\r\n"));
    const n = await c.read(new Uint8Array(256)).catch(() => null);
    c.close();
    return n;
  };
  try {
    for (let i = 0; i < 3; i++) assert.equal(await ask(), null, "refused by closing");
    assert.equal(closedByUs.length, 3);
    // Our side's close reaches the proxy at once; with the socket kept, it never would.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const outcome = await Promise.race([
      Promise.all(closedByUs).then(() => "closed"),
      new Promise((r) => timer = setTimeout(() => r("still open after 5 s"), 5_000)),
    ]);
    clearTimeout(timer);
    assert.equal(outcome, "closed");
  } finally {
    relay.close();
    mute.close();
    for (const c of held) {
      try {
        c.close();
      } catch { /* closed */ }
    }
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

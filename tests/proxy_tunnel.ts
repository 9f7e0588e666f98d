/**
 * One live-mode fetch of https://www.amazon.com/dp/B07H57DNVV through an http proxy that takes
 * credentials (an https one with a second argument `https`), run as a child process by
 * tests/upstream_proxies_test.ts and tests/upstream_proxy_tls_test.ts with DENO_CERT naming the
 * test CAs (tests/fixtures/tls), so that the stand-in marketplace's certificate, and the stand-in
 * proxy's, are trusted. The
 * stand-in proxy tunnels every CONNECT to the stand-in marketplace. Prints what each of them was
 * sent: the proxy's CONNECT head, and the marketplace's request headers inside the tunnel.
 */
import { transportFor } from "../upstream/select.ts";

const dir = new URL("./fixtures/tls/", import.meta.url);
const seen: Record<string, string>[] = [];
const marketplace = Deno.serve({
  port: 0,
  hostname: "127.0.0.1",
  cert: Deno.readTextFileSync(new URL("www.amazon.com.pem", dir)),
  key: Deno.readTextFileSync(new URL("www.amazon.com.key", dir)),
  onListen() {},
}, (req) => {
  seen.push(Object.fromEntries(req.headers));
  return new Response("<html><body>a page</body></html>", {
    headers: { "content-type": "text/html; charset=utf-8" },
  });
});

const connects: string[] = [];
const https = Deno.args[1] === "https";
const listener = https
  ? Deno.listenTls({
    hostname: "127.0.0.1",
    port: 0,
    cert: Deno.readTextFileSync(new URL("proxy-127.0.0.1.pem", dir)),
    key: Deno.readTextFileSync(new URL("proxy-127.0.0.1.key", dir)),
  })
  : Deno.listen({ hostname: "127.0.0.1", port: 0 });
(async () => {
  for await (const client of listener) {
    (async () => {
      const buf = new Uint8Array(16 * 1024);
      let n = 0;
      let head = "";
      while (!head.includes("\r\n\r\n")) {
        const got = await client.read(buf.subarray(n));
        if (got === null) return client.close();
        n += got;
        head = new TextDecoder().decode(buf.subarray(0, n));
      }
      connects.push(head);
      const target = await Deno.connect({ hostname: "127.0.0.1", port: marketplace.addr.port });
      await client.write(new TextEncoder().encode("HTTP/1.1 200 Connection established\r\n\r\n"));
      await Promise.race([
        client.readable.pipeTo(target.writable, { preventClose: true }),
        target.readable.pipeTo(client.writable, { preventClose: true }),
      ]).catch(() => {});
      for (const c of [client, target]) {
        try {
          c.close();
        } catch { /* closed */ }
      }
    })();
  }
})();

const proxy = `${https ? "https" : "http"}://op%20user:${
  Deno.args[0]
}@127.0.0.1:${listener.addr.port}`;
const transport = transportFor("live", {
  get: (k) => (k === "UPSTREAM_PROXIES" ? proxy : undefined),
}, {
  retries: 0,
  timeoutMs: 5_000,
});
const res = await transport.fetch({
  url: "https://www.amazon.com/dp/B07H57DNVV",
  marketplace: "US",
  read: () => Promise.resolve({} as never),
});
console.log(JSON.stringify({ status: res.status, connects, seen }));
await transport.close?.();
listener.close();
await marketplace.shutdown();

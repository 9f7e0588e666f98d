/** Forward proxies on loopback, each counting the requests it takes. */
export function countingProxies(n: number) {
  const taken = Array.from({ length: n }, () => 0);
  const servers = taken.map((_, i) =>
    Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
      taken[i]++;
      return fetch(req.url, { headers: req.headers, redirect: "manual" })
        .catch(() => new Response(null, { status: 502 })); // the marketplace gone by then
    })
  );
  return {
    taken,
    setting: servers.map((s) => `http://127.0.0.1:${s.addr.port}`).join(","),
    async [Symbol.asyncDispose]() {
      for (const s of servers) await s.shutdown();
    },
  };
}

/**
 * What the access log and the HTTP metrics say about a request (routes/access_log.ts): the route
 * label an operator's dashboards group by, the time a call took, a cut path said to be cut, and
 * no part of the admin token in a method. Over HTTP through the real server where a request can
 * show it; the secrets list's shortest length only with the middleware alone, as the server's
 * configuration takes no admin token that short.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { startServer } from "./test_server.ts";
import { MAX_LOGGED_PATH, requestLog } from "../routes/access_log.ts";
import { Metrics } from "../core/metrics.ts";

const TOKEN = "T0k3n-abcdefghijklmnopqrstuvwxyz";

/** The value of shelf_http_requests_total for a route and status, 0 when there is no series. */
async function requests(url: string, route: string, status: number): Promise<number> {
  const r = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(r.status, 200);
  const text = await r.text();
  const series = `shelf_http_requests_total{route="${route}",status="${status}"} `;
  const line = text.split("\n").find((l) => l.startsWith(series));
  return line ? Number(line.slice(series.length)) : 0;
}

/** GETs `path` and drops the body; returns the status. */
async function get(url: string, path: string): Promise<number> {
  const r = await fetch(url + path);
  await r.body?.cancel();
  return r.status;
}

/** The last line logged for a request, waited for (a raw connection's line comes when it ends). */
async function lastLine(lines: Record<string, unknown>[], n: number) {
  for (let i = 0; i < 100 && lines.length < n; i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(lines.length, n, JSON.stringify(lines).slice(0, 500));
  return lines[n - 1];
}

Deno.test("/metrics labels a path that only begins like /admin or /docs as other, and counts /metrics under its own name", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  // The process's counters: other servers in this process may have counted before.
  const other = await requests(s.url, "other", 404);
  const admin = await requests(s.url, "/admin", 404);
  const docs = await requests(s.url, "/docs", 404);
  assert.equal(await get(s.url, "/adminx"), 404);
  assert.equal(await get(s.url, "/docs.json"), 404);
  assert.equal(await requests(s.url, "other", 404) - other, 2);
  // An operator reading /admin traffic (a token being guessed) must not see stray paths in it.
  assert.equal(await requests(s.url, "/admin", 404) - admin, 0);
  assert.equal(await requests(s.url, "/docs", 404) - docs, 0);
  // Each scrape is counted once it is answered: the next scrape shows the one before it.
  const before = await requests(s.url, "/metrics", 200);
  assert.equal(await requests(s.url, "/metrics", 200) - before, 1);
});

Deno.test("the access log's ms is the time the call took: a data call whose upstream takes 300 ms logs at least that", async () => {
  const lines: Record<string, unknown>[] = [];
  await using s = await startServer({ accessLog: (l) => void lines.push(l) });
  const { key } = await s.account("starter");
  s.source.delayMs = 300;
  const r = await s.get("/v1/products/offers?asin=B07H57DNVV", key);
  assert.equal(r.status, 200);
  await r.body?.cancel();
  const line = await lastLine(lines, 1);
  assert.equal(line.path, "/v1/products/offers?asin=B07H57DNVV");
  // Only a lower bound: how much longer a loaded machine takes is no concern of this test.
  assert.ok((line.ms as number) >= 290, `ms ${line.ms}`);
});

Deno.test("a path whose control characters re-encode past the logged length is cut there and marked path_truncated", async () => {
  const lines: Record<string, unknown>[] = [];
  await using s = await startServer({ accessLog: (l) => void lines.push(l) });
  // 1,501 characters decoded, well under the cut before masking; 4,501 once `\x01` is `%01` again.
  assert.equal(await get(s.url, "/" + "%01".repeat(1_500)), 404);
  const line = await lastLine(lines, 1);
  assert.equal(line.path, "/" + "%01".repeat(1_500).slice(0, MAX_LOGGED_PATH - 1));
  assert.equal(line.path_truncated, true, "a reader must know the path is not whole");
});

Deno.test("an unknown method holding the admin token across the method's 32-character cut logs no part of it", async () => {
  const lines: Record<string, unknown>[] = [];
  await using s = await startServer({ accessLog: (l) => void lines.push(l), adminToken: TOKEN });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(s.url).port) });
  try {
    // The runtime takes any token as a method; the cut at 32 falls 12 characters into the token.
    const method = "X".repeat(20) + TOKEN;
    await conn.write(new TextEncoder().encode(`${method} /v1/ HTTP/1.1\r\nHost: x\r\n\r\n`));
    await conn.read(new Uint8Array(4096));
  } finally {
    conn.close();
  }
  const line = await lastLine(lines, 1);
  const logged = String(line.method);
  assert.ok(logged.length <= 32, logged);
  for (let i = 0; i + 6 <= TOKEN.length; i++) {
    assert.ok(!logged.includes(TOKEN.slice(i, i + 6)), `part of the admin token in ${logged}`);
  }
});

Deno.test("a secret of eight characters, the shortest the log masks, never shows in a logged path", async () => {
  const lines: Record<string, unknown>[] = [];
  const app = new Hono();
  app.use(
    "*",
    requestLog({ log: (l) => lines.push(l), metrics: new Metrics(), secrets: ["Zq8!Zq8!"] }),
  );
  app.all("*", (c) => c.text("x"));
  await (await app.request("/x/Zq8!Zq8!")).body?.cancel();
  await (await app.request("/x?y=Zq8!Zq8!")).body?.cancel();
  assert.equal(lines.length, 2);
  for (const line of lines) {
    assert.ok(!String(line.path).includes("Zq8!Zq8!"), String(line.path));
  }
});

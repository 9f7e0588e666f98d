/**
 * Requests Shelf refuses before any route: a Host header that is no host name, a URL past MAX_URL
 * (routes/request_target.ts). Raw HTTP/1.1 over TCP: fetch sets the Host header itself.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { getPath } from "hono/utils/url";
import { MAX_URL, requestPath } from "../routes/request_target.ts";

async function raw(url: string, head: string): Promise<{ status: number; body: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(url).port) });
  try {
    await conn.write(new TextEncoder().encode(head));
    let text = "";
    const buf = new Uint8Array(65_536);
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    return { status: Number(text.split(" ")[1]), body: text.slice(text.indexOf("\r\n\r\n") + 4) };
  } finally {
    conn.close();
  }
}

const get = (path: string, host: string) =>
  `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;

Deno.test("a Host header that is no host name is a 400, not a moved path or a 503 on stderr", async () => {
  const lines: Record<string, unknown>[] = [];
  await using s = await startServer({
    adminToken: "t".repeat(32),
    accessLog: (l) => lines.push(l),
  });
  // Deno builds the URL from Host: this one made every route see /admin/accounts.
  const moved = await raw(s.url, get("/v1/products/details?asin=B07H57DNVV", "x/admin/accounts?"));
  assert.equal(moved.status, 400);
  assert.equal(JSON.parse(moved.body).error.code, "bad_request");
  // One the URL parser refuses: every dashboard page was a 503 quoting it in full on stderr.
  const bad = await raw(s.url, get("/dashboard/signin", `a<${"b".repeat(60_000)}`));
  assert.equal(bad.status, 400);
  assert.deepEqual(s.errors, []);
  assert.ok(lines.every((l) => String(l.path).length <= 2_048));
  // Host names, addresses, ports and container names with underscores are answered.
  for (const host of ["127.0.0.1:8000", "api.example.com", "shelf_api:8000", "[::1]:8000"]) {
    assert.equal((await raw(s.url, get("/healthz", host))).status, 200, host);
  }
});

Deno.test("a URL longer than MAX_URL is a 414 in the spec's error shape, without a key", async () => {
  await using s = await startServer();
  const long = await fetch(`${s.url}/healthz?${"a=1&".repeat(MAX_URL / 4)}`);
  assert.equal(long.status, 414);
  assert.equal((await long.json()).error.code, "uri_too_long");
  assert.equal((await fetch(`${s.url}/healthz?${"a=1&".repeat(1_000)}`)).status, 200);
});

Deno.test("a Host header holding a slash, or a bracketed host that is no IPv6 text, is a 400", async () => {
  await using s = await startServer({ adminToken: "t".repeat(32) });
  // A `/` alone (no `?`) moved the path: `GET /accounts` with this Host was `/admin/accounts`.
  for (
    const host of ["x/admin", "x/dashboard", "127.0.0.1/admin", "[a<b/c?]", "[zz::1]", "[::1/x]"]
  ) {
    const r = await raw(s.url, get("/accounts", host));
    assert.equal(r.status, 400, host);
    assert.equal(JSON.parse(r.body).error.code, "bad_request", host);
  }
  assert.deepEqual(s.errors, []);
  // IPv6 literals, the IPv4-mapped form included, are still answered.
  for (const host of ["[::1]", "[2001:DB8::a]:8000", "[::ffff:127.0.0.1]"]) {
    assert.equal((await raw(s.url, get("/healthz", host))).status, 200, host);
  }
});

Deno.test("a path is routed decoded once, as Hono's getPath gives it: %25 stays %25", () => {
  for (
    const path of [
      "/x/%2541",
      "/x/%25",
      "/x/%41%2541",
      "/%2568ealthz",
      "/a%20b/%25%32%35",
      "/v1/%2576",
    ]
  ) {
    const req = new Request(`http://127.0.0.1:8000${path}?q=%2541`);
    assert.equal(requestPath(req), getPath(req), path);
  }
  assert.equal(requestPath(new Request("http://127.0.0.1:8000/x/%2541")), "/x/%2541");
});

/**
 * Request bodies are read only by the routes that read them, within a time limit, and only so
 * many at once (routes/body_limit.ts): POST streams that never end, sent to any path without a
 * token, held 80-100 KB each for as long as the client kept them open (probe BG). Raw HTTP/1.1
 * over TCP, so that a body can be left unfinished.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { FORM, heldForms, statusWithin, type Unfinished, unfinished } from "./unfinished_body.ts";

const TOKEN = "body-reading-test-admin-token-0123456789";

Deno.test("a body no route reads is not read: an unfinished POST is answered at once, a wrong token refused", async () => {
  const lines: Record<string, unknown>[] = [];
  await using s = await startServer({ adminToken: TOKEN, accessLog: (l) => lines.push(l) });
  for (
    const [path, headers, status] of [
      ["/healthz", [], 405],
      ["/admin/accounts", ["Authorization: Bearer wrong-token-wrong-token", FORM], 401],
      ["/v1/watches", ["x-api-key: shelf_live_nope", "Content-Type: application/json"], 401],
    ] as const
  ) {
    const u = await unfinished(s.url, path, [...headers]);
    const got = await statusWithin(u, 3_000);
    u.close();
    assert.ok(got === status || (path === "/healthz" && got === 404), `${path}: ${got}`);
  }
  assert.deepEqual(s.errors, []);
});

Deno.test("a body that has not arrived whole in time is a 408 (400 on the dashboard), and the next one is read", async () => {
  await using s = await startServer({ bodyReading: { seconds: 1 } });
  const { key } = await s.account("starter");
  const api = await unfinished(s.url, "/v1/watches", [
    `x-api-key: ${key}`,
    "Content-Type: application/json",
  ]);
  const apiGot = await statusWithin(api, 5_000);
  api.close();
  assert.equal(apiGot, 408);
  // A browser sends a form answered 408 again by itself (probe BS): the dashboard answers 400.
  const u = await unfinished(s.url, "/dashboard/signin", [FORM]);
  const got = await statusWithin(u, 5_000);
  u.close();
  assert.equal(got, 400);
  const whole = await fetch(`${s.url}/dashboard/signin`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "email=a%40b.c&password=x",
  });
  await whole.body?.cancel();
  assert.ok(whole.status !== 408 && whole.status < 500, `a whole form: ${whole.status}`);
});

Deno.test("bodies read at once are bounded: past half, a few per client; the last quarter one each for clients with none; past all, 503", async () => {
  await using s = await startServer({
    trustProxy: 1,
    bodyReading: { seconds: 30, max: 8, perClient: 2 },
  });
  const from = (ip: string) => [FORM, `X-Forwarded-For: ${ip}`];
  const held: Unfinished[] = [];
  const send = async (ip: string) => {
    const u = await unfinished(s.url, "/dashboard/signin", from(ip));
    const status = await statusWithin(u, 300);
    if (status === null) held.push(u);
    else u.close();
    return status;
  };
  try {
    // Below half (4), one client takes what it sends.
    for (let i = 0; i < 4; i++) assert.equal(await send("10.0.0.1"), null, `A ${i}`);
    assert.equal(await send("10.0.0.1"), 429, "A past half, with more than its 2");
    // Past half, 2 a client; an IPv6 client counts by its /48 (two /64s of one).
    assert.equal(await send("2001:db8:1:1::1"), null);
    assert.equal(await send("2001:db8:1:2::1"), null);
    // The last quarter (2): one each for clients with none being read.
    assert.equal(await send("2001:db8:1:3::1"), 429, "that /48 has two being read");
    assert.equal(await send("10.0.0.3"), null, "C's first, in the kept quarter");
    assert.equal(await send("10.0.0.3"), 429, "C has one being read: none of the kept quarter");
    assert.equal(await send("10.0.0.4"), null, "D's first");
    assert.equal(await send("10.0.0.5"), 503, "all eight being read");
    held.pop()!.close(); // D hangs up: its slot is freed
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(await send("10.0.0.5"), null, "E's first, once one was freed");
  } finally {
    for (const u of held) u.close();
  }
});

Deno.test("past half the reading slots, a client's share is exactly perClient: its (perClient+1)th body is refused, one with fewer is read (probe GP, B2)", async () => {
  await using s = await startServer({
    trustProxy: 1,
    bodyReading: { seconds: 30, max: 8, perClient: 2 },
  });
  // Bodies are held open for 30 s here.
  const { held, send } = heldForms(s.url, 400);
  try {
    // Below half (4): A and B take two each, A's share exactly.
    for (const ip of ["10.0.0.1", "10.0.0.1", "10.0.0.2", "10.0.0.2"]) {
      assert.equal(await send(ip, false), null, ip);
    }
    // Four being read, half of eight, and short of the kept last quarter (6): only the
    // per-client share refuses here, and at exactly perClient being read, not one later.
    assert.equal(await send("10.0.0.1", true), 429, "A's third, with its 2 being read");
    assert.equal(await send("10.0.0.2", true), 429, "B's third, with its 2 being read");
    assert.equal(await send("10.0.0.3", false), null, "C's first");
    assert.equal(await send("10.0.0.3", false), null, "C's second: it had 1, below its share");
    assert.equal(held.length, 6);
  } finally {
    for (const u of held) u.close();
  }
});

Deno.test("a body refused while a paid route reads it keeps the route's headers; a declared length over the limit is not answered before the route's checks", async () => {
  await using s = await startServer();
  const { key } = await s.account("starter");
  // Chunked, over 64 KiB: refused as it is read, after the key was taken (probe BQ: the 413 had
  // none of the call's headers).
  const big = new TextEncoder().encode(`{"asin":"${"x".repeat(70 * 1024)}"}`);
  const refused = await fetch(`${s.url}/v1/watches`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: new ReadableStream({
      start(c) {
        c.enqueue(big);
        c.close();
      },
    }),
    // @ts-ignore: Deno's fetch streams a request body with duplex "half"
    duplex: "half",
  });
  await refused.body?.cancel();
  assert.equal(refused.status, 413);
  assert.ok(refused.headers.get("x-credits-remaining") !== null, "X-Credits-Remaining");
  assert.ok(refused.headers.get("ratelimit") !== null, "RateLimit");
  // A declared 100 MB body: without a key a 401, on no route a 404 (probe BQ: 413 first).
  for (
    const [path, headers, status] of [["/v1/watches", {}, 401], ["/nowhere", {}, 404]] as const
  ) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(s.url).port) });
    await conn.write(
      new TextEncoder().encode(
        `POST ${path} HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n` +
          `Content-Length: 100000000\r\n${Object.keys(headers).join("")}\r\n{"a":`,
      ),
    );
    const buf = new Uint8Array(4096);
    const n = await conn.read(buf);
    conn.close();
    assert.match(
      new TextDecoder().decode(buf.subarray(0, n ?? 0)),
      new RegExp(`^HTTP/1.1 ${status}`),
      path,
    );
  }
});

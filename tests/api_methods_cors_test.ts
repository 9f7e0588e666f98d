/**
 * Methods and CORS on /v1 (issue 13.12): anything but GET is a 405 `method_not_allowed` with
 * `Allow: GET`, never charged, HEAD included; OPTIONS is a CORS preflight only for the origins in
 * CORS_ORIGINS; without CORS_ORIGINS no CORS header is sent at all.
 */
import assert from "node:assert/strict";
import { ManualClock, startServer } from "./test_server.ts";
import { parseCorsOrigins } from "../routes/methods.ts";

const DETAILS = "/v1/products/offers?asin=B07H57DNVV";

Deno.test("every method but GET on /v1 is a 405 with Allow: GET, in the error shape, uncharged", async () => {
  await using s = await startServer();
  const { key } = await s.account("growth");
  for (const method of ["POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]) {
    for (
      const path of [
        DETAILS,
        "/v1/usage",
        "/v1/",
        "/v1/scrape?url=https://www.amazon.com/dp/B07H57DNVV",
      ]
    ) {
      const r = await s.get(path, key, { method, body: method === "POST" ? "{}" : undefined });
      assert.equal(r.status, 405, `${method} ${path}`);
      assert.equal(r.headers.get("allow"), "GET");
      if (method !== "HEAD") {
        const body = await r.json();
        assert.deepEqual(body, {
          error: { code: "method_not_allowed", message: body.error.message, status: 405 },
        });
      } else await r.body?.cancel();
      assert.equal(
        r.headers.get("access-control-allow-origin"),
        null,
        "no CORS headers without CORS_ORIGINS",
      );
    }
  }
  const usage = await (await s.get("/v1/usage", key)).json();
  assert.equal(usage.requests_used, 0, "nothing was charged");
  assert.equal(s.source.calls, 0, "nothing reached the data source");
  const get = await s.get(DETAILS, key, { headers: { origin: "https://app.example" } });
  assert.equal(get.status, 200);
  assert.equal(get.headers.get("access-control-allow-origin"), null);
  await get.body?.cancel();
});

Deno.test("a path /v1 does not have is a 404 not_found whatever the method, before any key is read", async () => {
  await using s = await startServer();
  for (const method of ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS"]) {
    for (const path of ["/v1/nothing", "/v1/usage/", "/v1/products/detail"]) {
      const r = await s.get(path, undefined, {
        method,
        body: method === "POST" ? "{}" : undefined,
      });
      assert.equal(r.status, 404, `${method} ${path}`);
      assert.equal(r.headers.get("allow"), null);
      if (method !== "HEAD") {
        assert.equal((await r.json()).error.code, "not_found", `${method} ${path}`);
      } else await r.body?.cancel();
    }
  }
  assert.equal(s.source.calls, 0);
});

Deno.test("with CORS_ORIGINS, listed origins get a preflight and CORS headers; others get neither", async () => {
  await using s = await startServer({ corsOrigins: ["https://app.example"] });
  const { key } = await s.account("growth");
  const preflight = (origin: string) =>
    fetch(s.url + DETAILS, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": "GET",
        "access-control-request-headers": "x-api-key",
      },
    });
  const ok = await preflight("https://app.example");
  await ok.body?.cancel();
  assert.equal(ok.status, 204);
  assert.equal(ok.headers.get("access-control-allow-origin"), "https://app.example");
  assert.match(ok.headers.get("access-control-allow-headers") ?? "", /x-api-key/i);
  assert.match(ok.headers.get("access-control-allow-methods") ?? "", /GET/);
  const other = await preflight("https://evil.example");
  await other.body?.cancel();
  assert.equal(other.status, 405);
  assert.equal(other.headers.get("access-control-allow-origin"), null);

  const get = await s.get(DETAILS, key, { headers: { origin: "https://app.example" } });
  assert.equal(get.status, 200);
  assert.equal(get.headers.get("access-control-allow-origin"), "https://app.example");
  assert.match(get.headers.get("access-control-expose-headers") ?? "", /x-credits-remaining/i);
  await get.body?.cancel();
  const denied = await s.get(DETAILS, key, { headers: { origin: "https://evil.example" } });
  assert.equal(denied.headers.get("access-control-allow-origin"), null);
  await denied.body?.cancel();
  const unauthorized = await s.get(DETAILS, null, { headers: { origin: "https://app.example" } });
  assert.equal(unauthorized.status, 401);
  assert.equal(
    unauthorized.headers.get("access-control-allow-origin"),
    "https://app.example",
    "errors are readable too",
  );
  await unauthorized.body?.cancel();
  // The router's 404 and the methods' 405 are errors in the spec's shape the origin reads as well
  // (they had no CORS header: a browser app saw "Failed to fetch"; probe AD).
  for (
    const [path, init, status] of [
      ["/v1/nope", {}, 404],
      ["/v1/watches/wat_0000000000000000", {}, 405],
      ["/v1/usage", { method: "POST" }, 405],
    ] as const
  ) {
    for (const origin of ["https://app.example", "https://evil.example"]) {
      const r = await s.get(path, key, { ...init, headers: { origin } });
      assert.equal(r.status, status, path);
      assert.ok((await r.json()).error, "the spec's error shape");
      assert.equal(
        r.headers.get("access-control-allow-origin"),
        origin === "https://app.example" ? origin : null,
        `${path} from ${origin}`,
      );
      if (status === 405) assert.ok(r.headers.get("allow"));
      // A browser sends a request with a key only after its preflight: answered for the allowed
      // origin, so that the error above reaches it (the preflight was a bare 404 or 405; probe AH).
      const pre = await fetch(s.url + path, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "method" in init ? init.method : "GET",
          "access-control-request-headers": "x-api-key",
        },
      });
      await pre.body?.cancel();
      if (origin === "https://app.example") {
        assert.equal(pre.status, 204, `preflight of ${path}`);
        assert.equal(pre.headers.get("access-control-allow-origin"), origin);
      } else {
        assert.equal(pre.status, status, `preflight of ${path} from another origin`);
        assert.equal(pre.headers.get("access-control-allow-origin"), null);
      }
    }
  }
});

/**
 * What a browser app may read of an answer: the meter headers, Retry-After (SPEC requires it on a
 * 429; a client must be able to wait that long), X-Request-Id and Age (routes/methods.ts).
 */
const EXPOSED = [
  "age",
  "ratelimit",
  "ratelimit-policy",
  "retry-after",
  "x-credits-cost",
  "x-credits-remaining",
  "x-credits-reset",
  "x-request-id",
];
const exposed = (r: Response) =>
  (r.headers.get("access-control-expose-headers") ?? "").split(",").map((h) =>
    h.trim().toLowerCase()
  ).filter(Boolean).sort();

Deno.test("with CORS_ORIGINS, every answer exposes the meter headers, Retry-After, X-Request-Id and Age, a 429 included", async () => {
  for (const corsOrigins of [["https://app.example"], "*"] as const) {
    const clock = new ManualClock(Date.UTC(2026, 0, 5, 12));
    await using s = await startServer({ clock, corsOrigins: corsOrigins as "*" | string[] });
    const { key } = await s.account("free"); // one call a second
    const headers = { origin: "https://app.example" };
    const paid = await s.get(DETAILS, key, { headers });
    await paid.body?.cancel();
    assert.equal(paid.status, 200);
    assert.deepEqual(exposed(paid), EXPOSED, `${corsOrigins}: a paid answer`);
    // Every header this answer carries for the client is among those it may read.
    for (const h of ["x-credits-cost", "x-credits-remaining", "ratelimit", "x-request-id"]) {
      assert.ok(paid.headers.has(h), h);
    }
    const limited = await s.get(DETAILS, key, { headers });
    await limited.body?.cancel();
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get("retry-after"), "1");
    assert.deepEqual(exposed(limited), EXPOSED, `${corsOrigins}: a 429 exposes its Retry-After`);
    clock.advance(1_000);
    const invalid = await s.get("/v1/products/offers?asin=bad", key, { headers });
    await invalid.body?.cancel();
    assert.equal(invalid.status, 422);
    assert.deepEqual(exposed(invalid), EXPOSED, `${corsOrigins}: a 422`);
  }
});

Deno.test("CORS_ORIGINS=* allows any origin; a malformed list refuses to start", async () => {
  assert.deepEqual(parseCorsOrigins(undefined), null);
  assert.deepEqual(parseCorsOrigins("https://a.example, http://localhost:3000"), [
    "https://a.example",
    "http://localhost:3000",
  ]);
  assert.throws(() => parseCorsOrigins("https://a.example/path"), /CORS_ORIGINS/);
  assert.throws(() => parseCorsOrigins("not an origin"), /CORS_ORIGINS/);
  await using s = await startServer({ corsOrigins: "*" });
  const r = await fetch(s.url + "/v1/", { headers: { origin: "https://anything.example" } });
  await r.body?.cancel();
  assert.equal(r.headers.get("access-control-allow-origin"), "*");
});

Deno.test("HEAD says the length GET sends (probe FD: Content-Length 0 on every small page)", async () => {
  await using s = await startServer();
  for (const path of ["/healthz", "/docs", "/openapi.json", "/nope"]) {
    const head = await fetch(`${s.url}${path}`, { method: "HEAD" });
    await head.body?.cancel();
    const get = await fetch(`${s.url}${path}`);
    const sent = (await get.arrayBuffer()).byteLength;
    assert.equal(head.status, get.status, path);
    assert.ok(sent > 0, path);
    assert.equal(head.headers.get("content-length"), String(sent), path);
  }
});

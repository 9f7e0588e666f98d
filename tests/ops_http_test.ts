/**
 * The operator's HTTP surface (issue 14, items 1–3): health and readiness, the landing page,
 * X-Request-Id on every response, one access-log line per request with no secret in it,
 * Prometheus metrics behind the admin token, and parser health as fill rates.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { startRig } from "./upstream_harness.ts";
import { MAX_LOGGED_PATH } from "../routes/access_log.ts";
import { maskSecrets } from "../core/ops_log.ts";
import { FakeMarketplace } from "./fake_marketplace.ts";
import { spawnShelf } from "./proof/shelf_process.ts";
import { createAccount } from "./proof/admin_client.ts";

const TOKEN = "ops-http-test-admin-token-0123456789";

Deno.test("/healthz and /readyz answer without a key; /readyz is a 503 in the error shape when the store cannot answer", async () => {
  await using s = await startServer();
  const h = await fetch(`${s.url}/healthz`);
  assert.equal(h.status, 200);
  assert.deepEqual(await h.json(), { status: "ok" });
  const r = await fetch(`${s.url}/readyz`);
  assert.equal(r.status, 200);
  await r.body?.cancel();
  s.kv.close();
  const down = await fetch(`${s.url}/readyz`);
  assert.equal(down.status, 503);
  const body = await down.json();
  assert.deepEqual(Object.keys(body.error).sort(), ["code", "message", "status"]);
  assert.equal(body.error.status, 503);
  const still = await fetch(`${s.url}/healthz`);
  assert.equal(still.status, 200, "the process still serves");
  await still.body?.cancel();
});

Deno.test("GET / is a landing page linking the docs, the dashboard and the health check", async () => {
  await using s = await startServer();
  const r = await fetch(`${s.url}/`);
  assert.equal(r.status, 200);
  const html = await r.text();
  for (const href of ["/docs", "/dashboard", "/healthz"]) {
    assert.ok(html.includes(`href="${href}"`), href);
  }
});

Deno.test("X-Request-Id: a well-formed incoming id is kept, anything else is replaced, on every kind of response", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const idOf = async (path: string, id?: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (id !== undefined) headers.set("x-request-id", id);
    const r = await fetch(s.url + path, { ...init, headers, redirect: "manual" });
    await r.body?.cancel();
    return r.headers.get("x-request-id");
  };
  for (
    const path of [
      "/v1/",
      "/v1/usage",
      "/nowhere",
      "/dashboard/signin",
      "/healthz",
      "/admin/accounts",
      "/docs",
    ]
  ) {
    assert.equal(await idOf(path, "abc.DEF_123-x"), "abc.DEF_123-x", path);
    const made = await idOf(path);
    assert.match(made ?? "", /^[A-Za-z0-9._-]{1,64}$/, path);
  }
  // A paid 200 builds its headers with the id (routes/access_log.ts jsonWithRequestId).
  const { key } = await s.account("starter");
  for (const given of ["abc.DEF_123-x", undefined]) {
    const headers: Record<string, string> = { "x-api-key": key };
    if (given) headers["x-request-id"] = given;
    const r = await fetch(s.url + "/v1/products/offers?asin=B07H57DNVV", { headers });
    await r.body?.cancel();
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("x-credits-cost"), "1");
    if (given) assert.equal(r.headers.get("x-request-id"), given);
    else assert.match(r.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/);
  }
  for (const bad of ["a".repeat(65), "has space", "semi;colon", "ünï", "a=b"]) {
    const got = await idOf("/v1/", bad);
    assert.notEqual(got, bad);
    assert.match(got ?? "", /^[A-Za-z0-9._-]{1,64}$/);
  }
  assert.match(
    await idOf("/admin/accounts", "big-body", { method: "POST", body: "x".repeat(100_000) }) ?? "",
    /^big-body$/,
    "413s too",
  );
});

Deno.test("X-Request-Id: an incoming id of exactly 64 characters is kept, one of 65 is replaced", async () => {
  await using s = await startServer();
  const { key } = await s.account("starter");
  // Not hex: a run of 48 hex digits is masked as a possible key and replaced whatever its length.
  const at = "req." + "xyz-_".repeat(12), over = at + "z";
  assert.equal(at.length, 64);
  for (const path of ["/v1/", "/v1/usage", "/healthz", "/v1/products/offers?asin=B07H57DNVV"]) {
    const send = async (id: string) => {
      const r = await fetch(s.url + path, { headers: { "x-api-key": key, "x-request-id": id } });
      await r.body?.cancel();
      assert.equal(r.status, 200, path);
      return r.headers.get("x-request-id");
    };
    assert.equal(await send(at), at, `${path}: 64 characters are kept`);
    const made = await send(over);
    assert.notEqual(made, over, `${path}: 65 characters are replaced`);
    assert.match(made ?? "", /^[0-9a-f-]{36}$/, path);
  }
});

Deno.test("the access log masks a key written percent-encoded, in a query value or a path", async () => {
  const lines: Record<string, unknown>[] = [];
  await using s = await startServer({ accessLog: (l) => void lines.push(l) });
  const { key } = await s.account("starter");
  // Probe BQ: `shelf%5flive%5f…` under a parameter name not on the secret list was logged whole.
  const encoded = key.replaceAll("_", "%5f");
  const split = key.slice(0, 20) + "%" + key.charCodeAt(20).toString(16) + key.slice(21);
  for (const path of [`/v1/usage?z=${encoded}`, `/v1/usage?z=${split}`, `/nowhere/${encoded}/x`]) {
    await (await fetch(`${s.url}${path}`)).body?.cancel();
  }
  const logged = lines.map((l) => String(l.path));
  assert.deepEqual(logged, ["/v1/usage?z=***", "/v1/usage?z=***", "/nowhere/***/x"]);
  assert.ok(!JSON.stringify(lines).includes(key.slice(11)));
});

Deno.test("the access log has one line per request, with credits and account, and never a key, password or session", async () => {
  const lines: Record<string, unknown>[] = [];
  await using s = await startServer({ accessLog: (l) => void lines.push(l), signup: "open" });
  const { id, key } = await s.account("starter");
  await (await s.get("/v1/products/offers?asin=B07H57DNVV", key)).body?.cancel();
  await (await fetch(`${s.url}/v1/products/offers?asin=B07H57DNVV&api_key=${key}`)).body?.cancel();
  await (await fetch(`${s.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).body
    ?.cancel();
  await (await fetch(`${s.url}/nowhere`)).body?.cancel();
  // The query parser decodes names: an encoded `api_key` authenticates, and is masked all the same.
  const encoded = await fetch(`${s.url}/v1/usage?x=1&api%5Fkey=${key}`);
  assert.equal(encoded.status, 200, "the encoded name authenticates");
  await encoded.body?.cancel();
  await (await fetch(`${s.url}/v1/products/offers?asin=${key}&%61pi_key=${key}`)).body?.cancel();
  const page = await fetch(`${s.url}/dashboard/signup`);
  const cookie = page.headers.getSetCookie()[0].split(";")[0];
  const csrf = /name="_csrf" value="([0-9a-f]+)"/.exec(await page.text())![1];
  const signup = await fetch(`${s.url}/dashboard/signup`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      _csrf: csrf,
      email: "log@example.com",
      password: "secret password 123",
    }),
  });
  await signup.body?.cancel();
  const session =
    signup.headers.getSetCookie().find((c) => c.startsWith("shelf_session="))!.split(";")[0].split(
      "=",
    )[1];

  assert.equal(lines.length, 8, JSON.stringify(lines));
  for (const l of lines) {
    for (
      const field of ["ts", "request_id", "method", "path", "status", "ms", "credits", "account"]
    ) assert.ok(field in l, field);
  }
  const [call, viaQuery, usage, missing] = lines;
  assert.deepEqual([call.status, call.credits, call.account, call.path], [
    200,
    1,
    id,
    "/v1/products/offers?asin=B07H57DNVV",
  ]);
  assert.equal(viaQuery.path, "/v1/products/offers?asin=B07H57DNVV&api_key=***");
  assert.deepEqual([usage.credits, usage.account], [0, id]);
  assert.deepEqual([missing.status, missing.account], [404, null]);
  assert.equal(lines[4].path, "/v1/usage?x=1&api%5Fkey=***");
  assert.equal(lines[5].path, "/v1/products/offers?asin=***&%61pi_key=***");
  const text = JSON.stringify(lines);
  for (const secret of [key, key.slice(11), "secret password 123", session, csrf]) {
    assert.ok(!text.includes(secret), "no secret in the log");
  }
});

Deno.test("a path of any length makes a bounded access-log line: cut at MAX_LOGGED_PATH, and said so", async () => {
  const lines: Record<string, unknown>[] = [];
  await using s = await startServer({ accessLog: (l) => void lines.push(l) });
  // Under MAX_URL (a longer URL is a 414 before any route), well over MAX_LOGGED_PATH.
  const long = "/" + "%01".repeat(5_000);
  const r = await fetch(`${s.url}${long}`);
  assert.equal(r.status, 404);
  await r.body?.cancel();
  const line = lines.find((l) => l.status === 404)!;
  assert.equal((line.path as string).length, MAX_LOGGED_PATH);
  assert.equal(line.path_truncated, true);
  assert.ok((line.path as string).startsWith("/%01%01"), "control characters in percent form");
  const bytes = (l: unknown) => new TextEncoder().encode(JSON.stringify(l)).length;
  // Written as JSON escapes (\u0001), the line was 6 bytes a character: 11.5 KB from 6 KB.
  assert.ok(bytes(line) < MAX_LOGGED_PATH + 512, `${bytes(line)} bytes`);
  // Characters of three UTF-8 bytes: the line is still smaller than the request's percent form.
  const wide = "/" + "%E4%B8%80".repeat(1_700);
  const w = await fetch(`${s.url}${wide}`);
  assert.equal(w.status, 404);
  await w.body?.cancel();
  assert.ok(bytes(lines.at(-1)) < 3 * MAX_LOGGED_PATH + 512, `${bytes(lines.at(-1))} bytes`);
  const short = await fetch(`${s.url}/nowhere`);
  await short.body?.cancel();
  assert.equal(lines.at(-1)!.path, "/nowhere");
  assert.equal(lines.at(-1)!.path_truncated, undefined);
});

Deno.test("the access-log cut never leaves part of a key, and Unicode line breaks are percent-encoded", async () => {
  const lines: Record<string, unknown>[] = [];
  await using s = await startServer({ accessLog: (l) => void lines.push(l) });
  const { key } = await s.account("starter");
  // Probe BT: a long secret-named value, then a key starting just past the cut: the key was cut
  // partial (so not masked), and masking the value pulled 47 of its 48 digits inside the cut.
  const pre = `/v1/usage?token=${"A".repeat(1_000)}&pad=`;
  const pad = "B".repeat(2_054 - pre.length - "&z=".length);
  await (await fetch(`${s.url}${pre}${pad}&z=${key}`)).body?.cancel();
  const line = lines.at(-1)!;
  assert.ok(!String(line.path).includes(key.slice(11, 31)), String(line.path).slice(-80));
  // Masked whole first, the path fits: both values are masked and nothing is cut.
  assert.ok(String(line.path).endsWith("&z=***"), String(line.path).slice(-80));
  // NEL and U+2028 split a line for readers that split on Unicode line breaks.
  await (await fetch(`${s.url}/nowhere/a%C2%85b%E2%80%A8c`)).body?.cancel();
  assert.equal(lines.at(-1)!.path, "/nowhere/a%C2%85b%E2%80%A8c");
});

Deno.test("maskSecrets masks a key however it is written: after #, without =, as a name, encoded twice", () => {
  const key = `shelf_test_${"3fa9".repeat(12)}`;
  const once = key.replaceAll("_", "%5f");
  const twice = key.replaceAll("_", "%255f");
  // Probe BU: each of these was logged with the key's digits in clear.
  for (
    const path of [
      `/v1/usage?x=1#&api_key=${once}`,
      `/v1/usage?${once}`,
      `/v1/usage?${once}=1`,
      `/v1/usage?z=${twice}`,
      `/v1/${twice}/x`,
    ]
  ) {
    const masked = maskSecrets(path);
    assert.ok(!masked.includes("3fa93fa9"), `${path} -> ${masked}`);
  }
  assert.equal(maskSecrets("/v1/usage?asin=B07H57DNVV&x=%"), "/v1/usage?asin=B07H57DNVV&x=%");
  // Probe BW: the 48 digits after a prefix no pattern knows, and an admin token percent-encoded.
  const hex = "3fa9".repeat(12);
  const split = (sep: string) => `shelf_live_${hex.slice(0, 24)}${sep}${hex.slice(24)}`;
  for (
    const garbled of [
      `shelf%u005Flive%u005F${hex}`,
      `shelf+live+${hex}`,
      split("%20"), // probe BY: a key split by a space, a control or a zero-width space
      split("%00"),
      split("%E2%80%8B"),
    ]
  ) {
    assert.ok(!maskSecrets(`/v1/usage?k=${garbled}`).includes("3fa93fa9"), garbled);
  }
  const token = "adm1n-token-for-the-log-test-0123";
  const masked = maskSecrets(`/admin/x?y=%61${token.slice(1)}`, [token]);
  assert.ok(!masked.includes(token.slice(1, 20)), masked);
  // Probe CM: a 64-hex token (`openssl rand -hex 32`) lost its first 48 digits to the key-digits
  // pattern, and then no longer matched whole: its last 16 were logged.
  const hexToken = "0123456789abcdef".repeat(4);
  for (const path of [`/admin/${hexToken}`, `/admin/x?y=${hexToken}`, `/${hexToken}/x`]) {
    const out = maskSecrets(path, [hexToken]);
    assert.ok(!out.includes(hexToken.slice(48)), `${path} -> ${out}`);
  }
});

Deno.test("an X-Request-Id or a method holding a key or the admin token is neither logged nor sent back", async () => {
  const lines: Record<string, unknown>[] = [];
  const token = "0123456789abcdef".repeat(4); // as `openssl rand -hex 32` makes one
  await using s = await startServer({ accessLog: (l) => void lines.push(l), adminToken: token });
  const { key } = await s.account("starter");
  const sentBack: (string | null)[] = [];
  for (const id of [key, token]) {
    const r = await fetch(`${s.url}/v1/usage`, {
      headers: { "x-api-key": key, "x-request-id": id },
    });
    await r.body?.cancel();
    assert.equal(r.status, 200);
    sentBack.push(r.headers.get("x-request-id"));
  }
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(s.url).port) });
  // The runtime takes any token as a method; the log showed its first 32 characters.
  await conn.write(new TextEncoder().encode(`${token} /v1/ HTTP/1.1\r\nHost: x\r\n\r\n`));
  await conn.read(new Uint8Array(4096));
  conn.close();
  await new Promise((r) => setTimeout(r, 100));
  const text = JSON.stringify(lines) + JSON.stringify(sentBack);
  for (const secret of [key.slice(11), token.slice(0, 16), token.slice(48)]) {
    assert.ok(!text.includes(secret), `${secret} in ${text}`);
  }
  for (const id of sentBack) assert.match(id ?? "", /^[0-9a-f-]{36}$/, "a new id instead");
  assert.equal(lines.length, 3);
});

Deno.test("a Host header holding ? does not put its text in the logged path", async () => {
  const lines: Record<string, unknown>[] = [];
  await using s = await startServer({ accessLog: (l) => void lines.push(l) });
  const { key } = await s.account("starter");
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(s.url).port) });
  await conn.write(
    new TextEncoder().encode(
      `GET /v1/usage HTTP/1.1\r\nHost: a?z=${key.replaceAll("_", "%5F")}\r\n\r\n`,
    ),
  );
  const buf = new Uint8Array(4096);
  await conn.read(buf);
  conn.close();
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(!JSON.stringify(lines).includes(key.slice(11, 27)), JSON.stringify(lines.at(-1)));
  assert.equal(lines.at(-1)!.path, "/v1/usage", "none of the Host's text as a query");
});

Deno.test("a URL far over the logged length is cut before masking, without a key the cut split", async () => {
  const lines: Record<string, unknown>[] = [];
  await using s = await startServer({ accessLog: (l) => void lines.push(l) });
  const { key } = await s.account("starter");
  // A secret-named value long enough to pull a key split by the first cut into the line shown.
  const pre = `/v1/usage?token=${"A".repeat(3_000)}&pad=`;
  const pad = "B".repeat(2 * MAX_LOGGED_PATH - 20 - pre.length - "&z=".length);
  await (await fetch(`${s.url}${pre}${pad}&z=${key}&more=1`)).body?.cancel();
  const line = lines.at(-1)!;
  assert.equal(line.path_truncated, true);
  assert.ok(
    !/[0-9a-f]{8}/.test(String(line.path).replace(/^[^&]*&pad=B*/, "")),
    String(line.path).slice(-60),
  );
});

Deno.test("/metrics: Prometheus text behind the admin token, with the INTERFACE.md names counting real calls", async () => {
  await using rig = await startRig({ adminToken: TOKEN });
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV")).status, 200);
  const denied = await fetch(`${rig.server.url}/metrics`);
  assert.equal(denied.status, 401);
  await denied.body?.cancel();
  const wrong = await fetch(`${rig.server.url}/metrics`, {
    headers: { authorization: "Bearer " + "x".repeat(TOKEN.length) },
  });
  assert.equal(wrong.status, 401);
  await wrong.body?.cancel();
  const r = await fetch(`${rig.server.url}/metrics`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  assert.equal(r.status, 200);
  assert.match(r.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  const text = await r.text();
  assert.match(
    text,
    /shelf_http_requests_total\{route="\/v1\/products\/details",status="200"\} [1-9]/,
  );
  assert.match(
    text,
    /shelf_http_request_duration_seconds_bucket\{le="[^"]+",route="\/v1\/products\/details"\}/,
  );
  assert.match(text, /shelf_credits_charged_total [1-9]/);
  assert.match(text, /shelf_upstream_requests_total\{marketplace="US",outcome="ok"\} [1-9]/);
  assert.match(
    text,
    /shelf_parse_fields_total\{page_type="product",marketplace="US",field="title",filled="true"\} [1-9]/,
  );
  assert.doesNotMatch(text, /B07H57DNVV/, "no ASIN (or other unbounded value) as a label");
  // The process itself: its memory, and (on Linux) its descriptors, connections among them.
  const rss = Number(/^process_resident_memory_bytes (\d+)$/m.exec(text)?.[1]);
  assert.ok(rss > 10 * 2 ** 20, `rss ${rss}`);
  const fds = Number(/^process_open_fds (\d+)$/m.exec(text)?.[1]);
  // Read a moment apart: connections may open or close between the two.
  const now = [...Deno.readDirSync("/proc/self/fd")].length;
  assert.ok(fds > 0 && Math.abs(fds - now) <= 10, `${fds} scraped, ${now} now`);
});

Deno.test("/admin/parser-health turns the field counts into fill rates per page type and marketplace", async () => {
  await using rig = await startRig({ adminToken: TOKEN });
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV")).status, 200);
  const r = await fetch(`${rig.server.url}/admin/parser-health`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  assert.equal(r.status, 200);
  const body = await r.json();
  const product = body.pages.find((p: { page_type: string; marketplace: string }) =>
    p.page_type === "product" && p.marketplace === "US"
  );
  assert.ok(product, JSON.stringify(body).slice(0, 300));
  const title = product.fields.find((f: { field: string }) => f.field === "title");
  assert.equal(title.last_hour.rate, 1);
  assert.equal(title.falling, false);
  const denied = await fetch(`${rig.server.url}/admin/parser-health`);
  assert.equal(denied.status, 401);
  await denied.body?.cancel();
});

Deno.test("/metrics: shelf_credits_charged_total counts credits, so a limit search of three pages adds three", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const { key } = await s.account("starter");
  const charged = async () => {
    const r = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(r.status, 200);
    // The process's counter: other tests' apps in this process may have counted before.
    const m = /^shelf_credits_charged_total (\d+)$/m.exec(await r.text());
    return m ? Number(m[1]) : 0;
  };
  const before = await charged();
  s.source.searchPages = 3; // the search fetches three upstream pages, one credit each
  const r = await s.get("/v1/products/search?query=ipad&limit=40", key);
  assert.equal(r.status, 200);
  await r.body?.cancel();
  assert.equal(r.headers.get("x-credits-cost"), "3");
  assert.equal(await charged() - before, 3);
  // A call of one credit adds one.
  const one = await s.get("/v1/products/offers?asin=B07H57DNVV", key);
  assert.equal(one.status, 200);
  await one.body?.cancel();
  assert.equal(one.headers.get("x-credits-cost"), "1");
  assert.equal(await charged() - before, 4);
});

Deno.test("/metrics: process_resident_memory_bytes is the resident set, not the JS heap", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const r = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(r.status, 200);
  const scraped = Number(/^process_resident_memory_bytes (\d+)$/m.exec(await r.text())?.[1]);
  // The server runs in this process: its memory is read here a moment later.
  const { rss, heapUsed } = Deno.memoryUsage();
  assert.ok(
    Math.abs(scraped - rss) < Math.abs(scraped - heapUsed),
    `scraped ${scraped}: nearer the rss ${rss} than the heap in use ${heapUsed}`,
  );
});

Deno.test("a second stop signal during the drain starts no second drain: one drain line, the call in flight answered, exit 0", async () => {
  await using fake = new FakeMarketplace();
  fake.page("https://www.amazon.com/dp/B0DRAIN2ND", "product/amazon.com__app-B07H57DNVV.html");
  const dir = await Deno.makeTempDir();
  const token = `drain-${crypto.randomUUID()}`;
  const shelf = await spawnShelf({
    KV_PATH: `${dir}/drain.kv`,
    UPSTREAM: fake.upstream,
    ADMIN_TOKEN: token,
    DRAIN_SECONDS: "10",
    RESULT_CACHE: "off",
  });
  try {
    const { key } = await createAccount(shelf.url, token, "growth");
    fake.delayMs = 2_500;
    const call = fetch(`${shelf.url}/v1/products/details?asin=B0DRAIN2ND`, {
      headers: { "x-api-key": key },
    }).then(async (r) => ({ status: r.status, body: await r.text() }));
    while (fake.pageRequests("/dp/") < 1) await new Promise((r) => setTimeout(r, 10));
    Deno.kill(shelf.pid, "SIGTERM");
    while (!/"event":"drain"/.test(shelf.logs())) await new Promise((r) => setTimeout(r, 10));
    const code = await shelf.stop("SIGINT");
    const answer = await call;
    const logs = shelf.logs();
    assert.equal(code, 0, logs);
    assert.equal(answer.status, 200, answer.body);
    assert.equal(logs.match(/"event":"drain"/g)?.length, 1, logs);
  } finally {
    await shelf.stop("SIGKILL").catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

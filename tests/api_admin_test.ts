import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { KEY_PATTERN } from "../metering/api_key.ts";

const TOKEN = "admin-secret-token";

async function admin(
  s: { url: string },
  method: string,
  path: string,
  body?: unknown,
  token = TOKEN,
) {
  const r = await fetch(s.url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

Deno.test("admin API: accounts and keys per INTERFACE.md, the key value shown once", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const created = await admin(s, "POST", "/admin/accounts", { email: "Dev@Example.com" });
  assert.equal(created.status, 201);
  assert.deepEqual(Object.keys(created.body).sort(), [
    "created_at",
    "email",
    "id",
    "plan",
    "plan_started_at",
    "status",
  ]);
  assert.equal(created.body.plan, "free");
  assert.equal(created.body.status, "active");
  const id = created.body.id;

  const key = await admin(s, "POST", `/admin/accounts/${id}/keys`, { mode: "test", name: "ci" });
  assert.equal(key.status, 201);
  assert.match(key.body.key, KEY_PATTERN);
  assert.match(key.body.key, /^shelf_test_/);
  assert.equal(key.body.last4, key.body.key.slice(-4));
  assert.ok(key.body.key.startsWith(key.body.prefix));

  const second = await admin(s, "POST", `/admin/accounts/${id}/keys`, {});
  assert.equal(second.status, 409, "the free plan has one key");
  assert.equal(second.body.error.code, "key_limit_reached");

  const before = await admin(s, "GET", `/admin/accounts/${id}/keys`);
  assert.equal(before.body.keys.length, 1);
  assert.equal(before.body.keys[0].last_used_at, null);
  assert.ok(!JSON.stringify(before.body).includes(key.body.key));

  const call = await fetch(`${s.url}/v1/products/offers?asin=B07H57DNVV`, {
    headers: { "x-api-key": key.body.key },
  });
  assert.equal(call.status, 200);
  await call.body?.cancel();
  const after = await admin(s, "GET", `/admin/accounts/${id}/keys`);
  assert.match(after.body.keys[0].last_used_at, /^\d{4}-/);

  const shown = await admin(s, "GET", `/admin/accounts/${id}`);
  assert.equal(shown.body.usage.requests_used, 1);

  const upgraded = await admin(s, "PATCH", `/admin/accounts/${id}`, { plan: "starter" });
  assert.equal(upgraded.body.plan, "starter");
  assert.equal((await admin(s, "POST", `/admin/accounts/${id}/keys`, {})).status, 201);

  const revoked = await admin(s, "DELETE", `/admin/keys/${key.body.id}`);
  assert.equal(revoked.body.status, "revoked");
  const refused = await fetch(`${s.url}/v1/products/offers?asin=B07H57DNVV`, {
    headers: { "x-api-key": key.body.key },
  });
  assert.equal(refused.status, 401);
  await refused.body?.cancel();
});

Deno.test("admin API refuses bad input with clear errors", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  assert.equal((await admin(s, "POST", "/admin/accounts", { email: "nope" })).status, 422);
  assert.equal(
    (await admin(s, "POST", "/admin/accounts", { email: "a@b.c", plan: "gold" })).status,
    422,
  );
  assert.equal((await admin(s, "POST", "/admin/accounts", { email: "a@b.c" })).status, 201);
  assert.equal((await admin(s, "POST", "/admin/accounts", { email: "A@b.c" })).status, 409);
  assert.equal((await admin(s, "GET", "/admin/accounts/acc_missing")).status, 404);
  assert.equal((await admin(s, "DELETE", "/admin/keys/key_missing")).status, 404);
  // Ids and emails too long for a store key name nothing: a 404 or an empty list, not a 503.
  const long = "x".repeat(3000);
  assert.equal((await admin(s, "GET", `/admin/accounts/${long}`)).status, 404);
  assert.equal((await admin(s, "PATCH", `/admin/accounts/${long}`, { plan: "free" })).status, 404);
  assert.equal((await admin(s, "POST", `/admin/accounts/${long}/keys`, {})).status, 404);
  assert.equal((await admin(s, "GET", `/admin/accounts/${long}/keys`)).status, 404);
  assert.equal((await admin(s, "DELETE", `/admin/keys/${long}`)).status, 404);
  const byEmail = await admin(s, "GET", `/admin/accounts?email=${long}@example.com`);
  assert.deepEqual([byEmail.status, byEmail.body.accounts], [200, []]);
  // Only a plain address, as a string: what a mail library would read as another address, a
  // list or an IP literal is refused, and so is anything but text.
  for (
    const email of [
      ["a@example.com"],
      "x<victim@example.com>",
      "list:victim@example.com;",
      "victim@example.com,root",
      "a@example.com(comment)",
      "<a@example.com",
      "nul\x01x@example.com",
      "a@[127.0.0.1]",
      "a@127.0.0.1",
      '"q"@example.com',
      "a..b@example.com",
      "a@-example.com",
      "ü@example.com",
      // Hosts of the operator's network, or a number a resolver reads as one (probe EV).
      "root@localhost",
      "postmaster@vm",
      "b@0xa9fea9fe",
      "a@1.2.3.0x4",
      "a@foo.localhost",
      "a@printer.local",
      "a@metadata.google.internal",
      "a@1.0.0.127.in-addr.arpa",
    ]
  ) {
    const r = await admin(s, "POST", "/admin/accounts", { email });
    assert.equal(r.status, 422, JSON.stringify(email));
  }
  const plain = await admin(s, "POST", "/admin/accounts", { email: "o'Neil+tag@mail.example.org" });
  assert.equal(plain.status, 201);
  const named = await admin(s, "POST", `/admin/accounts/${plain.body.id}/keys`, { name: { a: 1 } });
  assert.equal(named.status, 422, "a key name must be text");
  // A key name reaches the dashboard and the operator's terminal (the CLI prints it): no control
  // characters, not even DEL or a C1 CSI; a lone surrogate becomes U+FFFD.
  const ctl = await admin(s, "POST", `/admin/accounts/${plain.body.id}/keys`, {
    name: "ci\x1b[2J\x7f\x9b31m\ud800 key",
  });
  assert.equal(ctl.status, 201);
  assert.equal(ctl.body.name, "ci[2J31m\ufffd key");
  const bad = await fetch(s.url + "/admin/accounts", {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}` },
    body: "{",
  });
  assert.equal(bad.status, 400);
  await bad.body?.cancel();
  assert.equal((await admin(s, "GET", "/admin/accounts/x", undefined, "wrong")).status, 401);
});

Deno.test("admin API: a status other than active or inactive, the empty one too, is a 422 and changes nothing", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const { id } = (await admin(s, "POST", "/admin/accounts", { email: "status@example.com" })).body;
  for (const status of ["", " ", "Active", "suspended", null, 1]) {
    const r = await admin(s, "PATCH", `/admin/accounts/${id}`, { status });
    assert.equal(r.status, 422, JSON.stringify(status));
    assert.equal(r.body.error.code, "invalid_status", JSON.stringify(status));
    const shown = await admin(s, "GET", `/admin/accounts/${id}`);
    assert.equal(shown.body.status, "active", `unchanged after ${JSON.stringify(status)}`);
  }
  const listed = await admin(s, "GET", "/admin/accounts?email=status@example.com");
  assert.deepEqual(listed.body.accounts.map((a: { status: string }) => a.status), ["active"]);
  const off = await admin(s, "PATCH", `/admin/accounts/${id}`, { status: "inactive" });
  assert.deepEqual([off.status, off.body.status], [200, "inactive"]);
});

Deno.test("without ADMIN_TOKEN the admin API does not exist", async () => {
  await using s = await startServer();
  const r = await fetch(s.url + "/admin/accounts", { method: "POST", body: "{}" });
  assert.equal(r.status, 404);
  await r.body?.cancel();
});

Deno.test("no key value is stored in KV: only its digest, prefix and last four", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const { body } = await admin(s, "POST", "/admin/accounts", {
    email: "k@example.com",
    plan: "scale",
  });
  const values: string[] = [];
  for (let i = 0; i < 3; i++) {
    values.push((await admin(s, "POST", `/admin/accounts/${body.id}/keys`, {})).body.key);
  }
  for (const v of values) {
    const r = await fetch(`${s.url}/v1/usage?api_key=${v}`);
    await r.body?.cancel();
  }
  const dump: string[] = [];
  for await (const e of s.kv.list({ prefix: [] })) {
    dump.push(JSON.stringify(e.key) + JSON.stringify(e.value));
  }
  const all = dump.join("\n");
  for (const v of values) {
    assert.ok(!all.includes(v), "the key value is not in the store");
    assert.ok(!all.includes(v.slice(11)), "nor its random part");
  }
});

Deno.test("admin API: a body the client cuts short is a 400 in the error shape, not an unhandled error", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const port = Number(new URL(s.url).port);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const head = `POST /admin/accounts HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${TOKEN}\r\n` +
    "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n";
  await conn.write(new TextEncoder().encode(head + '{"email":"x'));
  await conn.closeWrite(); // 989 bytes promised are never sent
  const chunks: Uint8Array[] = [];
  const buf = new Uint8Array(4096);
  for (let n; (n = await conn.read(buf)) !== null;) chunks.push(buf.slice(0, n));
  conn.close();
  const answer = new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
  assert.match(answer, /^HTTP\/1\.1 400/);
  // As a chunked body cut short (routes/body_limit.ts), whichever route was reading it.
  assert.match(answer, /"code":"bad_request"/);
  assert.deepEqual(s.errors, [], "no unhandled error");
});

Deno.test("a chunked body the client cuts short is a 400 on every route that reads one, not an unhandled error", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const { key } = await s.account("growth");
  const port = Number(new URL(s.url).port);
  const json = "Content-Type: application/json";
  const form = "Content-Type: application/x-www-form-urlencoded";
  const cases: [string, string, string, RegExp][] = [
    [
      "/admin/accounts",
      `Authorization: Bearer ${TOKEN}\r\n${json}`,
      '{"email":"x',
      /"code":"bad_request"/,
    ],
    ["/v1/watches", `x-api-key: ${key}\r\n${json}`, '{"asin":"x', /"code":"bad_request"/],
    // A form, which the route reads (a JSON body it leaves unread: the form token is missing).
    ["/dashboard/signin", form, "email=a%40b.c&pass", /Form not received/],
  ];
  for (const [path, header, part, body] of cases) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    const head = `POST ${path} HTTP/1.1\r\nHost: a\r\n${header}\r\n` +
      "Transfer-Encoding: chunked\r\n\r\n";
    // A chunk of 0x40 bytes announced, fewer sent, and the client hangs up.
    await conn.write(new TextEncoder().encode(`${head}40\r\n${part}`));
    await conn.closeWrite();
    const chunks: number[] = [];
    const buf = new Uint8Array(4096);
    for (let n; (n = await conn.read(buf)) !== null;) chunks.push(...buf.subarray(0, n));
    conn.close();
    const answer = new TextDecoder().decode(new Uint8Array(chunks));
    assert.match(answer, /^HTTP\/1\.1 400/, path);
    assert.match(answer, body, path);
  }
  assert.deepEqual(s.errors, [], "no unhandled error");
});

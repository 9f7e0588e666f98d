/**
 * Every route that reads a body has a byte limit (issue 13.2): a form or JSON body over it is a
 * 413 (the spec's error shape on /admin and /v1, an HTML page on /dashboard), whether it comes
 * with a Content-Length or chunked, and the process keeps serving. The server runs as operators
 * run it, in a child process, so that a crash shows as a dead process rather than a dead test.
 */
import { report } from "./proof/figures.ts";
import assert from "node:assert/strict";
import { spawnShelf } from "./proof/shelf_process.ts";

const ADMIN_TOKEN = "body-limit-test-admin-token-0123456789";

function chunked(bytes: number, chunk = 1 << 20): ReadableStream<Uint8Array> {
  let sent = 0;
  const part = new TextEncoder().encode("a".repeat(chunk));
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return controller.close();
      controller.enqueue(part);
      sent += part.length;
    },
  });
}

Deno.test("a body over the limit is a 413 on the dashboard, /admin and /v1, and the server keeps serving", async () => {
  const dir = await Deno.makeTempDir();
  await using shelf = await spawnShelf({
    KV_PATH: `${dir}/shelf.kv`,
    UPSTREAM: "origin:http://127.0.0.1:9",
    ADMIN_TOKEN,
  });
  const big = "email=a%40b.c&password=" + "x".repeat(50 * 1024 * 1024);

  const signin = await fetch(`${shelf.url}/dashboard/signin`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: big,
  });
  assert.equal(signin.status, 413);
  assert.match(signin.headers.get("content-type") ?? "", /text\/html/);
  // A dashboard page like any other: framed by no one, no script (probe AG).
  assert.equal(signin.headers.get("x-frame-options"), "DENY");
  assert.match(signin.headers.get("content-security-policy") ?? "", /default-src/);
  assert.match(await signin.text(), /too large/i);

  const streamed = await fetch(`${shelf.url}/dashboard/signup`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: chunked(20 * 1024 * 1024),
    // @ts-ignore: Deno's fetch streams a request body with duplex "half"
    duplex: "half",
  });
  assert.equal(
    streamed.status,
    413,
    "a chunked body without Content-Length is cut at the limit too",
  );
  await streamed.body?.cancel();

  const admin = await fetch(`${shelf.url}/admin/accounts`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ email: "a@b.c", pad: "x".repeat(10 * 1024 * 1024) }),
  });
  assert.equal(admin.status, 413);
  const body = await admin.json();
  assert.deepEqual(Object.keys(body.error).sort(), ["code", "message", "status"]);
  assert.equal(body.error.status, 413);
  assert.equal(body.error.code, "payload_too_large");

  const v1 = await fetch(`${shelf.url}/v1/usage`, {
    method: "POST",
    body: "x".repeat(10 * 1024 * 1024),
  });
  assert.ok(v1.status === 413 || v1.status === 405, `a body on /v1 is refused, got ${v1.status}`);
  await v1.body?.cancel();

  // Under the limit, the same routes still work.
  const ok = await fetch(`${shelf.url}/admin/accounts`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ email: "small@example.com" }),
  });
  assert.equal(ok.status, 201);
  await ok.body?.cancel();
  const index = await fetch(`${shelf.url}/v1/`);
  assert.equal(index.status, 200, "still serving");
  await index.body?.cancel();
  assert.doesNotMatch(shelf.logs(), /panic|RUST_BACKTRACE/i);
  report("9. request bodies (unauthenticated crash)", {
    "50 MiB form to /dashboard/signin": signin.status,
    "20 MiB chunked form": streamed.status,
    "10 MiB JSON to /admin": admin.status,
    "process serving after": index.status,
  });
  await Deno.remove(dir, { recursive: true });
});

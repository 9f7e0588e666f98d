/**
 * Which paths /v1's methods and CORS apply to (routes/methods.ts, routes/one_layer.ts), which
 * preflights are answered, and two bounds of request bodies (routes/body_limit.ts): a refused
 * body's answer closes its connection, and a client's count of bodies being read stays right
 * when one of them ends. Raw HTTP/1.1 over TCP where a body must be left unfinished.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { FORM, heldForms } from "./unfinished_body.ts";

const APP = "https://app.example";

Deno.test("a path one level below a watch is a 404, not a 405 offering DELETE", async () => {
  await using s = await startServer();
  const { key } = await s.account("starter");
  for (const method of ["GET", "DELETE"]) {
    const r = await s.get("/v1/watches/wat_0000000000000000/extra", key, { method });
    assert.equal(r.status, 404, method);
    assert.equal(r.headers.get("allow"), null, method);
    assert.equal((await r.json()).error.code, "not_found", method);
  }
});

Deno.test("a preflight is answered only for a method /v1 takes, in whatever case it is named", async () => {
  await using s = await startServer({ corsOrigins: [APP] });
  const preflight = async (path: string, method: string) => {
    const r = await fetch(s.url + path, {
      method: "OPTIONS",
      headers: { origin: APP, "access-control-request-method": method },
    });
    await r.body?.cancel();
    return r;
  };
  for (const method of ["PUT", "PATCH"]) {
    const r = await preflight("/v1/usage", method);
    assert.equal(r.status, 405, `a ${method} preflight`);
    assert.equal(r.headers.get("allow"), "GET");
    assert.equal(r.headers.get("access-control-allow-methods"), null);
  }
  // Browsers upper-case the standard methods; another client need not.
  for (const method of ["delete", "Post", "get"]) {
    const r = await preflight("/v1/usage", method);
    assert.equal(r.status, 204, `a ${method} preflight`);
    assert.equal(r.headers.get("access-control-allow-origin"), APP);
  }
});

Deno.test("a path that only starts with /v1 gets no CORS headers and no preflight", async () => {
  await using s = await startServer({ corsOrigins: [APP] });
  for (const path of ["/v1x", "/v1x/usage", "/v1usage"]) {
    const get = await fetch(s.url + path, { headers: { origin: APP } });
    await get.body?.cancel();
    assert.equal(get.status, 404, path);
    assert.equal(get.headers.get("access-control-allow-origin"), null, path);
    const pre = await fetch(s.url + path, {
      method: "OPTIONS",
      headers: { origin: APP, "access-control-request-method": "GET" },
    });
    await pre.body?.cancel();
    assert.notEqual(pre.status, 204, `preflight of ${path}`);
    assert.equal(pre.headers.get("access-control-allow-origin"), null, `preflight of ${path}`);
  }
});

Deno.test("a body refused for its declared length is answered 413 with Connection: close", async () => {
  await using s = await startServer();
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(s.url).port) });
  // A server that never answered must not hang the test: the read then ends with the socket.
  const guard = setTimeout(() => conn.close(), 15_000);
  try {
    // Over the form limit (16 KiB), with only the first bytes sent: the rest is never read, so
    // the connection cannot serve another request.
    await conn.write(new TextEncoder().encode(
      "POST /dashboard/signin HTTP/1.1\r\nHost: a\r\n" + FORM +
        "\r\nContent-Length: 20000\r\n\r\nemail=a",
    ));
    const buf = new Uint8Array(65536);
    let text = "";
    while (!text.includes("\r\n\r\n")) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    const head = text.split("\r\n\r\n")[0].toLowerCase();
    assert.match(head, /^http\/1\.1 413 /, head);
    assert.match(head, /\r\nconnection: close(\r\n|$)/, head);
  } finally {
    clearTimeout(guard);
    try {
      conn.close();
    } catch { /* closed by the guard */ }
  }
});

Deno.test("when one of a client's bodies ends, the rest still count toward its share", async () => {
  const lines: Record<string, unknown>[] = [];
  await using s = await startServer({
    trustProxy: 1,
    bodyReading: { seconds: 30, max: 8, perClient: 2 },
    accessLog: (l) => lines.push(l),
  });
  // Bodies are held open for 30 s here.
  const { held, send } = heldForms(s.url, 1_000);
  try {
    for (const ip of ["10.0.0.1", "10.0.0.1", "10.0.0.2", "10.0.0.2"]) {
      assert.equal(await send(ip, false), null, ip);
    }
    // A hangs up one of its two; its body is cut short (logged as a 400 once it is released).
    held.shift()!.close();
    for (let i = 0; i < 200 && !lines.some((l) => l.status === 400); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(lines.some((l) => l.status === 400), "the hung-up body was released");
    // Four being read again, half of eight: from here a client reads at most two at once.
    assert.equal(await send("10.0.0.3", false), null, "C's first");
    assert.equal(await send("10.0.0.1", false), null, "A's second: it has one being read");
    assert.equal(await send("10.0.0.1", true), 429, "A's third, with two being read");
    assert.equal(held.length, 5);
  } finally {
    for (const u of held) u.close();
  }
});

/**
 * A large answer is handed to the server a chunk at a time (core/paced_body.ts), and one the client
 * takes nothing of for PACED_IDLE_MS lets go of its text: reading on meets the end short of the
 * answer's Content-Length, never a cut answer that looks whole (probe CW: 200 clients that never
 * read their 7 MB answers held 2.6 GB, with nothing to let go of them), and never a stack trace on
 * stderr (probe DD). Here the idle time is shortened.
 */
import assert from "node:assert/strict";
import { pacedBody, pacedResponse } from "../core/paced_body.ts";
import { startServer } from "./test_server.ts";

Deno.test("a paced body read steadily arrives whole; one not read for the idle time is ended", async () => {
  const bytes = new Uint8Array(300 * 1024).map((_, i) => i % 251);
  const steady = pacedBody(bytes, 200) as ReadableStream<Uint8Array>;
  const got = new Uint8Array(await new Response(steady).arrayBuffer());
  assert.deepEqual(got, bytes);

  const stalled = (pacedBody(bytes, 100) as ReadableStream<Uint8Array>).getReader();
  assert.equal((await stalled.read()).value?.length, 16 * 1024, "a first chunk");
  await new Promise((r) => setTimeout(r, 250)); // the client takes nothing more
  assert.equal((await stalled.read()).done, true, "it ends there");
});

Deno.test("over real HTTP, a client that stops reading a large answer for the idle time gets no more of it, and stderr stays empty", async () => {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", new URL("./paced_server.ts", import.meta.url).pathname, "300"],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    const port = Number((await lines.read()).value);
    const LENGTH = 4 * 1024 * 1024;
    for (let round = 0; round < 3; round++) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await conn.write(new TextEncoder().encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
      await new Promise((r) => setTimeout(r, 1_000)); // never read meanwhile: the server stalls
      // Reading now drains what the buffers held, then meets the end the server made.
      let total = 0;
      const buf = new Uint8Array(64 * 1024);
      const until = Date.now() + 3_000; // a connection still open then is no answer either
      let ended = false;
      while (Date.now() < until) {
        const n = await Promise.race([
          conn.read(buf).catch(() => null),
          new Promise<"wait">((r) => setTimeout(r, until - Date.now(), "wait")),
        ]);
        if (n === "wait") break;
        if (n === null) {
          ended = true;
          break;
        }
        total += n;
      }
      conn.close();
      assert.ok(ended, "the server ended the answer");
      assert.ok(total < LENGTH, `the whole answer (${total} bytes) was sent`);
    }
  } finally {
    await lines.cancel();
    child.kill();
    await child.status;
  }
  assert.equal(await stderr, "", "nothing a client can cause is written to stderr");
});

Deno.test("a paced answer carries its Content-Length, so that a cut one is known as cut (probe CX)", async () => {
  await using s = await startServer();
  for (const path of ["/openapi.json", "/docs/swagger-ui-bundle.js"]) {
    const r = await fetch(s.url + path);
    const body = new Uint8Array(await r.arrayBuffer());
    assert.ok(body.length > 64 * 1024, `${path} is paced`);
    assert.equal(r.headers.get("content-length"), String(body.length), path);
  }
  const small = pacedResponse(new Uint8Array(10), { "content-type": "text/plain" });
  assert.equal(
    small.headers.get("content-length"),
    null,
    "a small body is the server's to measure",
  );
});

/**
 * A paced body (core/paced_body.ts) as its reader sees it: the idle cut lets go of a client that
 * stopped reading, never of one that keeps taking chunks, however long the whole body takes; and
 * a text is paced by its size in bytes, so that an answer of three-byte characters is not held
 * whole for a client that does not read. The idle time is shortened here.
 */
import assert from "node:assert/strict";
import { PACED_FROM, pacedBody, pacedTextResponse } from "../core/paced_body.ts";

Deno.test("a reader taking a chunk every 150 ms gets the whole body, though the read lasts well past the idle time", async () => {
  const chunk = 16 * 1024;
  const bytes = new Uint8Array(18 * chunk).map((_, i) => i % 251);
  // Idle time 1 s; the reader waits 150 ms between takes, for about 2.7 s in all.
  const reader = (pacedBody(bytes, 1_000) as ReadableStream<Uint8Array>).getReader();
  const parts: Uint8Array[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    await new Promise((r) => setTimeout(r, 150));
  }
  const got = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    got.set(p, at);
    at += p.length;
  }
  assert.equal(got.length, bytes.length, `${parts.length} chunks taken before the body ended`);
  assert.deepEqual(got, bytes);
});

Deno.test("a text is paced by its bytes: 30,000 three-byte characters are a paced answer of 90,000 bytes", async () => {
  const text = "語".repeat(30_000); // 30,000 UTF-16 units, under PACED_FROM; 90,000 bytes, over it
  assert.ok(text.length < PACED_FROM && 3 * text.length > PACED_FROM);
  const paced = pacedTextResponse(text, { "content-type": "text/plain; charset=utf-8" });
  // A paced answer names its length (pacedResponse); one sent whole leaves that to the server.
  assert.equal(paced.headers.get("content-length"), "90000");
  assert.equal(await paced.text(), text);
  const small = pacedTextResponse("a".repeat(30_000), {});
  assert.equal(small.headers.get("content-length"), null, "30,000 bytes go as they are");
  await small.body?.cancel();
});

/**
 * readCapped() (upstream/read_capped.ts) joins a body's chunks into one buffer grown in place, up
 * to the cap on its decoded size: the bytes arrive whole and in order, a body of exactly the cap
 * is read, and one byte more is refused as BodyTooLarge with the stream cancelled.
 */
import assert from "node:assert/strict";
import { BodyTooLarge, readCapped } from "../upstream/read_capped.ts";

function streamOf(sizes: number[]): { body: ReadableStream<Uint8Array>; cancelled: () => boolean } {
  let i = 0;
  let byte = 0;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (i === sizes.length) return c.close();
      const chunk = new Uint8Array(sizes[i++]);
      for (let k = 0; k < chunk.length; k++) chunk[k] = byte++ & 0xff;
      c.enqueue(chunk);
    },
    cancel() {
      cancelled = true;
    },
  });
  return { body, cancelled: () => cancelled };
}

/** Where `bytes` first differs from the streams' byte sequence 0, 1, …, 255, 0, …; -1 if nowhere. */
function firstWrongByte(bytes: Uint8Array): number {
  return bytes.findIndex((b, k) => b !== (k & 0xff));
}

Deno.test("readCapped() returns every chunk's bytes, whole and in order", async () => {
  const sizes = [1, 65_536, 3, 100_000, 0, 7];
  const total = sizes.reduce((a, b) => a + b, 0);
  const out = await readCapped(streamOf(sizes).body);
  assert.equal(out.length, total);
  assert.equal(firstWrongByte(out), -1);
  assert.deepEqual(await readCapped(null), new Uint8Array(0));
  assert.deepEqual(await readCapped(streamOf([]).body), new Uint8Array(0));
});

Deno.test("readCapped() reads a body of exactly the cap and refuses one byte more, cancelling the stream", async () => {
  const cap = 1000;
  const full = await readCapped(streamOf([400, 600]).body, cap);
  assert.equal(full.length, cap);
  assert.equal(firstWrongByte(full), -1);
  const over = streamOf([400, 600, 1]);
  await assert.rejects(readCapped(over.body, cap), BodyTooLarge);
  assert.ok(over.cancelled(), "the rest of the body is not read");
  await assert.rejects(readCapped(streamOf([cap + 1]).body, cap), BodyTooLarge);
});

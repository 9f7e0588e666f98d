/**
 * readCapped() (upstream/read_capped.ts) joins a body's chunks into one buffer grown in place, up
 * to the cap on its decoded size: the bytes arrive whole and in order, a body of exactly the cap
 * is read, and one byte more is refused as BodyTooLarge with the stream cancelled.
 */
import assert from "node:assert/strict";
import { BodyTooLarge, ByteBudget, ReadBudgetSpent, readCapped } from "../upstream/read_capped.ts";

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

/** A body that sends `size` bytes, then waits until released before it ends. */
function heldStream(size: number): { body: ReadableStream<Uint8Array>; release: () => void } {
  let release = () => {};
  const held = new Promise<void>((r) => release = r);
  let sent = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      if (sent) {
        await held;
        return c.close();
      }
      sent = true;
      c.enqueue(new Uint8Array(size));
    },
  });
  return { body, release };
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

Deno.test("reads in flight share one budget of bytes: past it a read is refused 503 upstream_busy, and what a read took is given back when it ends", async () => {
  const budget = new ByteBudget(1_000, 1_000);
  const { body: slow, release } = heldStream(600);
  const first = readCapped(slow, 10_000, "", budget);
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(budget.used, 600);
  const second = streamOf([300, 300]);
  await assert.rejects(readCapped(second.body, 10_000, "", budget), (e: unknown) => {
    assert.ok(e instanceof ReadBudgetSpent);
    assert.equal(e.status, 503);
    assert.equal(e.code, "upstream_busy");
    return true;
  });
  assert.ok(second.cancelled(), "the refused body is not read on");
  assert.equal(budget.used, 600, "the refused read gave back what it took");
  release();
  assert.equal((await first).length, 600);
  assert.equal(budget.used, 0);
  assert.equal((await readCapped(streamOf([300, 300]).body, 10_000, "", budget)).length, 600);
  await assert.rejects(readCapped(streamOf([2_000]).body, 10_000, "", budget), ReadBudgetSpent);
  assert.equal(budget.used, 0);
});

Deno.test("past half the budget, one account's reads hold at most its share: another account's read goes on", async () => {
  const budget = new ByteBudget(1_000, 500);
  await assert.rejects(readCapped(streamOf([300, 300]).body, 10_000, "a", budget), ReadBudgetSpent);
  const { body: slow, release } = heldStream(400);
  const a = readCapped(slow, 10_000, "a", budget);
  await new Promise((r) => setTimeout(r, 20));
  await assert.rejects(readCapped(streamOf([200]).body, 10_000, "a", budget), ReadBudgetSpent);
  assert.equal((await readCapped(streamOf([300]).body, 10_000, "b", budget)).length, 300);
  release();
  await a;
  assert.equal(budget.used, 0);
  // Under half the budget, an account takes more than its share: nobody else is short.
  const roomy = new ByteBudget(1_000, 100);
  assert.equal((await readCapped(streamOf([300, 200]).body, 10_000, "a", roomy)).length, 500);
});

Deno.test("an account whose share is spent is told before its request is sent", async () => {
  const budget = new ByteBudget(1_000, 250);
  const a = heldStream(400);
  const reading = readCapped(a.body, 10_000, "a", budget);
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(budget.spent("a"), false, "under half, a may read on");
  const b = heldStream(200);
  const other = readCapped(b.body, 10_000, "b", budget);
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(budget.spent("a"), true, "past half, a holds more than its share");
  assert.equal(budget.spent("c"), false);
  a.release();
  b.release();
  await Promise.all([reading, other]);
  assert.equal(budget.spent("a"), false);
});

Deno.test("the last quarter of the budget is kept for accounts holding at most one page: three accounts with pages at the cap cannot shut out a fourth", () => {
  // 1,000 bytes, a page is 62: big readers stop at 750, a small one may use the rest.
  const budget = new ByteBudget(1_000, 250);
  assert.ok(budget.take(500, "a"), "under half, a takes what it needs");
  assert.ok(budget.take(250, "b"), "past half, b within its share");
  assert.equal(budget.take(100, "c"), false, "c would eat into the reserve");
  assert.equal(budget.spent("c"), false, "c may still start a read of one page");
  assert.ok(budget.take(60, "d"), "d reads one page from the reserve");
  assert.equal(budget.take(5, "a"), false);
  assert.ok(budget.take(60, "e"));
  assert.equal(budget.take(200, "f"), false, "over the bound");
});

Deno.test("readCapped() reads a byte stream (a fetch body) into its own buffer, asking for no chunk to be made", async () => {
  const total = 300_000;
  let sent = 0;
  let ownBuffers = 0;
  let made = 0;
  const body = new ReadableStream({
    type: "bytes",
    pull(c) {
      if (sent === total) {
        c.close();
        c.byobRequest?.respond(0);
        return;
      }
      const request = c.byobRequest;
      const view = request?.view;
      const n = Math.min(view?.byteLength ?? 20_000, total - sent);
      const target = view ? new Uint8Array(view.buffer, view.byteOffset, n) : new Uint8Array(n);
      for (let k = 0; k < n; k++) target[k] = (sent + k) & 0xff;
      sent += n;
      if (request) {
        ownBuffers++;
        request.respond(n);
      } else {
        made++;
        c.enqueue(target);
      }
    },
  });
  const bytes = await readCapped(body as ReadableStream<Uint8Array>);
  assert.equal(bytes.length, total);
  assert.ok(bytes.every((b, i) => b === (i & 0xff)));
  // Each read hands the stream the reader's buffer: a default reader would make the stream
  // allocate a chunk for every read (Deno's fetch bodies: 64 KiB each, collected later).
  assert.equal(made, 0);
  assert.ok(ownBuffers >= Math.ceil(total / (64 * 1024)), `${ownBuffers} reads`);
});

Deno.test("readCapped() refuses a byte stream past the cap, and cancels it", async () => {
  let cancelled = false;
  const body = new ReadableStream({
    type: "bytes",
    pull(c) {
      const request = c.byobRequest!;
      request.respond(request.view!.byteLength);
    },
    cancel() {
      cancelled = true;
    },
  });
  await assert.rejects(readCapped(body as ReadableStream<Uint8Array>, 200_000), BodyTooLarge);
  assert.ok(cancelled);
});

Deno.test("by default one account holds at most a quarter of the budget once past half: its next read is refused, another account's goes on", () => {
  // 1,000 bytes: the default share is 250, a page 62, the reserve the last 250.
  const budget = new ByteBudget(1_000);
  assert.ok(budget.take(400, "a"), "under half, a takes what it needs");
  assert.ok(budget.take(200, "b"), "past half, b within a quarter");
  assert.equal(budget.spent("a"), true, "a holds 400, over a quarter");
  assert.equal(budget.take(50, "a"), false, "a may not reach 450 of 1,000 past half");
  assert.ok(budget.take(40, "b"), "b still within its quarter");
  assert.equal(budget.used, 640);
});

Deno.test("a budget exactly full is spent for every account, even one holding nothing", () => {
  // Twenty accounts of one small page each fill 1,000 bytes exactly, the reserve included.
  const budget = new ByteBudget(1_000);
  for (let i = 0; i < 20; i++) assert.ok(budget.take(50, `acc${i}`), `acc${i}`);
  assert.equal(budget.used, 1_000);
  assert.equal(budget.spent("new"), true, "no byte is left: a read would be refused at once");
  assert.equal(budget.spent("acc0"), true);
  budget.give(1, "acc0");
  assert.equal(budget.spent("new"), false, "one byte free: a read may start");
});

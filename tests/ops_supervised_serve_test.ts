/**
 * core/supervised_serve.ts driven directly, with Deno.serve replaced by a stand-in whose listener
 * fails at once after listening (as EMFILE ends a real one): the back-off between restarts
 * doubles from 0.1 s but never passes 5 s, however many failures come in a row (else an EMFILE
 * storm of 15 failures kept the service down for most of an hour); and a shutdown ends a restart
 * still waiting, so a stopped server never listens again nor holds the process open.
 */
import assert from "node:assert/strict";
import { supervisedServe } from "../core/supervised_serve.ts";

/** The documented longest wait between restarts (MAX_DELAY_MS). */
const MAX_DELAY_MS = 5_000;

/**
 * Replaces Deno.serve while `body` runs: each server listens, then its listener fails at once.
 * `listens` counts the servers started.
 */
async function withFailingServe(body: (counter: { listens: number }) => Promise<void>) {
  const real = Deno.serve;
  const counter = { listens: 0 };
  const fake = (options: Deno.ServeTcpOptions, _handler: unknown) => {
    counter.listens++;
    options.onListen?.({ transport: "tcp", hostname: "127.0.0.1", port: 8000 });
    const finished = Promise.reject(new Error("accept: Too many open files (os error 24)"));
    return { finished, shutdown: () => Promise.resolve() } as unknown as Deno.HttpServer;
  };
  (Deno as { serve: unknown }).serve = fake;
  try {
    await body(counter);
  } finally {
    (Deno as { serve: unknown }).serve = real;
  }
}

Deno.test("supervised serve: the wait between restarts doubles but is capped at 5 s", async () => {
  // The waits themselves are cut to 0 ms (the delays are recorded as the server reports them).
  const realSetTimeout = globalThis.setTimeout;
  const waits: number[] = [];
  let allDone!: () => void;
  const done = new Promise<void>((r) => (allDone = r));
  await withFailingServe(async () => {
    (globalThis as { setTimeout: unknown }).setTimeout = (fn: () => void, _ms?: number) =>
      realSetTimeout(fn, 0);
    let server: ReturnType<typeof supervisedServe> | undefined;
    try {
      server = supervisedServe({ port: 8000, hostname: "127.0.0.1" }, () => new Response(), {
        listening() {},
        failed(_e, retryMs) {
          waits.push(retryMs);
          if (waits.length === 12) allDone();
        },
      });
      await server.ready;
      await done;
    } finally {
      (globalThis as { setTimeout: unknown }).setTimeout = realSetTimeout;
      await server?.shutdown();
    }
  });
  assert.deepEqual(waits.slice(0, 6), [100, 200, 400, 800, 1600, 3200]);
  assert.ok(
    waits.every((w) => w <= MAX_DELAY_MS),
    `every wait at most ${MAX_DELAY_MS} ms: ${waits.join(", ")}`,
  );
  assert.equal(waits.at(-1), MAX_DELAY_MS);
});

Deno.test("supervised serve: a shutdown ends a pending restart (no timer left to listen again)", async () => {
  // Timers are tracked: a restart still pending after the shutdown would hold a stopping process
  // open until it fires.
  const realSetTimeout = globalThis.setTimeout;
  const realClearTimeout = globalThis.clearTimeout;
  type Timer = ReturnType<typeof setTimeout>;
  const pending = new Set<Timer>();
  await withFailingServe(async (counter) => {
    (globalThis as { setTimeout: unknown }).setTimeout = (fn: () => void, ms?: number) => {
      const id: Timer = realSetTimeout(() => {
        pending.delete(id);
        fn();
      }, ms);
      pending.add(id);
      return id;
    };
    (globalThis as { clearTimeout: unknown }).clearTimeout = (id?: Timer) => {
      if (id !== undefined) pending.delete(id);
      realClearTimeout(id);
    };
    try {
      const failures: number[] = [];
      let failed!: () => void;
      const firstFailure = new Promise<void>((r) => (failed = r));
      const server = supervisedServe({ port: 8000, hostname: "127.0.0.1" }, () => new Response(), {
        listening() {},
        failed(_e, retryMs) {
          failures.push(retryMs);
          failed();
        },
      });
      await server.ready;
      await firstFailure; // a restart is now due in 100 ms
      assert.deepEqual(failures, [100]);
      assert.equal(pending.size, 1, "the restart is pending");
      await server.shutdown();
      const left = pending.size;
      for (const id of pending) realClearTimeout(id); // so a failure here leaks nothing
      assert.equal(left, 0, "no restart pending after the shutdown");
      assert.equal(counter.listens, 1, "no listener after the shutdown");
    } finally {
      (globalThis as { setTimeout: unknown }).setTimeout = realSetTimeout;
      (globalThis as { clearTimeout: unknown }).clearTimeout = realClearTimeout;
    }
  });
});

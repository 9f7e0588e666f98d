/**
 * The page-worker pool's contract with its callers (upstream/page_pool.ts), at the pool itself:
 * what a caller is answered when it gives up, hands a body twice, or is caught by a shutdown;
 * that the waiting count and bytes a job takes are given back; the default bounds README states
 * (64 waiting jobs per worker, 10 s per job); that PARSE_WORKERS=0 starts no worker; and that a
 * replacement worker is not started while descriptors are short. page_workers_test.ts covers the
 * pool through a server; these are the answers its tests did not pin (probe HU). The worker is
 * tests/page_worker_faulty.ts, the real one with triggers for a crash, a hang and slow parses.
 */
import assert from "node:assert/strict";
import { ApiError } from "../core/api_error.ts";
import { inlineReader, PagePool, pageReaderFor } from "../upstream/page_pool.ts";
import { handClock, realClearTimeout, realSetTimeout } from "./hand_clock.ts";

const FAULTY = new URL("./page_worker_faulty.ts", import.meta.url);

const job = (url: string) => ({
  parser: "product" as const,
  url,
  marketplace: "US",
  status: 200,
  contentType: "text/html",
  wantLocation: false,
});
const PAGE = "<html><body>page</body></html>";
const body = () => new TextEncoder().encode(PAGE);
const PLAIN = "https://www.amazon.com/dp/B000000001";

/** Taken before any test replaces it, so the tests' own waits always run on real time. */
const wait = (ms: number) => new Promise<void>((r) => realSetTimeout(r, ms));

/** Polls `cond` until it holds or `ms` pass; whether it held. */
async function until(cond: () => boolean, ms = 5_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) return false;
    await wait(5);
  }
  return true;
}

type Settled<T> = { s: "ok"; v: T } | { s: "err"; e: unknown } | { s: "pending" };

/** How `p` has settled once `ms` have passed at most (a bound only a broken pool waits out). */
async function settledWithin<T>(p: Promise<T>, ms: number): Promise<Settled<T>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p.then((v): Settled<T> => ({ s: "ok", v }), (e): Settled<T> => ({ s: "err", e })),
      new Promise<Settled<T>>((r) => timer = realSetTimeout(() => r({ s: "pending" }), ms)),
    ]);
  } finally {
    realClearTimeout(timer);
  }
}

function apiError(r: Settled<unknown>): ApiError {
  assert.equal(r.s, "err", `settled: ${r.s}`);
  const e = (r as { e: unknown }).e;
  assert.ok(e instanceof ApiError, String(e));
  return e;
}

Deno.test("reads one after another never fill the queue: each gives back its place and its bytes", async () => {
  // Six bodies of 300 bytes through a budget of 1,000: only a budget that gets its bytes back
  // takes them all.
  const pool = new PagePool({
    size: 1,
    workerUrl: FAULTY,
    queueLimit: 2,
    ownerLimit: 10,
    waitingBytes: 1_000,
  });
  try {
    for (let i = 0; i < 6; i++) {
      const out = await pool.read(job(PLAIN), new Uint8Array(300), undefined, "acc_a");
      assert.ok(out, `read ${i + 1}`);
    }
    assert.equal(pool.queued, 0);
  } finally {
    pool.close();
  }
});

Deno.test("a caller that gives up after its page reached a worker still gets the page's outcome", async () => {
  // Only a job still waiting leaves the queue on abort; one at a worker runs to its end.
  const pool = new PagePool({ size: 1, workerUrl: FAULTY });
  try {
    await pool.read(job(PLAIN), body()); // the worker has loaded
    const caller = new AbortController();
    const read = pool.read(job("https://www.amazon.com/dp/PAUSE00001"), body(), caller.signal);
    assert.ok(await until(() => pool.queued === 0), "the job reached the worker");
    caller.abort(new Error("the call's deadline passed"));
    const r = await settledWithin(read, 5_000);
    assert.equal(r.s, "ok", JSON.stringify(r));
  } finally {
    pool.close();
  }
});

Deno.test("a caller that has already given up gets its own reason, even when the queue is full", async () => {
  const pool = new PagePool({ size: 1, workerUrl: FAULTY, queueLimit: 1, ownerLimit: 10 });
  try {
    await pool.read(job(PLAIN), body());
    const atWorker = pool.read(job("https://www.amazon.com/dp/PAUSE00001"), body(), undefined, "a");
    atWorker.catch(() => {});
    assert.ok(await until(() => pool.queued === 0), "the first job reached the worker");
    const waiting = pool.read(job(PLAIN), body(), undefined, "b"); // the one place in the queue
    waiting.catch(() => {});
    const caller = new AbortController();
    caller.abort(new Error("the call's deadline passed"));
    await assert.rejects(
      pool.read(job(PLAIN), body(), caller.signal, "c"),
      /deadline passed/,
      "not a 503 upstream_busy for a call that has had its answer",
    );
    await Promise.all([atWorker, waiting]);
  } finally {
    pool.close();
  }
});

Deno.test("a view of part of a buffer is copied to the worker: the caller's buffer stays whole", async () => {
  const pool = new PagePool({ size: 1, workerUrl: FAULTY });
  try {
    const html = new TextEncoder().encode(PAGE);
    const buffer = new ArrayBuffer(64);
    new Uint8Array(buffer).set(html);
    new Uint8Array(buffer).fill(0x7a, html.length); // bytes that are not the page's
    const out = await pool.read(job(PLAIN), new Uint8Array(buffer, 0, html.length));
    assert.ok(out);
    assert.equal(buffer.detached, false, "the caller's buffer was not transferred");
    assert.deepEqual(new Uint8Array(buffer, 0, html.length), html);
  } finally {
    pool.close();
  }
});

Deno.test("by default the queue holds 64 waiting jobs per worker: two workers take 128, the 129th is refused", async () => {
  const pool = new PagePool({ size: 2, workerUrl: FAULTY, ownerLimit: 10_000 });
  try {
    // Issued in one go, all are counted as waiting before any reaches a worker.
    const reads = Array.from(
      { length: 129 },
      (_, i) => pool.read(job(PLAIN), body(), undefined, `acc_${i}`),
    );
    const settled = await Promise.allSettled(reads);
    const refused = settled.flatMap((r, i) => r.status === "rejected" ? [i] : []);
    assert.deepEqual(refused, [128], "only the 129th is refused");
    const e = (settled[128] as PromiseRejectedResult).reason;
    assert.ok(e instanceof ApiError);
    assert.equal(e.status, 503);
    assert.equal(e.code, "upstream_busy");
  } finally {
    pool.close();
  }
});

Deno.test("PARSE_WORKERS=0 reads inline: no pool and no worker thread", async () => {
  const reader = pageReaderFor(0);
  try {
    assert.equal(reader.workers, 0);
    assert.equal(reader, inlineReader);
    assert.ok(await reader.read(job(PLAIN), body()));
  } finally {
    reader.close();
  }
});

Deno.test("a shutdown answers a page at a worker with 503 unavailable, so its caller is not left waiting", async () => {
  const pool = new PagePool({ size: 1, workerUrl: FAULTY });
  try {
    await pool.read(job(PLAIN), body());
    const read = pool.read(job("https://www.amazon.com/dp/PAUSE00001"), body());
    assert.ok(await until(() => pool.queued === 0), "the job reached the worker");
    pool.close();
    const e = apiError(await settledWithin(read, 2_000));
    assert.equal(e.status, 503);
    assert.equal(e.code, "unavailable");
  } finally {
    pool.close(); // a second close does nothing
  }
});

Deno.test("a shutdown answers a page waiting for a draining worker with 503 unavailable", async () => {
  // The timed-out SLOW parse keeps its thread busy for 3 s: the slot drains, and the next page
  // waits in the pool's own queue for it (timeoutMs 1 s, as page_workers_test.ts gives reasons).
  const pool = new PagePool({ size: 1, workerUrl: FAULTY, timeoutMs: 1_000, drainMs: 10_000 });
  try {
    await pool.read(job(PLAIN), body());
    await assert.rejects(
      pool.read(job("https://www.amazon.com/dp/B0SLOW0000"), body()),
      /longer than 1000 ms/,
    );
    assert.equal(pool.draining, 1, "the old thread still reads its page");
    const read = pool.read(job(PLAIN), body());
    await wait(50);
    assert.equal(pool.queued, 1);
    pool.close();
    const e = apiError(await settledWithin(read, 2_000));
    assert.equal(e.status, 503);
    assert.equal(e.code, "unavailable");
  } finally {
    pool.close(); // a second close does nothing
  }
});

Deno.test("a body already handed to a worker is refused at once with a 502, not after waiting its turn", async () => {
  // The second read of `page` is decided before the shutdown that follows it at once: waiting
  // for its turn behind the job that holds the buffer, it would meet the shutdown (503) instead.
  const pool = new PagePool({ size: 1, workerUrl: FAULTY });
  try {
    await pool.read(job(PLAIN), body());
    const page = body();
    const first = pool.read(job("https://www.amazon.com/dp/PAUSE00001"), page);
    first.catch(() => {});
    assert.ok(await until(() => pool.queued === 0), "the first job took the buffer to the worker");
    const second = pool.read(job(PLAIN), page);
    second.catch(() => {});
    pool.close();
    const e = apiError(await settledWithin(second, 2_000));
    assert.equal(e.status, 502);
    assert.equal(e.code, "upstream_error");
  } finally {
    pool.close(); // a second close does nothing
  }
});

Deno.test("by default a page job is given 10 s: still waited for at 9.999 s, failed with a 502 at 10 s", async () => {
  // The job's deadline runs on a clock moved by hand; the SLOW page (3 s of real parse) is still
  // at the worker when the clock reaches it.
  const pool = new PagePool({ size: 1, workerUrl: FAULTY, drainMs: 100 });
  try {
    await pool.read(job(PLAIN), body());
    let read: Promise<unknown>;
    {
      using clock = handClock();
      read = pool.read(job("https://www.amazon.com/dp/B0SLOW0000"), body());
      read.catch(() => {});
      assert.ok(await until(() => clock.pending === 1), "the job's deadline is set");
      clock.advance(9_999);
      assert.equal((await settledWithin(read, 50)).s, "pending");
      clock.advance(1);
    }
    const e = apiError(await settledWithin(read, 1_000));
    assert.equal(e.status, 502);
    assert.match(e.message, /longer than 10000 ms/);
  } finally {
    pool.close();
  }
});

/** Runs `code` as a module in a child process limited to `files` descriptors (killed after 30 s). */
async function childWithFileLimit(code: string, files: number) {
  const child = new Deno.Command("sh", {
    args: ["-c", `ulimit -n ${files} && exec "$@"`, "sh", Deno.execPath(), "eval", code],
    cwd: new URL("..", import.meta.url).pathname,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = realSetTimeout(() => child.kill("SIGKILL"), 30_000);
  try {
    const out = await child.output();
    const text = new TextDecoder();
    return { ...out, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
  } finally {
    realClearTimeout(timer);
  }
}

Deno.test("a crashed worker is not replaced while descriptors are short: its next page waits, the process lives, and the page is read once they are free", async () => {
  // Deno cannot start a worker's thread without a few descriptors, and panics: the process ends.
  // The child holds all but FREE of its 256, fewer than the 16 the pool wants to spare (with
  // none left at all, Deno itself panicked now and then elsewhere, for a signal handler).
  const code = `
    import { PagePool } from ${
    JSON.stringify(new URL("../upstream/page_pool.ts", import.meta.url))
  };
    const FREE = 4;
    const job = (url) => ({ parser: "product", url, marketplace: "US", status: 200,
      contentType: "text/html", wantLocation: false });
    const body = () => new TextEncoder().encode(${JSON.stringify(PAGE)});
    const pool = new PagePool({ size: 1, workerUrl: new URL(${JSON.stringify(FAULTY.href)}) });
    await pool.read(job(${JSON.stringify(PLAIN)}), body());
    const held = [];
    try { for (;;) held.push(Deno.openSync("/dev/null")); } catch { /* none left */ }
    for (let i = 0; i < FREE; i++) held.pop().close();
    const crashed = await pool.read(job("https://www.amazon.com/dp/B0CRASH000"), body())
      .then(() => "read", (e) => e.status);
    const next = pool.read(job(${JSON.stringify(PLAIN)}), body());
    await new Promise((r) => setTimeout(r, 300));
    const waited = pool.queued;
    for (const f of held) f.close();
    const read = await next.then((o) => Boolean(o), (e) => String(e));
    console.log(JSON.stringify({ held: held.length, crashed, waited, read, replaced: pool.replaced }));
    pool.close();
  `;
  const out = await childWithFileLimit(code, 256);
  assert.equal(out.code, 0, `the child lives: ${out.stderr.slice(-2_000)}`);
  const got = JSON.parse(out.stdout.trim());
  assert.ok(got.held > 0, "the child held descriptors");
  assert.equal(got.crashed, 502);
  assert.equal(got.waited, 1, "the next page waited for descriptors, no worker started");
  assert.equal(got.read, true);
  assert.equal(got.replaced, 1);
  assert.doesNotMatch(out.stderr, /panicked/);
});

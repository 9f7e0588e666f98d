/**
 * Page work on Web Workers (issue 15.1, PARSE_WORKERS): the same answers as inline reading, a
 * robot check still retried and a postcode still checked from the worker's reading; a worker
 * that crashes or hangs fails only its call, uncharged, and is replaced; a full queue refuses at
 * once with 503 `upstream_busy`, uncharged. Real server, real browser transport, real fake
 * marketplace serving corpus pages; the crash and hang come from tests/page_worker_faulty.ts,
 * the real worker with two triggers added.
 */
import assert from "node:assert/strict";
import { type Rig, startRig } from "./upstream_harness.ts";
import { PagePool } from "../upstream/page_pool.ts";
import { loadConfig } from "../config.ts";
import { fixtureBytes } from "./fixture.ts";

const FAULTY = new URL("./page_worker_faulty.ts", import.meta.url);
const PRODUCT = "product/amazon.com__app-B07H57DNVV.html";

function pages(rig: Rig, ...asins: string[]): void {
  for (const asin of asins) rig.fake.page(`https://www.amazon.com/dp/${asin}`, PRODUCT);
  rig.fake.page(
    "https://www.amazon.de/s?k=katzenfutter",
    "search/amazon.de__parsy-katzenfutter.html",
  );
  rig.fake.page(
    "https://www.amazon.com/product-reviews/B0BBPNPZTC",
    "reviews/amazon.com__metaagent-dawn-B0BBPNPZTC.html",
  );
}

/** A product job for a pool read directly, and a small body for it. */
const job = (url: string) => ({
  parser: "product" as const,
  url,
  marketplace: "US",
  status: 200,
  contentType: "text/html",
  wantLocation: false,
});
const body = () => new TextEncoder().encode("<html><body>page</body></html>");

async function used(rig: Rig): Promise<number> {
  return (await rig.call("/v1/usage")).body.requests_used as number;
}

Deno.test("PARSE_WORKERS: workers answer exactly what inline reading answers, block retries and postcodes included", async () => {
  const calls = [
    "/v1/products/details?asin=B07H57DNVV",
    "/v1/products/search?query=katzenfutter&marketplace=DE",
    "/v1/products/reviews?asin=B0BBPNPZTC",
    "/v1/utility/asin-to-gtin?asin=B07H57DNVV",
    "/v1/scrape?url=https://www.amazon.com/dp/B07H57DNVV",
  ];
  const answers: unknown[][] = [];
  for (const reader of [undefined, new PagePool({ size: 2 })]) {
    await using rig = await startRig({ reader });
    pages(rig, "B07H57DNVV");
    const got: unknown[] = [];
    for (const path of calls) {
      const r = await rig.call(path);
      assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.body)}`);
      got.push(r.body);
    }
    // A robot check read on a worker is still retried with a fresh session.
    rig.fake.fail("robot", 1, "/dp/");
    const retried = await rig.call("/v1/products/details?asin=B07H57DNVV");
    assert.equal(retried.status, 200);
    assert.equal(rig.fake.injected.robot, 1);
    // The postcode the page shows is read in the same pass.
    rig.fake.shownLocation = "Paris 75001";
    const mismatch = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001");
    assert.equal(mismatch.status, 502, JSON.stringify(mismatch.body));
    assert.match(JSON.stringify(mismatch.body), /Delivery location mismatch.*Paris 75001/);
    answers.push(got);
  }
  assert.deepEqual(answers[1], answers[0]);
});

Deno.test("a page worker that crashes fails that call uncharged (502) and is replaced", async () => {
  const pool = new PagePool({ size: 1, workerUrl: FAULTY });
  await using rig = await startRig({ reader: pool });
  pages(rig, "B0CRASH000", "B07H57DNVV");
  const before = await used(rig);
  const crashed = await rig.call("/v1/products/details?asin=B0CRASH000");
  assert.equal(crashed.status, 502, JSON.stringify(crashed.body));
  assert.equal(crashed.headers.get("x-credits-cost"), "0");
  assert.equal(await used(rig), before);
  assert.equal(pool.replaced, 1);
  const next = await rig.call("/v1/products/details?asin=B07H57DNVV");
  assert.equal(next.status, 200);
  assert.equal(await used(rig), before + 1);
});

Deno.test("a stuck page worker is abandoned after the timeout: 502 uncharged, the next call is served", async () => {
  // A thread stuck for good is waited for drainMs before its slot gets a new worker.
  const pool = new PagePool({ size: 1, workerUrl: FAULTY, timeoutMs: 1_000, drainMs: 200 });
  await using rig = await startRig({ reader: pool });
  pages(rig, "B0HANG0000", "B07H57DNVV");
  const before = await used(rig);
  const stuck = await rig.call("/v1/products/details?asin=B0HANG0000");
  assert.equal(stuck.status, 502, JSON.stringify(stuck.body));
  assert.match(String((stuck.body.error as { message: string }).message), /longer than 1000 ms/);
  assert.equal(stuck.headers.get("x-credits-cost"), "0");
  assert.equal(pool.replaced, 1);
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV")).status, 200);
  assert.equal(await used(rig), before + 1);
});

Deno.test("a full page queue refuses at once with 503 upstream_busy and Retry-After, uncharged; queued calls go on", async () => {
  const pool = new PagePool({
    size: 1,
    workerUrl: FAULTY,
    timeoutMs: 1_500,
    queueLimit: 1,
    drainMs: 200,
  });
  await using rig = await startRig({ reader: pool });
  pages(rig, "B0HANG0000", "B07H57DNVV", "B000000001");
  const before = await used(rig);
  const stuck = rig.call("/v1/products/details?asin=B0HANG0000");
  while (rig.fake.pageRequests("/dp/B0HANG0000") === 0) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 50));
  const queued = rig.call("/v1/products/details?asin=B07H57DNVV");
  while (pool.queued === 0) await new Promise((r) => setTimeout(r, 5));
  const refused = await rig.call("/v1/products/details?asin=B000000001");
  assert.equal(refused.status, 503, JSON.stringify(refused.body));
  assert.equal((refused.body.error as { code: string }).code, "upstream_busy");
  assert.equal(refused.headers.get("retry-after"), "1");
  assert.equal(refused.headers.get("x-credits-cost"), "0");
  assert.equal((await stuck).status, 502);
  assert.equal((await queued).status, 200);
  assert.equal(await used(rig), before + 1);
});

Deno.test("the page queue holds exactly queueLimit waiting jobs: the next one is refused at once with 503 upstream_busy (probe GP, PP1)", async () => {
  // Each account's own bound well above the queue's, so that only the queue's bound refuses.
  const pool = new PagePool({ size: 1, workerUrl: FAULTY, queueLimit: 3, ownerLimit: 10 });
  try {
    const url = "https://www.amazon.com/dp/PAUSE0";
    const atWorker = pool.read(job(url), body(), undefined, "a");
    await new Promise((r) => setTimeout(r, 50)); // it has left the queue for the worker
    // Four more, each of its own account, sent at once: three wait, the fourth is refused.
    const reads = ["b", "c", "d", "e"].map((owner) =>
      pool.read(job(url), body(), undefined, owner)
    );
    const settled = Promise.allSettled([atWorker, ...reads]);
    assert.equal(pool.queued, 3, "three jobs waiting, queueLimit");
    const results = await settled;
    assert.deepEqual(
      results.map((r) => r.status === "fulfilled" ? "read" : r.reason.code),
      ["read", "read", "read", "read", "upstream_busy"],
    );
    assert.equal((results[4] as PromiseRejectedResult).reason.status, 503);
  } finally {
    pool.close();
  }
});

Deno.test("PARSE_WORKERS: the number of cores unless set, 0 for inline, anything else refused", () => {
  const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });
  assert.equal(loadConfig(env({})).parseWorkers, navigator.hardwareConcurrency);
  assert.equal(loadConfig(env({ PARSE_WORKERS: "0" })).parseWorkers, 0);
  assert.equal(loadConfig(env({ PARSE_WORKERS: "3" })).parseWorkers, 3);
  for (const bad of ["-1", "1.5", "many", "257"]) {
    assert.throws(() => loadConfig(env({ PARSE_WORKERS: bad })), /PARSE_WORKERS/);
  }
});

Deno.test("a queued page job whose caller has given up leaves the queue at once; the worker is not kept busy with it", async () => {
  const pool = new PagePool({ size: 1, workerUrl: FAULTY, timeoutMs: 2_000 });
  try {
    const stuck = pool.read(job("https://www.amazon.com/dp/B0HANG0000"), body());
    stuck.catch(() => {});
    const caller = new AbortController();
    const queued = pool.read(job("https://www.amazon.com/dp/B000000001"), body(), caller.signal);
    queued.catch(() => {});
    await new Promise((r) => setTimeout(r, 50)); // the first job has reached the worker
    assert.equal(pool.queued, 1);
    caller.abort(new Error("the call's deadline passed"));
    await assert.rejects(queued, /deadline passed/);
    assert.equal(pool.queued, 0, "the abandoned job is out of the queue");
    await assert.rejects(stuck, /longer than 2000 ms/);
  } finally {
    pool.close();
  }
});

Deno.test("a timed-out worker's slot gets a new worker only once the old thread has stopped reading", async () => {
  // A job's time includes its worker's loading when the worker is new (the first here, and the
  // one that replaces it): at 300 ms, CI beside other work timed one of them out. 1 s still ends
  // the 3 s job with 2 s to look at the old thread while it reads.
  const pool = new PagePool({ size: 1, workerUrl: FAULTY, timeoutMs: 1_000, drainMs: 10_000 });
  try {
    // The worker loaded first: one still loading when the job timed out was not yet busy with
    // it, so it was replaced at once (a loaded machine found no job waiting).
    await pool.read(job("https://www.amazon.com/dp/B000000002"), body());
    await assert.rejects(
      pool.read(job("https://www.amazon.com/dp/B0SLOW0000"), body()),
      /longer than 1000 ms/,
    );
    const next = pool.read(job("https://www.amazon.com/dp/B000000001"), body());
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(pool.queued, 1, "no second thread starts beside the busy one");
    assert.equal(pool.draining, 1, "the old thread still reads its page");
    await next; // served once the old thread stopped (3 s in)
    assert.equal(pool.draining, 0);
    assert.equal(pool.replaced, 1);
  } finally {
    pool.close();
  }
});

Deno.test("identical calls sharing one 503 answer each get an uncharged 503 upstream_blocked, and the process lives on", async () => {
  // The calls share one fetch; a 503's body was then handed to the pool once per call, and the
  // first transfer detached it for the others: a DataCloneError thrown from a worker's message
  // handler ended the process (probe AA).
  const pool = new PagePool({ size: 1 });
  await using rig = await startRig({ reader: pool, browser: { retries: 0 } });
  rig.fake.page("https://www.amazon.com/dp/B0AAAAAAA1", {
    status: 503,
    html: "<html><head><title>Service Unavailable</title></head><body>busy</body></html>",
  });
  pages(rig, "B07H57DNVV");
  // Answered after 300 ms, so that all three calls join the one fetch however slow the machine.
  rig.fake.delayMs = 300;
  const answers = await Promise.all(
    [1, 2, 3].map(() => rig.call("/v1/products/details?asin=B0AAAAAAA1")),
  );
  rig.fake.delayMs = 0;
  for (const r of answers) {
    assert.equal(r.status, 503, JSON.stringify(r.body));
    assert.equal((r.body.error as { code: string }).code, "upstream_blocked");
    assert.equal(r.headers.get("x-credits-cost"), "0");
  }
  assert.equal(rig.fake.pageRequests("/dp/B0AAAAAAA1"), 1, "one shared fetch");
  assert.equal(await used(rig), 0);
  const after = await rig.call("/v1/products/details?asin=B07H57DNVV");
  assert.equal(after.status, 200, "the pool still reads pages");
});

Deno.test("a body whose buffer was already handed to a worker fails its read with a 502, and the pool reads on", async () => {
  const pool = new PagePool({ size: 1 });
  try {
    const url = "https://www.amazon.com/dp/B07H57DNVV";
    const page = body();
    // The one worker reads a first page; both reads of `page` queue behind it. The first of them
    // takes its buffer to the worker, and the second's turn comes in the worker's message handler.
    const [a, b, c] = await Promise.allSettled([
      pool.read(job(url), body()),
      pool.read(job(url), page),
      pool.read(job(url), page),
    ]);
    assert.equal(a.status, "fulfilled");
    assert.equal(b.status, "fulfilled");
    assert.equal(c.status, "rejected");
    assert.equal((c.reason as { status: number }).status, 502);
    assert.equal((c.reason as { code: string }).code, "upstream_error");
    // Handed over once the buffer is gone: refused as it is asked for.
    await assert.rejects(pool.read(job(url), page), (e: { code?: string }) => {
      assert.equal(e.code, "upstream_error");
      return true;
    });
    const next = await pool.read(job("https://www.amazon.com/dp/B07H57DNVV"), body());
    assert.ok(next.detection, "a later page is read");
  } finally {
    pool.close();
  }
});

Deno.test("accounts' pages take turns for the workers: one account's queue delays another's page by one job, not by the whole queue", async () => {
  const pool = new PagePool({ size: 1, workerUrl: FAULTY });
  try {
    const done: string[] = [];
    const read = (owner: string, name: string) =>
      pool.read(job(`https://www.amazon.com/dp/PAUSE${name}`), body(), undefined, owner)
        .then(() => void done.push(name));
    const first = ["a1", "a2", "a3", "a4"].map((n) => read("account-a", n));
    await new Promise((r) => setTimeout(r, 50)); // a1 is at the worker, a2-a4 wait
    const other = read("account-b", "b1");
    await Promise.all([...first, other]);
    // Account A's turn came first (a2 waited before b1 came), then B's, then A's again: first come,
    // first served, b1 came last, after 0.8 s of account A's pages.
    assert.deepEqual(done, ["a1", "a2", "b1", "a3", "a4"]);
  } finally {
    pool.close();
  }
});

Deno.test("one account's waiting pages are bounded: past them its reads are refused with 503 upstream_busy", async () => {
  const pool = new PagePool({ size: 1, workerUrl: FAULTY, queueLimit: 8, ownerLimit: 2 });
  try {
    const url = "https://www.amazon.com/dp/PAUSE0";
    const reads = [1, 2, 3, 4].map(() => pool.read(job(url), body(), undefined, "account-a"));
    // One at the worker, two waiting: the fourth is over the account's share.
    const results = await Promise.allSettled(reads);
    assert.deepEqual(results.map((r) => r.status), [
      "fulfilled",
      "fulfilled",
      "fulfilled",
      "rejected",
    ]);
    const refused = (results[3] as PromiseRejectedResult).reason;
    assert.equal(refused.status, 503);
    assert.equal(refused.code, "upstream_busy");
    assert.equal(refused.headers["Retry-After"], "1");
  } finally {
    pool.close();
  }
});

Deno.test("waiting bodies are bounded in bytes, and past half of the bound each account waits within its share", async () => {
  // 1,000,000 bytes in all; past 500,000, an account's waiting bodies at most 250,000.
  const pool = new PagePool({
    size: 1,
    workerUrl: FAULTY,
    queueLimit: 16,
    waitingBytes: 1_000_000,
  });
  try {
    const url = "https://www.amazon.com/dp/PAUSE0";
    const read = (owner: string, bytes: number) =>
      pool.read(job(url), new Uint8Array(bytes), undefined, owner);
    const atWorker = read("a", 10);
    await new Promise((r) => setTimeout(r, 50)); // it has left the queue for the worker
    const reads = [
      read("c", 200_000), // 200,000 waiting
      read("c", 200_000), // 400,000: under half, account c may pass its share
      read("c", 200_000), // 600,000: past half, and c would hold 600,000: refused
      read("d", 200_000), // 600,000: past half, d within its share
      read("d", 200_000), // 800,000: d would hold 400,000: refused
      read("e", 200_000), // 800,000: past the last quarter, kept for single pages: refused
      read("e", 50_000), // 650,000: one page of at most a sixteenth goes in the reserve
      read("f", 400_000), // 1,050,000: over the bound: refused
    ];
    const results = await Promise.allSettled([atWorker, ...reads]);
    assert.deepEqual(
      results.slice(1).map((r) => r.status === "fulfilled" ? "read" : r.reason.code),
      [
        "read",
        "read",
        "upstream_busy",
        "read",
        "upstream_busy",
        "upstream_busy",
        "read",
        "upstream_busy",
      ],
    );
  } finally {
    pool.close();
  }
});

Deno.test("by default one account may hold half the page queue: it cannot fill it, and another account's page is still taken (probe GT, PP3)", async () => {
  // No ownerLimit given: the default share, half of queueLimit (2 of 4).
  const pool = new PagePool({ size: 1, workerUrl: FAULTY, queueLimit: 4 });
  try {
    const url = "https://www.amazon.com/dp/PAUSE0";
    const atWorker = Promise.allSettled([pool.read(job(url), body(), undefined, "a")]);
    await new Promise((r) => setTimeout(r, 50)); // it has left the queue for the worker
    // Account a's burst: two wait, the rest are over its share.
    const burst = Promise.allSettled(
      [1, 2, 3, 4].map(() => pool.read(job(url), body(), undefined, "a")),
    );
    // The refused ones leave the queue as they are refused (within the same turn of the event
    // loop): a timer later, account a holds two of the queue's four places, and b comes.
    await new Promise((r) => setTimeout(r, 0));
    const waitingThen = pool.queued;
    const other = Promise.allSettled([pool.read(job(url), body(), undefined, "b")]);
    const results = [...await atWorker, ...await burst, ...await other];
    assert.deepEqual(
      results.map((r) => r.status === "fulfilled" ? "read" : r.reason.code),
      ["read", "read", "read", "upstream_busy", "upstream_busy", "read"],
    );
    assert.equal(waitingThen, 2, "account a waited in half the queue, no more");
  } finally {
    pool.close();
  }
});

Deno.test("the real page worker marks its thread busy while it reads a page, and not busy after, also when the read throws (probe HA W1, W2)", async () => {
  // PagePool tells a timed-out thread still reading (drained) from one that has stopped (replaced
  // at once) by this flag; the real worker, not FAULTY, which keeps a flag of its own.
  const worker = new Worker(new URL("../upstream/page_worker.ts", import.meta.url).href, {
    type: "module",
  });
  const errors: string[] = [];
  worker.onerror = (e) => {
    e.preventDefault();
    errors.push(e.message);
  };
  const answers: { id: number }[] = [];
  let answered: () => void = () => {};
  worker.onmessage = (e) => {
    answers.push(e.data);
    answered();
  };
  const busy = new SharedArrayBuffer(4);
  const flag = new Int32Array(busy);
  const page = (name: string) => fixtureBytes(name).then((b) => b.slice().buffer);
  const post = (id: number, job: unknown, buffer: ArrayBuffer) => {
    const got = new Promise<void>((r) => answered = r);
    worker.postMessage({ id, job, buffer, busy }, [buffer]);
    return got;
  };
  const notBusySoon = async (what: string) => {
    // The flag is cleared right after the answer is posted, in the worker's own thread.
    for (let i = 0; i < 200 && Atomics.load(flag, 0) !== 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(Atomics.load(flag, 0), 0, `not busy after ${what}`);
  };
  try {
    // A first page, awaited: the worker has loaded, and its thread is not busy after the read.
    await post(1, job("https://www.amazon.com/dp/B07H57DNVV"), await page(PRODUCT));
    assert.equal(answers.length, 1);
    await notBusySoon("a page");
    // A 3 MB page: watched from this thread while the worker reads it, the flag is seen set.
    const big = await page("product/amazon.com__metascraper-B0057OC5O8.html");
    const read = post(2, job("https://www.amazon.com/dp/B0057OC5O8"), big);
    let sawBusy = false;
    const until = Date.now() + 4_000;
    while (answers.length < 2 && Date.now() < until) {
      if (Atomics.load(flag, 0) === 1) {
        sawBusy = true;
        break;
      }
    }
    assert.ok(sawBusy, "busy while reading");
    await read;
    await notBusySoon("a second page");
    // A job whose read throws (no job at all): the thread is not left marked busy.
    Atomics.store(flag, 0, 0);
    worker.postMessage({ id: 3, job: null, buffer: new ArrayBuffer(8), busy });
    for (let i = 0; i < 200 && errors.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(errors.length, 1, "the read threw");
    await notBusySoon("a read that threw");
  } finally {
    worker.terminate();
  }
});

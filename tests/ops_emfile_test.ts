/**
 * Clients that hold every file descriptor the process may open (idle connections, which anyone
 * can hold: Deno.serve times none out) make accepting fail, and Deno.serve ends its listener.
 * core/supervised_serve.ts listens again; here, what that must not break: the connections the
 * first listener accepted are still served, a stop waits for their calls, and no page worker is
 * started while descriptors are short (Deno cannot start a worker's thread then, and panics).
 * Shelf runs as a child process with a low descriptor limit, as a unit file would set one.
 */
import assert from "node:assert/strict";
import { FakeMarketplace } from "./fake_marketplace.ts";
import { type ShelfProcess, spawnShelf } from "./proof/shelf_process.ts";
import { createAccount } from "./proof/admin_client.ts";

const TOKEN = `emfile-${crypto.randomUUID()}`;
const FIXTURE = "product/amazon.com__app-B07H57DNVV.html";

/** One HTTP/1.1 exchange on a connection kept open for the next. */
async function exchange(conn: Deno.Conn, path: string, key?: string): Promise<string> {
  const head = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${
    key ? `x-api-key: ${key}\r\n` : ""
  }\r\n`;
  await conn.write(new TextEncoder().encode(head));
  const buf = new Uint8Array(256 * 1024);
  let text = "";
  for (;;) {
    const n = await conn.read(buf);
    if (n === null) return text; // closed by the server
    text += new TextDecoder().decode(buf.subarray(0, n));
    const end = text.indexOf("\r\n\r\n");
    if (end < 0) continue;
    const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? NaN);
    if (text.length >= end + 4 + length) return text;
  }
}

/** Opens connections until the server stops accepting them; the ones it took. */
async function holdEveryDescriptor(port: number): Promise<Deno.Conn[]> {
  const held: Deno.Conn[] = [];
  for (let failures = 0; failures < 5 && held.length < 2_000;) {
    try {
      held.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    } catch {
      failures++;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return held;
}

interface LimitedShelf {
  shelf: ShelfProcess;
  fake: FakeMarketplace;
  key: string;
  port: number;
  /** A connection accepted before anything else happened, kept open. */
  old: Deno.Conn;
  /** Connections closed when the test ends (held ones are pushed here). */
  conns: Deno.Conn[];
}

/**
 * Shelf with `ulimit -n 256` over the fake marketplace serving one product page, a paid key, and
 * one connection accepted first; everything is closed and removed after `test`.
 */
async function withLimitedShelf(
  settings: Record<string, string>,
  test: (s: LimitedShelf) => Promise<void>,
): Promise<void> {
  await using fake = new FakeMarketplace();
  fake.page("https://www.amazon.com/dp/B07H57DNVV", FIXTURE);
  const dir = await Deno.makeTempDir();
  const shelf = await spawnShelf({
    KV_PATH: `${dir}/emfile.kv`,
    UPSTREAM: fake.upstream,
    ADMIN_TOKEN: TOKEN,
    RESULT_CACHE: "off",
    ...settings,
  }, { fileLimit: 256 });
  const conns: Deno.Conn[] = [];
  try {
    const { key } = await createAccount(shelf.url, TOKEN, "growth");
    const port = Number(new URL(shelf.url).port);
    const old = await Deno.connect({ hostname: "127.0.0.1", port });
    conns.push(old);
    assert.match(await exchange(old, "/healthz"), /^HTTP\/1\.1 200/);
    await test({ shelf, fake, key, port, old, conns });
  } finally {
    for (const c of conns) {
      try {
        c.close();
      } catch { /* closed */ }
    }
    await shelf.stop("SIGKILL").catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

Deno.test("after clients held every descriptor, a stop still waits for calls on connections accepted before, and they are answered", async () => {
  await withLimitedShelf(
    { DRAIN_SECONDS: "10" },
    async ({ shelf, fake, key, port, old, conns }) => {
      const held = await holdEveryDescriptor(port);
      conns.push(...held);
      await new Promise((r) => setTimeout(r, 300));
      for (const c of held) c.close();
      conns.length = 1;
      // Listening again once descriptors are free.
      let again = false;
      for (let i = 0; i < 100 && !again; i++) {
        again = await fetch(`${shelf.url}/healthz`).then(async (r) => {
          await r.body?.cancel();
          return r.ok;
        }, () => false);
        if (!again) await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(again, `listening again: ${shelf.logs().slice(-2_000)}`);
      assert.match(shelf.logs(), /listener_failed/, "the episode happened");

      fake.delayMs = 2_000;
      const call = exchange(old, "/v1/products/details?asin=B07H57DNVV", key);
      while (fake.pageRequests("/dp/") < 1) await new Promise((r) => setTimeout(r, 10));
      const code = await shelf.stop("SIGTERM");
      const answer = await call;
      assert.match(answer, /^HTTP\/1\.1 200/, `answered: ${answer.slice(0, 200)}`);
      assert.match(answer, /x-credits-cost: 1/i);
      assert.equal(code, 0, shelf.logs().slice(-2_000));
      assert.doesNotMatch(shelf.logs(), /panicked|Too many open files \(os error 24\)'/);
    },
  );
});

Deno.test("a fresh process's first paid call while clients hold nearly every descriptor is answered, and the process lives on", async () => {
  await withLimitedShelf({}, async ({ shelf, key, port, old, conns }) => {
    const held = await holdEveryDescriptor(port);
    conns.push(...held);
    // A few free: enough for the upstream request, too few for a worker's thread. Started for
    // this first page, the worker took the process down (Deno panics), the call charged.
    for (let i = 0; i < 3; i++) held.pop()!.close();
    const answer = await exchange(old, "/v1/products/details?asin=B07H57DNVV", key);
    assert.match(answer, /^HTTP\/1\.1 (200|50[23])/, `answered: ${answer.slice(0, 200)}`);
    for (const c of held) c.close();
    conns.length = 1;
    const after = await exchange(old, "/v1/", undefined);
    assert.match(after, /^HTTP\/1\.1 200/, "the process lives on");
    assert.doesNotMatch(shelf.logs(), /panicked/);
  });
});
